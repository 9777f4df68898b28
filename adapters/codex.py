"""OpenAI Codex CLI rollouts: ``$CODEX_HOME/{sessions/YYYY/MM/DD,archived_sessions}/rollout-*.jsonl[.zst]``.

Ground truth (Codex 0.1x – 0.146; shared/ref/transcript-formats.md §4):

- One file per thread. Since Sept 2025 every line is an envelope ``{timestamp, type, payload}``
  (session_meta, turn_context, response_item, event_msg, compacted, and context records such as
  world_state). Earlier files start with a bare SessionMeta line (``id``, ``timestamp``) followed by
  bare ResponseItems; both eras go through one item handler. The first session_meta names the
  thread; later ones are copies written by forks and resumes. Idle rollouts are zstd-compressed.
- Most text is written twice, side by side: ``response_item/message`` (what the model saw) and
  ``event_msg/user_message`` / ``agent_message`` / ``agent_reasoning`` (what the UI showed; newer
  paginated threads use ``event_msg/item_completed``). The response item is kept; an event is kept
  only when no response item of its kind sits next to it (older or event-only threads).
- Codex injects context as ``developer`` messages and as ``user`` messages that have no event twin:
  environment context, AGENTS.md and user instructions, permission blocks. They are kept, marked
  INJECTED; a user message with a twin is the person's prompt.
- ``reasoning`` holds opaque ``encrypted_content`` (never kept) and plain summaries (kept only with
  ``include_thinking``). ``compacted`` holds a summary (kept as a compaction message) and a
  ``replacement_history`` that repeats earlier turns (not kept again).
- Records carry no ids. A message's key is a hash of its role and text (tool calls and outputs use
  their ``call_id``), with ``#n`` on the n-th repeat in the thread: a re-read yields the same keys,
  and a fork that copies its parent's history gives the copies the keys they have in the parent.
- ``turn_context`` names the model of each turn; ``session_meta`` gives the cwd, the git branch, the
  originator (``codex exec`` runs are flagged ``non_interactive``) and the parent of a fork or
  subagent thread.
- Thread names live in ``$CODEX_HOME/session_index.jsonl``: append-only ``{id, thread_name,
  updated_at}`` lines, the last one for an id wins. Codex resolves a name from this index alone
  (``codex-rs/core/src/rollout/session_index.rs``), so it is the name the user sees and it beats a
  ``thread_name_updated`` event in the rollout, which only stands in when the index has no entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._facts import tool_facts
from adapters._files import read_side_file, walk_files
from adapters._jsonl import (
    FileCache,
    existing_dirs,
    feed_records,
    home_dir,
    line_timestamp,
    parse_timestamp,
    scrub_surrogates,
    text_or_none,
    type_label,
)
from adapters._text import IMAGE_MARKER, result_text, tool_call_limit, tool_call_text
from adapters.base import ReadOptions, first_objects
from recall.transcript import MessageKind, Origin, ParseReport, Role, ToolCall, Transcript

HOST = "codex"
SESSION_INDEX = "session_index.jsonl"
_HOME_FOLDERS = ("sessions", "archived_sessions")  # the folders a Codex home keeps rollouts in
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
)
_REQUEST_MARKER = "## My request for Codex:"  # older IDE prompts: injected context, then the request
_CONTEXT_RECORDS = frozenset(
    {
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "security_risk_score",
        "realtime_item",
    }
)
_CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "tool_call",
    }
)
_OUTPUT_TYPES = frozenset(
    {"function_call_output", "custom_tool_call_output", "function_result", "tool_result"}
)
_QUIET_ITEMS = frozenset({"ghost_snapshot", "compaction", "tool_search_output"})
_QUIET_EVENTS = frozenset(
    {
        "token_count",
        "task_started",
        "task_complete",
        "turn_aborted",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "undo_completed",
        "thread_settings_applied",
        "thread_goal_updated",
        "error",
        "agent_reasoning_raw_content",
        "exec_command_end",
        "patch_apply_end",
        "mcp_tool_call_end",
        "web_search_end",
        "view_image_tool_call",
        "collab_agent_spawn_end",
        "collab_waiting_end",
        "collab_close_end",
        "collab_agent_interaction_end",
        "sub_agent_activity",
        "guardian_assessment",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "image_generation_end",
        "turn.completed",
        "account/rateLimits/updated",
    }
)
_DEFAULT_TOOL_NAMES = {
    "local_shell_call": "shell",
    "web_search_call": "web_search",
    "tool_search_call": "tool_search",
    "image_generation_call": "image_generation",
}
_USER, _ASSISTANT, _REASONING = "user", "assistant", "reasoning"  # classes of text written twice


class CodexAdapter:
    """Reads Codex CLI rollout files of every era, plain or zstd-compressed.

    The adapter object lives for a whole import, so it keeps the parsed ``session_index.jsonl`` of
    each Codex home it meets (re-read only when the file's size or mtime changes): naming a thousand
    rollouts costs one read of the index, not a thousand.
    """

    name = HOST

    def __init__(self) -> None:
        self._indexes: FileCache[SessionIndex] = FileCache(load_session_index)

    env_vars = ("CODEX_HOME",)

    def locations(self) -> list[Path]:
        home = configured_home()
        return [home / folder for folder in _HOME_FOLDERS] if home is not None else []

    def default_roots(self) -> list[Path]:
        return existing_dirs(self.locations())

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        """Rollouts; a name met twice (plain beside ``.zst``, or also archived) is read once, first wins."""
        seen: set[str] = set()
        for root in _expand_roots(self.default_roots() if roots is None else roots):
            for path in walk_files(root, _is_rollout):
                name = path.name.removesuffix(".zst")
                if name not in seen:
                    seen.add(name)
                    yield path

    def claims(self, path: Path) -> bool:
        """A rollout by its name, or JSONL whose lines are Codex's ``{timestamp, type, payload}``."""
        if _is_rollout(path):
            return True
        if not path.name.endswith(".jsonl"):
            return False
        return any({"type", "payload"} <= obj.keys() for obj in first_objects(path))

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        """The rollout's thread, titled by ``session_index.jsonl`` when the index names it.

        Problems in the index are not counted in ``report``: they are not lines of this rollout, and
        with the index cached they would land on whichever rollout happened to be read first. They
        are kept in ``SessionIndex.skipped`` instead.
        """
        for transcript in _RolloutReader(path, options, report).transcripts():
            name = self.thread_name(path, transcript.external_id)
            yield transcript if name is None else replace(transcript, title=name)

    def thread_name(self, rollout: Path, thread_id: str) -> str | None:
        """The name the index gives ``thread_id``; None if no index names it (or the name was cleared).

        The index of the Codex home that holds the rollout is asked first (a copied or backed-up
        home keeps its own names), then the index of the home this machine's Codex uses
        (``$CODEX_HOME`` or ``~/.codex``), which also covers a rollout passed in from elsewhere.
        Thread ids are UUIDs, so a name found for one can only belong to that thread.
        """
        key = _index_key(thread_id)
        for index_path in session_index_paths(rollout):
            index = self._indexes.get(index_path)
            if index is not None and key in index.names:
                return index.names[key] or None
        return None


def configured_home() -> Path | None:
    """This machine's Codex home: ``$CODEX_HOME``, else ``~/.codex``; None when no home resolves."""
    configured = os.environ.get("CODEX_HOME", "").strip()
    if configured:
        return Path(configured).expanduser()
    user_home = home_dir()
    return user_home / ".codex" if user_home is not None else None


def session_index_paths(rollout: Path) -> list[Path]:
    """Where a rollout's thread name can be: its own Codex home's index, then the configured one's.

    A rollout's home is the folder holding the nearest ``sessions/`` or ``archived_sessions/`` above
    it (``sessions/YYYY/MM/DD/rollout-…``, the flat old layout and archived files alike).
    """
    homes: list[Path] = []
    for parent in Path(os.path.abspath(rollout)).parents:
        if parent.name in _HOME_FOLDERS:
            homes.append(parent.parent)
            break
    configured = configured_home()
    if configured is not None:
        homes.append(configured)
    seen: set[str] = set()
    paths: list[Path] = []
    for home in homes:
        ident = os.path.normcase(os.path.abspath(home))
        if ident not in seen:
            seen.add(ident)
            paths.append(home / SESSION_INDEX)
    return paths


@dataclass(frozen=True, slots=True)
class SessionIndex:
    """A parsed ``session_index.jsonl``: the last name per thread id ("" when the name was cleared),
    and the lines that were skipped, by reason (kept for diagnosis, never fatal)."""

    names: dict[str, str] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)


def load_session_index(path: Path) -> SessionIndex:
    """Parse an index the way Codex's own reader does, so both agree on every thread's name.

    Codex (``session_index.rs``) scans from the end and takes the first line that decodes as UTF-8
    and deserialises to ``{id, thread_name, updated_at}`` (all strings): a line that is not valid
    UTF-8, not JSON or not of that shape is passed over, so an earlier entry for the id still
    counts. A last line with no newline is still being appended: it counts only if it is already a
    whole entry, otherwise it is skipped as ``torn_line`` and read on a later import. Nothing here
    raises; an unreadable or oversized file gives an empty index.
    """
    index = SessionIndex()
    data = read_side_file(path)
    if data is None:
        index.skipped["unreadable"] += 1  # or larger than any real index
        return index
    lines = data.split(b"\n")
    unfinished = lines.pop()  # b"" when the file ends with a newline, as every complete index does
    for number, raw in enumerate(lines, start=1):
        problem = _read_index_line(index.names, raw, first=number == 1)
        if problem is not None:
            index.skipped[problem] += 1
    if unfinished.strip() and _read_index_line(index.names, unfinished, first=not lines) is not None:
        index.skipped["torn_line"] += 1
    return index


def _read_index_line(names: dict[str, str], raw: bytes, *, first: bool) -> str | None:
    """Record one index line's name in ``names``; the reason when Codex would pass the line over."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    if first:
        text = text.removeprefix("\ufeff")
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return "bad_json"
    if not isinstance(entry, dict):
        return "bad_entry"
    thread_id, name, updated_at = entry.get("id"), entry.get("thread_name"), entry.get("updated_at")
    if not (
        isinstance(thread_id, str) and thread_id and isinstance(name, str) and isinstance(updated_at, str)
    ):
        return "bad_entry"
    if scrub_surrogates(thread_id + name) != thread_id + name:
        return "lone_surrogate"  # serde rejects lone surrogate escapes, and SQLite cannot store them
    names[_index_key(thread_id)] = name.strip()
    return None


def _index_key(thread_id: str) -> str:
    """A thread id in one spelling: Codex compares parsed UUIDs, so case and braces do not matter."""
    try:
        return str(uuid.UUID(thread_id))
    except ValueError:
        return thread_id


def _expand_roots(roots: Sequence[Path]) -> Iterator[Path]:
    """A Codex home stands for its ``sessions/`` and then its ``archived_sessions/``."""
    for root in roots:
        if (root / "sessions").is_dir():
            yield root / "sessions"
            if (root / "archived_sessions").is_dir():
                yield root / "archived_sessions"
        else:
            yield root


def _is_rollout(path: Path) -> bool:
    return path.name.startswith("rollout-") and path.name.endswith((".jsonl", ".jsonl.zst"))


def _thread_id_from_name(path: Path) -> str:
    """``rollout-<local time>-<uuid>.jsonl[.zst]`` → the uuid, which equals the thread id."""
    stem = path.name.removesuffix(".zst").removesuffix(".jsonl")
    try:
        return str(uuid.UUID(stem[-36:]))
    except ValueError:
        return stem


@dataclass(slots=True, eq=False)
class _Item:
    """A draft in file order; ``kind`` is its twin class (user/assistant/reasoning) or None."""

    draft: Draft
    base_key: str
    kind: str | None = None
    from_event: bool = False
    paired: bool = False
    dropped: bool = False


class _RolloutReader:
    def __init__(self, path: Path, options: ReadOptions, report: ParseReport) -> None:
        self.path = path
        self.options = options
        self.report = report
        self.session = SessionDraft(HOST, _thread_id_from_name(path), str(path))
        self.items: list[_Item] = []
        self.twin_slot: _Item | None = None  # the last text record, waiting for its twin
        self.has_user_events = False
        self.meta_seen = False
        self.meta_cwd: str | None = None
        self.turn_cwds: Counter[str] = Counter()
        self.tool_names: dict[str, str] = {}
        self.records: dict[str, Callable[[int, dict[str, Any], datetime | None], None]] = {
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "response_item": self._response_item,
            "event_msg": self._event,
            "compacted": self._compacted,
        }

    def transcripts(self) -> Iterator[Transcript]:
        feed_records(self.path, self.report, self._record)
        transcript = self._finish()
        if transcript is not None:
            yield transcript

    def _record(self, line_no: int, record: dict[str, Any]) -> None:
        kind, payload = record.get("type"), record.get("payload")
        if isinstance(kind, str) and "payload" in record:  # envelope era
            if not isinstance(payload, dict):
                self.report.skip("bad_record", f"{self.path}:{line_no}: {kind} payload is not an object")
                return
            when = line_timestamp(record.get("timestamp"), self.report, f"{self.path}:{line_no}")
            self.session.touch(when)
            handler = self.records.get(kind)
            if handler is not None:
                handler(line_no, payload, when)
            elif kind not in _CONTEXT_RECORDS:
                self.report.skip(f"unknown_type:{kind}", f"{self.path}:{line_no}")
            return
        when = line_timestamp(
            record.get("timestamp", record.get("created_at")), self.report, f"{self.path}:{line_no}"
        )
        self.session.touch(when)
        if kind is None and "id" in record and not self.meta_seen:
            self._session_meta(line_no, record, when)
        elif "record_type" in record:  # bare-era state snapshots
            return
        elif kind is None and "role" in record:
            self._message(line_no, record, when)
        elif isinstance(kind, str):
            self._response_item(line_no, record, when)
        else:
            self.report.skip(f"unknown_type:{type_label(kind)}", f"{self.path}:{line_no}")

    # -- records ---------------------------------------------------------------------------------

    def _session_meta(self, line_no: int, meta: dict[str, Any], when: datetime | None) -> None:
        if self.meta_seen:
            return
        self.meta_seen = True
        session = self.session
        if isinstance(meta.get("id"), str) and meta["id"]:
            session.external_id = meta["id"]
        session.touch(parse_timestamp(meta.get("timestamp")))
        if isinstance(meta.get("cwd"), str) and meta["cwd"]:
            self.meta_cwd = meta["cwd"]
        git = _dict(meta.get("git"))
        if isinstance(git.get("branch"), str) and git["branch"]:
            session.branches[git["branch"]] += 1
        source = meta.get("source")
        spawn = _thread_spawn(source)
        for key in ("originator", "cli_version", "model_provider", "forked_from_id"):
            if isinstance(meta.get(key), str):
                session.meta[key] = meta[key]
        session.meta["source"] = (
            source if isinstance(source, str) else ("subagent" if spawn is not None else None)
        )
        session.meta["git_commit"] = git.get("commit_hash")
        session.meta["git_repository_url"] = git.get("repository_url")
        if meta.get("originator") == "codex_exec" or source == "exec":
            session.meta["non_interactive"] = True
        parent = (
            meta.get("forked_from_id")
            or meta.get("parent_thread_id")
            or (spawn or {}).get("parent_thread_id")
        )
        session.parent_external_id = parent if isinstance(parent, str) and parent else None
        if spawn is not None:
            agent = meta.get("agent_nickname") or meta.get("agent_path") or spawn.get("agent_path")
            session.agent_id = agent if isinstance(agent, str) and agent else session.external_id

    def _turn_context(self, line_no: int, context: dict[str, Any], when: datetime | None) -> None:
        cwd, model = context.get("cwd"), context.get("model")
        if isinstance(cwd, str) and cwd:
            self.turn_cwds[cwd] += 1
        if isinstance(model, str) and model:
            self.session.models[model] += 1

    def _response_item(self, line_no: int, item: dict[str, Any], when: datetime | None) -> None:
        kind = type_label(item.get("type"))
        if kind == "message":
            self._message(line_no, item, when)
        elif kind == "reasoning":
            self._reasoning(line_no, _reasoning_text(item), when, from_event=False)
        elif kind in _CALL_TYPES:
            self._tool_call(line_no, item, when)
        elif kind in _OUTPUT_TYPES:
            self._tool_output(line_no, item, when)
        elif kind == "agent_message":
            self._agent_message(line_no, item, when)
        elif kind not in _QUIET_ITEMS:
            self.report.skip(f"unknown_type:response_item/{kind}", f"{self.path}:{line_no}")

    def _event(self, line_no: int, event: dict[str, Any], when: datetime | None) -> None:
        kind = type_label(event.get("type"))
        if kind == "user_message":
            images = [IMAGE_MARKER for key in ("images", "local_images") for _ in _list(event.get(key))]
            self._user_event(line_no, "\n".join(_strings(event.get("message"), *images)), when)
        elif kind == "agent_message":
            self._assistant(_strings(event.get("message")), when, {"line": line_no}, from_event=True)
        elif kind == "agent_reasoning":
            self._reasoning(line_no, _strings(event.get("text")), when, from_event=True)
        elif kind == "item_completed":
            self._completed_item(line_no, event.get("item"), when)
        elif kind == "thread_name_updated":
            name = event.get("thread_name")
            if isinstance(name, str) and name.strip():
                self.session.title = name.strip()
        elif kind not in _QUIET_EVENTS:
            self.report.skip(f"unknown_type:event_msg/{kind}", f"{self.path}:{line_no}")

    def _completed_item(self, line_no: int, item: object, when: datetime | None) -> None:
        """Paginated threads (2026+) report finished turns as ``item_completed`` events."""
        if not isinstance(item, dict):
            return
        kind = item.get("type")
        if kind == "UserMessage":
            self._user_event(line_no, "\n".join(_content_texts(item.get("content"))), when)
        elif kind == "AgentMessage":
            self._assistant(_content_texts(item.get("content")), when, {"line": line_no}, from_event=True)
        elif kind == "Reasoning":
            self._reasoning(line_no, _strings(*_list(item.get("summary_text"))), when, from_event=True)

    def _compacted(self, line_no: int, compacted: dict[str, Any], when: datetime | None) -> None:
        """Only the summary is new; ``replacement_history`` repeats turns already read."""
        self._forget_twins()
        summary = compacted.get("message")
        if isinstance(summary, str) and summary.strip():
            self._add(
                Draft("", Role.USER, Origin.COMPACTION, timestamp=when, meta={"line": line_no}), summary
            )

    # -- messages --------------------------------------------------------------------------------

    def _message(self, line_no: int, item: dict[str, Any], when: datetime | None) -> None:
        role, model = item.get("role"), item.get("model")
        if isinstance(model, str) and model:  # only early un-enveloped records name a model here
            self.session.models[model] += 1
        content = item["content"] if "content" in item else item.get("message")
        texts = _content_texts(content)
        meta = {
            "line": line_no,
            "item_id": text_or_none(item.get("id")),
            "phase": text_or_none(item.get("phase")),
        }
        if role == "user":
            self._user_item("\n".join(texts), when, meta)
        elif role == "assistant":
            self._assistant(texts, when, meta, from_event=False)
        elif role in ("developer", "system"):
            self._add(Draft("", Role.SYSTEM, Origin.INJECTED, timestamp=when, meta=meta), "\n".join(texts))
        else:
            self.report.skip(f"unknown_role:{type_label(role)}", f"{self.path}:{line_no}")

    def _user_item(self, text: str, when: datetime | None, meta: dict[str, Any]) -> None:
        if _REQUEST_MARKER in text:
            context, _, text = text.partition(_REQUEST_MARKER)
            self._add(Draft("", Role.USER, Origin.INJECTED, timestamp=when, meta=dict(meta)), context)
            text = text.strip()
        origin = _user_origin(text)
        draft = Draft("", Role.USER, origin, timestamp=when, meta=meta)
        self._add(draft, text, _USER if origin is Origin.HUMAN else None)

    def _user_event(self, line_no: int, text: str, when: datetime | None) -> None:
        self.has_user_events = True
        origin = _user_origin(text)
        draft = Draft("", Role.USER, origin, timestamp=when, meta={"line": line_no, "channel": "event"})
        self._add(draft, text, _USER if origin is Origin.HUMAN else None, from_event=True)

    def _assistant(
        self, texts: list[str], when: datetime | None, meta: dict[str, Any], *, from_event: bool
    ) -> None:
        if from_event:
            meta["channel"] = "event"
        draft = Draft("", Role.ASSISTANT, Origin.AGENT, timestamp=when, meta=meta)
        self._add(draft, "\n".join(texts), _ASSISTANT, from_event=from_event)

    def _reasoning(self, line_no: int, texts: list[str], when: datetime | None, *, from_event: bool) -> None:
        """Read even when thinking is not kept, so that pairing (and so every key) is the same."""
        meta = {"line": line_no, "channel": "event" if from_event else None}
        draft = Draft("", Role.ASSISTANT, Origin.AGENT, MessageKind.THINKING, when, meta=meta)
        self._add(draft, "\n\n".join(texts), _REASONING, from_event=from_event)

    def _agent_message(self, line_no: int, item: dict[str, Any], when: datetime | None) -> None:
        """A message between agents of a multi-agent thread: model-written, never the person's."""
        self._forget_twins()
        meta = {"line": line_no, "author": item.get("author"), "recipient": item.get("recipient")}
        draft = Draft("", Role.USER, Origin.AGENT, timestamp=when, meta=meta)
        self._add(draft, "\n".join(_content_texts(item.get("content"))))

    def _tool_call(self, line_no: int, item: dict[str, Any], when: datetime | None) -> None:
        self._forget_twins()
        kind = type_label(item.get("type"))
        function = _dict(item.get("function"))
        name = item.get("name") or function.get("name") or _DEFAULT_TOOL_NAMES.get(kind) or "tool"
        name = name if isinstance(name, str) else "tool"
        arguments = item.get("arguments", item.get("input"))
        if arguments is None:
            arguments = item.get("action") if kind != "image_generation_call" else item.get("revised_prompt")
        call_id = text_or_none(item.get("call_id"))
        if call_id is not None:
            self.tool_names[call_id] = name
        draft = Draft(
            f"call:{call_id}" if call_id else "",
            Role.ASSISTANT,
            Origin.AGENT,
            MessageKind.TOOL_CALL,
            when,
            tool_name=name,
            meta={
                "line": line_no,
                "call_id": call_id,
                "item_id": text_or_none(item.get("id")),
                **tool_facts(name, arguments),
            },
            limit=tool_call_limit(name, self.options.tool_text_cap),
        )
        draft.calls.append(ToolCall(name, arguments))
        self._add(draft, tool_call_text(name, arguments))

    def _tool_output(self, line_no: int, item: dict[str, Any], when: datetime | None) -> None:
        self._forget_twins()
        call_id = text_or_none(item.get("call_id"))
        name = self.tool_names.get(call_id) if call_id else None
        if name is None and isinstance(item.get("name"), str):
            name = item["name"]
        draft = Draft(
            f"out:{call_id}" if call_id else "",
            Role.TOOL,
            Origin.TOOL,
            MessageKind.TOOL_RESULT,
            when,
            tool_name=name,
            meta={"line": line_no, "call_id": call_id},
            limit=self.options.tool_text_cap,
        )
        self._add(draft, result_text(_output_text(item.get("output", item.get("result")))))

    # -- twins and keys --------------------------------------------------------------------------

    def _add(
        self, draft: Draft, text: str, twin_class: str | None = None, *, from_event: bool = False
    ) -> None:
        """Queue ``draft`` with ``text``.

        A text record of a twin class pairs with the one right before it when that is the same
        class from the other channel; records that carry no conversation text (token counts, turn
        context) and injected context do not come between twins, tool traffic does.
        """
        draft.add(text)
        key = draft.key or f"{_key_prefix(draft)}:{_digest(draft, text)}"
        item = _Item(draft, key, twin_class, from_event)
        self.items.append(item)
        if twin_class is None:
            return
        waiting = self.twin_slot
        if waiting is not None and waiting.kind == twin_class and waiting.from_event != from_event:
            if from_event:
                _pair(waiting, item)
            else:
                _pair(item, waiting)
            self.twin_slot = None
        else:
            self.twin_slot = item

    def _forget_twins(self) -> None:
        """Tool traffic ends a stretch in which a message and its event twin can meet."""
        self.twin_slot = None

    def _finish(self) -> Transcript | None:
        session = self.session
        if self.meta_cwd is not None:
            session.cwds[self.meta_cwd] += 1
        else:
            session.cwds.update(self.turn_cwds)
        seen: Counter[str] = Counter()
        for item in self.items:
            draft = item.draft
            if item.dropped or (draft.kind is MessageKind.THINKING and not self.options.include_thinking):
                continue
            if item.kind == _USER and not item.from_event and not item.paired and self.has_user_events:
                draft.origin = Origin.INJECTED  # the person's prompts have an event twin; this has none
            seen[item.base_key] += 1
            count = seen[item.base_key]
            draft.key = item.base_key if count == 1 else f"{item.base_key}#{count}"
            session.add(draft)
        return session.freeze()


def _pair(item: _Item, event: _Item) -> None:
    """The response item stays; its event twin goes, lending its text if the item has none."""
    event.dropped = True
    item.paired = True
    if not "".join(item.draft.parts).strip():
        item.draft.parts = list(event.draft.parts)


def _key_prefix(draft: Draft) -> str:
    """Separate key spaces for each kind of message, so equal texts of different kinds never meet."""
    if draft.origin in (Origin.COMPACTION, Origin.AGENT) and draft.role is Role.USER:
        return str(draft.origin)
    return str(draft.role) if draft.kind is MessageKind.TEXT else str(draft.kind)


def _digest(draft: Draft, text: str) -> str:
    material = f"{draft.role}\x1f{draft.tool_name or ''}\x1f{text}".encode("utf-8", "replace")
    return hashlib.blake2b(material, digest_size=8).hexdigest()


def _user_origin(text: str) -> Origin:
    return Origin.INJECTED if text[:200].lstrip().startswith(_INJECTED_PREFIXES) else Origin.HUMAN


def _thread_spawn(source: object) -> dict[str, Any] | None:
    """``{"subagent": {"thread_spawn": {...}}}`` (or another subagent kind) → its details."""
    if not isinstance(source, dict) or not isinstance(source.get("subagent"), dict):
        return None
    spawn = source["subagent"].get("thread_spawn")
    return spawn if isinstance(spawn, dict) else {}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(*values: object) -> list[str]:
    return [v for v in values if isinstance(v, str) and v]


def _content_texts(content: object) -> list[str]:
    """Texts of message content parts; images become markers, encrypted parts are left out."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in ("input_image", "image", "output_image"):
                texts.append(IMAGE_MARKER)
            elif isinstance(part.get("text"), str) and kind != "encrypted_content":
                texts.append(part["text"])
    return texts


def _reasoning_text(item: dict[str, Any]) -> list[str]:
    """Plain reasoning summaries (or raw reasoning text); ``encrypted_content`` is never read."""
    texts = _content_texts(item.get("summary"))
    return texts or _content_texts(item.get("content"))


def _output_text(output: object) -> str:
    """A tool output as text: a string (all real data), or an object or list of content parts."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        text = output.get("text")
        if isinstance(text, str):
            return text
        if "content" in output:
            return _output_text(output["content"])
        return _compact_json(output)
    if isinstance(output, list):
        return "\n".join(_content_texts(output))
    return "" if output is None else _compact_json(output)


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


ADAPTER = CodexAdapter()
