"""Gemini CLI chats: ``<gemini dir>/tmp/<project id>/{logs.json, chats/...}``.

Ground truth (gemini-cli v0.1 – v0.56; shared/ref/more-hosts.md §3, ``chatRecordingService.ts``):

- Era 1 (to v0.1.x) kept only ``logs.json``: the prompts, ``[{sessionId, messageId, type, message,
  timestamp}]``, rewritten whole. Prompts of a session that also has a chat file are read from the
  chat, not again from the log. (``/chat save`` checkpoints, ``{history: Content[]}``, are not read:
  no sample of them has been seen.)
- Eras 2–3 (v0.2 – v0.38): ``chats/session-<time>-<id8>.json``, one ``ConversationRecord`` rewritten
  whole on every change. Era 4 (v0.39+): ``session-<time>-<id8>.jsonl``, append-only: a metadata line,
  then message records, ``{"$set": {...}}`` metadata updates (a ``messages`` list replaces them all)
  and ``{"$rewindTo": id}``. A message is appended again, with the same id, each time it changes
  (tool status, tokens): the last copy wins (a ``$set`` checkpoint's copy only fills gaps).
  Subagents (v0.31+) write ``chats/<parent id>/<id>.json[l]``.
- Messages: ``user`` (``displayContent``, what the person typed, beats ``content``, what was sent),
  ``gemini`` (text, ``thoughts``, and ``toolCalls`` with their results inside), ``info`` / ``warning``
  / ``error`` (the CLI's own notes). Keys are message ids; tool calls and results use the call id. A
  resumed ``.json`` is copied whole into a new ``.jsonl`` beside it (the ``.json`` stays): both give
  the same session and keys, so the second read adds nothing.
- A rewind (``$rewindTo``, or an era 2–3 rewrite without the later messages) is not a deletion here:
  what was said stays stored, as a branch abandoned in Pi or Claude Code does, so an import before a
  rewind and one after it hold the same messages.
- The working directory is not stored; ``adapters._gemini_project`` recognises it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._files import SIDE_FILE_MAX_BYTES, open_regular, walk_files
from adapters._gemini_project import HOME_ENV, ProjectRoots, gemini_dir
from adapters._jsonl import (
    feed_records,
    parse_timestamp,
    scrub_object_surrogates,
    text_or_none,
    type_label,
)
from adapters._text import IMAGE_MARKER, result_text, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

HOST = "gemini"
LOGS = "logs.json"
_NOTE_TYPES = frozenset({"info", "warning", "error"})
_SNIFF_BYTES = 65_536


class GeminiAdapter:
    """Reads every Gemini CLI chat file; the adapter keeps each ``projects.json`` parsed for a run."""

    name = HOST
    env_vars = (HOME_ENV,)

    def __init__(self) -> None:
        self._roots = ProjectRoots()

    def locations(self) -> list[Path]:
        folder = gemini_dir()
        return [folder / "tmp"] if folder is not None else []

    def default_roots(self) -> list[Path]:
        return [folder for folder in self.locations() if folder.is_dir()]

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        """Chat files and prompt logs; a gemini dir (or a home holding one) stands for its ``tmp``."""
        for root in self.default_roots() if roots is None else roots:
            if root.is_file():
                yield root
                continue
            for base in (root / ".gemini" / "tmp", root / "tmp", root):
                if base.is_dir():
                    yield from _gemini_files(base)
                    break

    def claims(self, path: Path) -> bool:
        """A file in Gemini's layout (``logs.json``, ``chats/...``), or a chat by its ``projectHash``."""
        if _is_gemini_file(path):
            return True
        if not path.name.endswith((".json", ".jsonl")):
            return False
        try:
            with open_regular(path) as stream:
                head = stream.read(_SNIFF_BYTES)
        except OSError:
            return False
        return b'"projectHash"' in head and b'"sessionId"' in head

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        if path.name == LOGS:
            yield from self._read_logs(path, report)
            return
        record = _jsonl_record(path, report) if path.name.endswith(".jsonl") else _load_json(path, report)
        if isinstance(record, dict):
            transcript = self._transcript(path, record, options, report)
            if transcript is not None:
                yield transcript
        elif record is not None:
            report.skip("not_a_session", str(path))

    def _transcript(
        self, path: Path, record: dict[str, Any], options: ReadOptions, report: ParseReport
    ) -> Transcript | None:
        reader = _ChatReader(path, record, options, report)
        reader.read()
        session = reader.session
        project_hash = text_or_none(record.get("projectHash"))
        root = self._roots.root(path, project_hash, reader.paths)
        if root is not None:
            session.cwds[root] += 1
        return session.freeze()

    def _read_logs(self, path: Path, report: ParseReport) -> Iterator[Transcript]:
        """Era-1 prompts: one session per ``sessionId`` whose chat file (if any) is not beside them."""
        entries = _load_json(path, report)
        if not isinstance(entries, list):
            if entries is not None:
                report.skip("not_a_log", str(path))
            return
        recorded = _chat_ids(path.parent / "chats")
        sessions: dict[str, SessionDraft] = {}
        for index, entry in enumerate(entries):
            session_id = text_or_none(entry.get("sessionId")) if isinstance(entry, dict) else None
            text = text_or_none(entry.get("message")) if isinstance(entry, dict) else None
            if session_id is None or text is None:
                report.skip("bad_record", f"{path}: entry {index}")
                continue
            if session_id[:8] in recorded:
                continue
            session = sessions.setdefault(session_id, SessionDraft(HOST, session_id, str(path)))
            when = parse_timestamp(entry.get("timestamp"))
            session.touch(when)
            origin = Origin.INJECTED if text.lstrip().startswith("/") else Origin.HUMAN
            draft = Draft(f"log:{entry.get('messageId', index)}", Role.USER, origin, timestamp=when)
            draft.add(text)
            session.add(draft)
        root = self._roots.root(path, None) if sessions else None
        for session in sessions.values():
            if root is not None:
                session.cwds[root] += 1
            transcript = session.freeze()
            if transcript is not None:
                yield transcript


def _gemini_files(base: Path) -> Iterator[Path]:
    return walk_files(base, _is_gemini_file, frozenset({"checkpoints"}))


def _is_gemini_file(path: Path) -> bool:
    name = path.name
    if name == LOGS:
        return True
    in_chats = path.parent.name == "chats" or path.parent.parent.name == "chats"
    return in_chats and name.endswith((".json", ".jsonl"))


def _chat_ids(chats: Path) -> set[str]:
    """The 8-character session id prefixes that end the chat file names in ``chats/``."""
    try:
        names = [entry.name for entry in chats.iterdir()]
    except OSError:
        return set()
    return {name.rsplit(".", 1)[0][-8:] for name in names if name.startswith("session-")}


def _load_json(path: Path, report: ParseReport) -> Any:
    """A whole-file JSON document; None (counted) when it cannot be read or parsed."""
    try:
        with open_regular(path) as stream:
            data = stream.read(SIDE_FILE_MAX_BYTES + 1)
    except OSError as exc:
        report.skip("unreadable", f"{path}: {exc}")
        return None
    if len(data) > SIDE_FILE_MAX_BYTES:
        report.skip("oversized_file", str(path))
        return None
    report.lines_read += data.count(b"\n") + 1
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        report.skip("invalid_utf8", str(path))
    try:
        loaded = json.loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        report.skip("bad_json" if text.strip() else "empty_file", str(path))
        return None
    if "\\ud" in text.lower() and scrub_object_surrogates(loaded):
        report.skip("lone_surrogate", str(path))
    return loaded


def _jsonl_record(path: Path, report: ParseReport) -> dict[str, Any]:
    """Fold an append-only session into one record: metadata merged, the last copy of each message."""
    record: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}

    def fold(line_no: int, line: dict[str, Any]) -> None:
        if "$set" in line:
            update = line["$set"]
            if not isinstance(update, dict):
                raise TypeError("$set is not an object")
            for message in update.get("messages") or []:
                _keep(messages, message, checkpoint=True)
            record.update({k: v for k, v in update.items() if k != "messages"})
        elif "$rewindTo" in line:
            record["rewinds"] = record.get("rewinds", 0) + 1
        elif isinstance(line.get("id"), str) and "type" in line:
            _keep(messages, line)
        elif not record and "sessionId" in line:
            record.update({k: v for k, v in line.items() if k != "messages"})
            for message in line.get("messages") or []:
                _keep(messages, message)
        else:
            report.skip("unknown_record", f"{path}:{line_no}")

    feed_records(path, report, fold)
    record["messages"] = list(messages.values())
    return record


def _keep(messages: dict[str, dict[str, Any]], message: object, *, checkpoint: bool = False) -> None:
    """The last copy of a message wins and keeps the place its first copy had; a ``$set`` checkpoint
    only adds messages, since its copies may hold tool output the CLI has since masked."""
    if not isinstance(message, dict) or not isinstance(message.get("id"), str):
        raise TypeError("a message without an id")
    if not (checkpoint and message["id"] in messages):
        messages[message["id"]] = message


class _ChatReader:
    """One ``ConversationRecord`` into a session draft, collecting paths its tools touched."""

    def __init__(self, path: Path, record: dict[str, Any], options: ReadOptions, report: ParseReport) -> None:
        self.path = path
        self.record = record
        self.options = options
        self.report = report
        session_id = text_or_none(record.get("sessionId")) or path.stem
        self.session = SessionDraft(HOST, session_id, str(path))
        self.paths: list[str] = [d for d in record.get("directories") or [] if isinstance(d, str)]

    def read(self) -> None:
        record, session = self.record, self.session
        session.touch(parse_timestamp(record.get("startTime")))
        session.touch(parse_timestamp(record.get("lastUpdated")))
        summary = text_or_none(record.get("summary"))
        session.title = summary.strip() if summary and summary.strip() else None
        kind = text_or_none(record.get("kind"))
        session.meta.update(kind=kind, project_hash=text_or_none(record.get("projectHash")))
        nested = self.path.parent.parent.name == "chats"  # chats/<parent session id>/<id>.json[l]
        if nested:
            session.parent_external_id = self.path.parent.name
        if nested or kind == "subagent":
            session.agent_id = session.external_id
        messages = record.get("messages")
        for index, message in enumerate(messages if isinstance(messages, list) else []):
            where = f"{self.path}: message {index}"
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                self.report.skip("bad_record", where)
                continue
            try:
                self._message(message, where)
            except (AttributeError, TypeError, ValueError) as exc:
                self.report.skip("bad_record", f"{where}: {exc!r}")

    def _message(self, message: dict[str, Any], where: str) -> None:
        kind, key = type_label(message.get("type")), message["id"]
        when = parse_timestamp(message.get("timestamp"))
        self.session.touch(when)
        if kind == "user":
            shown = message.get("displayContent")
            origin = Origin.AGENT if self.session.agent_id else Origin.HUMAN  # a subagent's prompt
            self._text(key, Role.USER, origin, _content_text(shown or message.get("content")), when)
        elif kind == "gemini":
            self._gemini(key, message, when)
        elif kind in _NOTE_TYPES:
            draft = self._text(key, Role.SYSTEM, Origin.INJECTED, _content_text(message.get("content")), when)
            draft.meta["note"] = kind
        else:
            self.report.skip(f"unknown_type:{kind}", where)

    def _gemini(self, key: str, message: dict[str, Any], when: datetime | None) -> None:
        model = text_or_none(message.get("model"))
        if model:
            self.session.models[model] += 1
        text = _content_text(message.get("content"))
        self._text(key, Role.ASSISTANT, Origin.AGENT, text, when)
        if self.options.include_thinking:
            thoughts = [t for t in message.get("thoughts") or [] if isinstance(t, dict)]
            lines = [
                " ".join(str(t.get(k) or "") for k in ("subject", "description")).strip() for t in thoughts
            ]
            draft = Draft(f"{key}:thinking", Role.ASSISTANT, Origin.AGENT, MessageKind.THINKING, when)
            draft.add("\n\n".join(line for line in lines if line))
            self.session.add(draft)
        for call in message.get("toolCalls") or []:
            if isinstance(call, dict):
                self._tool(key, call, when)

    def _tool(self, key: str, call: dict[str, Any], when: datetime | None) -> None:
        call_id = text_or_none(call.get("id")) or f"{key}:{text_or_none(call.get('name'))}"
        name = text_or_none(call.get("name")) or "tool"
        args = call.get("args")
        if isinstance(args, dict):
            self.paths.extend(v for v in args.values() if isinstance(v, str) and v.startswith(("/", "\\")))
        call_when = parse_timestamp(call.get("timestamp")) or when
        draft = self._tool_draft(
            f"call:{call_id}", Role.ASSISTANT, Origin.AGENT, MessageKind.TOOL_CALL, call_when
        )
        draft.tool_name = name
        draft.add(tool_call_text(name, args))
        self.session.add(draft)
        output = _call_output(call)
        if output is None:
            return  # still running: the result arrives with a later copy of the message
        result = self._tool_draft(
            f"result:{call_id}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, call_when
        )
        result.tool_name = name
        result.meta.update(
            status=text_or_none(call.get("status")), agent_id=text_or_none(call.get("agentId"))
        )
        result.add(result_text(output))
        self.session.add(result)

    def _text(self, key: str, role: Role, origin: Origin, text: str, when: datetime | None) -> Draft:
        draft = Draft(key, role, origin, timestamp=when)
        draft.add(text)
        self.session.add(draft)
        return draft

    def _tool_draft(
        self, key: str, role: Role, origin: Origin, kind: MessageKind, when: datetime | None
    ) -> Draft:
        """Every tool call and result is cut to the one tool-text cap here."""
        return Draft(key, role, origin, kind, when, limit=self.options.tool_text_cap)


def _call_output(call: dict[str, Any]) -> str | None:
    """A finished call's output: its function responses, else what the CLI displayed; None if running."""
    results = call.get("result")
    texts = [
        _output_text(item["functionResponse"].get("response"))
        for item in (results if isinstance(results, list) else [])
        for item in ([item] if isinstance(item, dict) else [])
        if isinstance(item.get("functionResponse"), dict)
    ]  # fmt: skip
    if texts:
        return "\n".join(texts)
    shown = call.get("resultDisplay")
    if isinstance(shown, str) and shown.strip():
        return shown
    if isinstance(shown, dict):
        return _output_text(shown)
    return "" if call.get("status") in ("success", "error", "cancelled") else None


def _output_text(response: object) -> str:
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in ("output", "error", "fileDiff", "content", "llmContent"):
            value = response.get(key)
            if isinstance(value, str) and value.strip():
                return value if key != "error" else f"error: {value}"
        return json.dumps(response, ensure_ascii=False, sort_keys=True, default=str) if response else ""
    return "" if response is None else json.dumps(response, ensure_ascii=False, default=str)


def _content_text(content: object) -> str:
    """A string, or ``Part[]``: text parts joined, inline images as markers, files named."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and part.get("thought") is not True:
                parts.append(part["text"])
            elif isinstance(part.get("inlineData"), dict):
                mime = str(part["inlineData"].get("mimeType") or "")
                parts.append(IMAGE_MARKER if mime.startswith("image/") else "[file]")
            elif isinstance(part.get("fileData"), dict):
                parts.append(f"[file: {part['fileData'].get('fileUri') or ''}]".replace(": ]", "]"))
    return "\n".join(parts)


ADAPTER = GeminiAdapter()
