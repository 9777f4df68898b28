"""Pi coding agent sessions: ``<agent dir>/sessions/--<cwd>--/<ISO time>_<session id>.jsonl``.

Ground truth (pi 0.2x – 0.58; shared/ref/more-hosts.md §2, badlogic/pi-mono ``session-manager.ts``):

- The agent dir is ``$PI_CODING_AGENT_DIR`` (``~`` expanded), else ``~/.pi/agent``. ``--session-dir``
  puts files flat in another folder: pass that folder with ``--path``.
- Line 1 is a header ``{type: "session", version?, id, timestamp, cwd, parentSession?}``; every other
  line is an entry. Three file versions: v1 (no ``version``, entries without ids), v2 (entries carry
  ``id``/``parentId`` and form a tree: ``/tree`` branches from an older entry, all branches stay in
  the file), v3 (role ``hookMessage`` renamed ``custom``). Opening an older file in a newer pi
  migrates it **and rewrites the file in place**, giving every entry a new random id. So entry ids
  cannot be message keys: a key is built from what the rewrite keeps (the entry's and the message's
  timestamps, the role and the text), and tool calls and results use the model's call id. A rewritten
  file then reads as the same messages and writes nothing.
- Every entry is imported once, whichever branch it is on. ``compaction`` and ``branch_summary``
  entries hold model-written summaries (kept as compaction messages); ``custom_message`` is context an
  extension injected; ``custom``, ``label``, ``model_change`` and ``thinking_level_change`` carry no
  conversation. ``session_info`` names the session (the latest name wins).
- Real v1 files hold a line with two entries glued together and no newline between them (pi skipped
  it, and its migration then deleted it): the line is split and both entries are kept.
- ``/fork`` writes a new file whose header ``parentSession`` is the source file's path; its copied
  entries are that session's history as the fork saw it. The parent's session id is the uuid at the
  end of that file name.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._files import open_regular, walk_files
from adapters._jsonl import (
    feed_records,
    home_dir,
    line_timestamp,
    parse_timestamp,
    text_or_none,
    type_label,
)
from adapters._text import IMAGE_MARKER, result_text, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

HOST = "pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
_QUIET_ENTRIES = frozenset({"model_change", "thinking_level_change", "custom", "label"})
_SUMMARY_ENTRIES = {"compaction": "compaction", "branch_summary": "branch_summary"}
_INJECTED_ROLES = frozenset({"custom", "hookMessage"})  # hookMessage is the v1/v2 name of custom
_HEADER_BYTES = 65_536


class PiAdapter:
    name = HOST
    env_vars = (AGENT_DIR_ENV,)

    def locations(self) -> list[Path]:
        agent = agent_dir()
        return [agent / "sessions"] if agent is not None else []

    def default_roots(self) -> list[Path]:
        return [folder for folder in self.locations() if folder.is_dir()]

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        """Session files; an agent dir stands for its ``sessions/`` folder."""
        for root in self.default_roots() if roots is None else roots:
            if root.is_file():
                yield root
            else:
                yield from _session_files(root / "sessions" if (root / "sessions").is_dir() else root)

    def claims(self, path: Path) -> bool:
        """A ``.jsonl`` whose first line is Pi's header, ``{"type": "session", "id", "cwd", ...}``."""
        if not path.name.endswith(".jsonl"):
            return False
        try:
            with open_regular(path) as stream:
                header = json.loads(stream.readline(_HEADER_BYTES))
        except (OSError, ValueError, RecursionError):
            return False
        return isinstance(header, dict) and header.get("type") == "session" and "cwd" in header

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        transcript = _SessionReader(path, options, report).read()
        if transcript is not None:
            yield transcript


def agent_dir() -> Path | None:
    """``$PI_CODING_AGENT_DIR`` (``~`` expanded), else ``~/.pi/agent``; None when no home resolves."""
    configured = os.environ.get(AGENT_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    home = home_dir()
    return home / ".pi" / "agent" if home is not None else None


def _session_files(folder: Path) -> Iterator[Path]:
    return walk_files(folder, lambda path: path.name.endswith(".jsonl"))


def session_id_from_name(name: str) -> str:
    """``2026-01-05T10-00-00-000Z_<uuid>.jsonl`` → the uuid (the header's id); else the stem."""
    stem = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].removesuffix(".jsonl")
    return stem.rsplit("_", 1)[-1] if "_" in stem else stem


class _SessionReader:
    def __init__(self, path: Path, options: ReadOptions, report: ParseReport) -> None:
        self.path = path
        self.options = options
        self.report = report
        self.session = SessionDraft(HOST, session_id_from_name(path.name), str(path))
        self.header_seen = False
        self.tool_names: dict[str, str] = {}

    def read(self) -> Transcript | None:
        feed_records(self.path, self.report, self._entry, split_glued=True)
        return self.session.freeze()

    def _entry(self, line_no: int, entry: dict[str, Any]) -> None:
        kind = type_label(entry.get("type"))
        where = f"{self.path}:{line_no}"
        if kind == "session":
            self._header(entry, where)
            return
        if not self.header_seen:
            self.header_seen = True
            self.report.skip("missing_header", where)
        stamp = line_timestamp(entry.get("timestamp"), self.report, where)
        self.session.touch(stamp)
        if kind == "message":
            message = entry.get("message")
            if not isinstance(message, dict):
                raise ValueError("message entry without a message")
            self._message(entry, message, stamp, where)
        elif kind in _SUMMARY_ENTRIES:
            self._summary(entry, _SUMMARY_ENTRIES[kind], stamp)
        elif kind == "custom_message":
            self._text(entry, Role.USER, Origin.INJECTED, _content_text(entry.get("content")), stamp)
        elif kind == "session_info":
            name = text_or_none(entry.get("name"))
            if name and name.strip():
                self.session.title = name.strip()
        elif kind == "model_change":
            self._model(entry.get("modelId"))
        elif kind not in _QUIET_ENTRIES:
            self.report.skip(f"unknown_type:{kind}", where)

    def _header(self, header: dict[str, Any], where: str) -> None:
        if self.header_seen:
            self.report.skip("extra_header", where)
            return
        self.header_seen = True
        session = self.session
        session_id, cwd = text_or_none(header.get("id")), text_or_none(header.get("cwd"))
        if session_id:
            session.external_id = session_id
        if cwd:
            session.cwds[cwd] += 1
        session.touch(line_timestamp(header.get("timestamp"), self.report, where))
        parent = text_or_none(header.get("parentSession")) or text_or_none(header.get("branchedFrom"))
        if parent:
            session.parent_external_id = session_id_from_name(parent)
            session.meta["parent_session_file"] = parent
        version = header.get("version")
        session.meta["format_version"] = version if isinstance(version, int) else 1
        self._model(header.get("modelId"))

    def _model(self, model: object) -> None:
        if isinstance(model, str) and model:
            self.session.models[model] += 1

    # -- messages --------------------------------------------------------------------------------

    def _message(
        self, entry: dict[str, Any], message: dict[str, Any], stamp: datetime | None, where: str
    ) -> None:
        role = type_label(message.get("role"))
        when = parse_timestamp(message.get("timestamp")) or stamp
        if role == "user":
            self._text(entry, Role.USER, Origin.HUMAN, _content_text(message.get("content")), when)
        elif role == "assistant":
            self._assistant(entry, message, when)
        elif role == "toolResult":
            self._tool_result(message, when)
        elif role == "bashExecution":
            self._bash(entry, message, when)
        elif role in _INJECTED_ROLES:
            self._text(entry, Role.USER, Origin.INJECTED, _content_text(message.get("content")), when)
        else:
            self.report.skip(f"unknown_role:{role}", where)

    def _assistant(self, entry: dict[str, Any], message: dict[str, Any], when: datetime | None) -> None:
        self._model(message.get("model"))
        texts: list[str] = []
        thinking: list[str] = []
        for block in _blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "thinking" and block.get("redacted") is not True:
                thinking.append(str(block.get("thinking") or ""))
            elif kind == "toolCall":
                self._tool_call(block, when)
            elif kind == "image":
                texts.append(IMAGE_MARKER)
        meta = {"stop_reason": text_or_none(message.get("stopReason"))}
        key = self._text(entry, Role.ASSISTANT, Origin.AGENT, "\n\n".join(texts), when, meta)
        if self.options.include_thinking:
            draft = Draft(f"{key}:thinking", Role.ASSISTANT, Origin.AGENT, MessageKind.THINKING, when)
            draft.add("\n\n".join(thinking))
            self.session.add(draft)
        error = text_or_none(message.get("errorMessage"))
        if error and message.get("stopReason") in ("error", "aborted"):
            draft = Draft(f"{key}:error", Role.SYSTEM, Origin.INJECTED, timestamp=when)
            draft.add(f"error: {error}")
            self.session.add(draft)

    def _tool_call(self, block: dict[str, Any], when: datetime | None) -> None:
        call_id, name = text_or_none(block.get("id")), text_or_none(block.get("name")) or "tool"
        if call_id is None:
            raise ValueError("toolCall without an id")
        self.tool_names[call_id] = name
        draft = self._tool_draft(f"call:{call_id}", Role.ASSISTANT, Origin.AGENT, MessageKind.TOOL_CALL, when)
        draft.tool_name = name
        draft.add(tool_call_text(name, block.get("arguments")))
        self.session.add(draft)

    def _tool_result(self, message: dict[str, Any], when: datetime | None) -> None:
        call_id = text_or_none(message.get("toolCallId"))
        if call_id is None:
            raise ValueError("toolResult without a toolCallId")
        draft = self._tool_draft(f"result:{call_id}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, when)
        draft.tool_name = text_or_none(message.get("toolName")) or self.tool_names.get(call_id)
        draft.meta["is_error"] = True if message.get("isError") is True else None
        draft.add(result_text(_content_text(message.get("content"))))
        self.session.add(draft)

    def _bash(self, entry: dict[str, Any], message: dict[str, Any], when: datetime | None) -> None:
        """A ``!command`` the person ran in pi's prompt: their call, then its output."""
        command = str(message.get("command") or "")
        key = _key("bash", entry, message, command)
        call = self._tool_draft(f"{key}:call", Role.USER, Origin.HUMAN, MessageKind.TOOL_CALL, when)
        call.tool_name = "bash"
        call.add(tool_call_text("bash", {"command": command}))
        result = self._tool_draft(f"{key}:result", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, when)
        result.tool_name = "bash"
        result.meta["exit_code"] = (
            message.get("exitCode") if isinstance(message.get("exitCode"), int) else None
        )
        result.add(result_text(str(message.get("output") or "")))
        self.session.add(call)
        self.session.add(result)

    def _summary(self, entry: dict[str, Any], kind: str, when: datetime | None) -> None:
        self._text(
            entry, Role.USER, Origin.COMPACTION, str(entry.get("summary") or ""), when, {"entry": kind}
        )

    def _text(
        self,
        entry: dict[str, Any],
        role: Role,
        origin: Origin,
        text: str,
        when: datetime | None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Add one text message; returns its key (derived parts hang their keys off it)."""
        message = entry.get("message")
        key = _key(f"{role}/{origin}", entry, message if isinstance(message, dict) else {}, text)
        draft = Draft(key, role, origin, timestamp=when, meta=meta or {})
        draft.add(text)
        self.session.add(draft)
        return key

    def _tool_draft(
        self, key: str, role: Role, origin: Origin, kind: MessageKind, when: datetime | None
    ) -> Draft:
        """Every tool call and result is cut to the one tool-text cap here."""
        return Draft(key, role, origin, kind, when, limit=self.options.tool_text_cap)


def _key(prefix: str, entry: dict[str, Any], message: dict[str, Any], text: str) -> str:
    """A key that pi's migration rewrite keeps: entry and message times, the kind, and the text."""
    material = f"{entry.get('timestamp')}\x1f{message.get('timestamp')}\x1f{prefix}\x1f{text}"
    return f"{prefix}:" + hashlib.blake2b(material.encode("utf-8", "replace"), digest_size=10).hexdigest()


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _content_text(content: object) -> str:
    """Text and image blocks (user prompts, tool results, injected messages) as one text."""
    parts: list[str] = []
    for block in _blocks(content):
        if block.get("type") == "image":
            parts.append(IMAGE_MARKER)
        elif isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


ADAPTER = PiAdapter()
