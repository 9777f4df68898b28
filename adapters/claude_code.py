"""Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl`` and subagent files.

Ground truth (Claude Code 1.0 – 2.1.2xx; shared/ref/transcript-formats.md §2):

- One JSON object per line. ``user`` and ``assistant`` lines hold an Anthropic Messages ``message``;
  ``summary`` / ``custom-title`` / ``ai-title`` name the session (custom wins, then ai, then the
  summary whose ``leafUuid`` is in the session); ``system/local_command`` and
  ``attachment/queued_command`` (a prompt typed mid-turn) carry text too. Every other known type
  (progress, file-history-snapshot, queue-operation, settings, ...) is bookkeeping and is passed
  over; a type never seen before is counted as ``unknown_type:<t>``.
- One API response is written as one line per content block (thinking, text, tool_use), each line
  with its own ``uuid`` but the same ``message.id``, and the host sometimes rewrites such lines.
  They merge into one message keyed ``msg:<message.id>``. Other lines are keyed by ``uuid``, tool
  calls by ``call:<tool_use.id>`` and their results by ``result:<tool_use_id>``: re-reads give the
  same keys, and a repeated ``uuid`` (a duplicated or replayed line) is kept once.
- ``--resume`` starts a new file that first replays earlier lines with their original ``sessionId``
  and ``uuid``. Lines are grouped by their own ``sessionId``, so a replayed line lands in the session
  it came from, under the key it already has there; such a partial copy is flagged
  ``meta["partial_copy"]`` and each session in the file links to the one before it.
- Subagents carry the parent's ``sessionId``: inline ``isSidechain`` lines (1.x), ``agent-<id>.jsonl``
  beside the session (2.0.x) or ``<sessionId>/subagents/agent-<id>.jsonl`` (2.1.2+, optionally with
  ``agent-<id>.meta.json``). Each becomes its own transcript ``<sessionId>#agent-<agentId>``; its
  ``user`` turns are written by the parent agent, not the person. ``agent-acompact-*`` is the host's
  compaction run: its prompts are injected and its answer is a compaction summary.
- Not every ``user`` line is the person: ``isMeta`` lines, command and stdout wrappers, system
  reminders, task notifications and interruption notices are put in by the host, and a line with
  ``isCompactSummary`` is the model-written summary after a compaction. They are kept, but marked.
- Since 2.1.x a project folder can hold ``sessions-index.json`` (``{"version": 1, "entries": [{
  "sessionId", "summary"?, "projectPath", ...}]}``), a listing the host keeps for its resume picker.
  It only fills gaps: its ``summary`` titles a session whose file names none, its ``projectPath``
  is the cwd of a session whose lines carry none (see ``_FileReader._fill_from_index``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._facts import tool_facts
from adapters._files import SIDE_FILE_MAX_BYTES, open_regular, read_side_file, walk_files
from adapters._jsonl import (
    FileCache,
    existing_dirs,
    feed_records,
    home_dir,
    line_timestamp,
    scrub_surrogates,
    text_or_none,
    type_label,
)
from adapters._text import IMAGE_MARKER, result_text, tool_call_limit, tool_call_text
from adapters.base import ReadOptions, first_objects
from recall.transcript import MessageKind, Origin, ParseReport, Role, ToolCall, Transcript

HOST = "claude"
_INJECTED_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "<task-notification>",
    "<user-memory-input>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<ide_diagnostics>",
    "Caveat: The messages below were generated",
    "[Request interrupted",
    "Stop hook feedback:",
)
_COMPACTION_PREFIX = "This session is being continued from a previous conversation"
_INJECTED_ORIGIN_KINDS = frozenset({"task-notification"})
_BOOKKEEPING_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "permission-mode",
        "mode",
        "agent-name",
        "agent-setting",
        "pr-link",
        "frame-link",
        "worktree-state",
        "relocated",
        "bridge-session",
        "atis-latch",
        "started",
        "result",
    }
)
_SILENT_BLOCKS = frozenset({"redacted_thinking", "web_search_tool_result", "fallback"})
_TITLE_FIELDS = {"custom-title": ("customTitle", 0), "ai-title": ("aiTitle", 1)}
_SUMMARY_RANK = 2
_PRUNED_DIRS = frozenset({"tool-results", "workflows", "memory"})
SESSIONS_INDEX = "sessions-index.json"


class ClaudeCodeAdapter:
    """Reads Claude Code session and subagent JSONL files.

    The adapter object lives for a whole import, so it keeps each project folder's parsed
    ``sessions-index.json`` (re-read only when its size or mtime changes): a folder of many sessions
    costs one parse of its index, and only if some session there needs it.
    """

    name = HOST

    def __init__(self) -> None:
        self._indexes: FileCache[dict[str, IndexEntry]] = FileCache(load_sessions_index)

    env_vars = ("CLAUDE_CONFIG_DIR",)

    def locations(self) -> list[Path]:
        config_dirs = os.environ.get("CLAUDE_CONFIG_DIR", "")
        candidates = [Path(p.strip()).expanduser() / "projects" for p in config_dirs.split(",") if p.strip()]
        home = home_dir()
        if home is not None:
            candidates += [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]
        return candidates

    def default_roots(self) -> list[Path]:
        return existing_dirs(self.locations())

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        seen: set[str] = set()
        for root in self.default_roots() if roots is None else roots:
            base = root / "projects" if (root / "projects").is_dir() else root
            for path in walk_files(base, _is_transcript, _PRUNED_DIRS):
                ident = os.path.normcase(os.path.abspath(path))
                if ident not in seen:
                    seen.add(ident)
                    yield path

    def claims(self, path: Path) -> bool:
        """A ``.jsonl`` whose lines carry Claude Code's envelope (``sessionId``, ``uuid``); other
        hosts' JSONL (Codex rollouts, Cursor agent transcripts) is left to them."""
        if not _is_transcript(path) or path.name.startswith("rollout-") or "agent-transcripts" in path.parts:
            return False
        objects = first_objects(path)
        # Gemini CLI's JSONL chats carry a sessionId too, beside a projectHash no Claude line has.
        return not objects or any(_CLAUDE_KEYS & obj.keys() and "projectHash" not in obj for obj in objects)

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        """The file's transcripts; a bad or missing ``sessions-index.json`` is simply not used."""
        index_path = project_dir(path) / SESSIONS_INDEX
        yield from _FileReader(path, options, report, lambda: self._indexes.get(index_path)).transcripts()


def project_dir(path: Path) -> Path:
    """The project folder of a session file: its own folder, or three up for ``<id>/subagents/agent-*``."""
    return path.parent.parent.parent if path.parent.name == "subagents" else path.parent


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What ``sessions-index.json`` knows about one session that its lines may not say."""

    summary: str | None
    project_path: str | None
    sidechain: bool = False


def load_sessions_index(path: Path) -> dict[str, IndexEntry]:
    """The entries of a ``sessions-index.json`` by ``sessionId``; {} for anything unusable.

    The index is optional and written by the host at its own pace, so nothing here raises: an
    unreadable, oversized or non-JSON file, or a root that is not ``{"entries": [...]}``, gives no
    entries, and an entry or field of an unexpected type is passed over on its own. The ``version``
    is not checked: every field is type-checked as it is read. Invalid UTF-8 becomes U+FFFD (as
    Node, which writes and reads the file, decodes it); lone surrogates too, as SQLite cannot store
    them. When one id has several entries a main-session entry beats a sidechain one, then the last
    wins.
    """
    data = read_side_file(path)
    if data is None:
        return {}
    try:
        root = json.loads(data.decode("utf-8", "replace").removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return {}
    entries = root.get("entries") if isinstance(root, dict) else None
    found: dict[str, IndexEntry] = {}
    for raw in entries if isinstance(entries, list) else []:
        if not isinstance(raw, dict):
            continue
        session_id = _index_text(raw.get("sessionId"))
        if session_id is None:
            continue
        entry = IndexEntry(
            _index_text(raw.get("summary")),
            _index_text(raw.get("projectPath")),
            raw.get("isSidechain") is True,
        )
        earlier = found.get(session_id)
        if earlier is None or earlier.sidechain or not entry.sidechain:
            found[session_id] = entry
    return found


def _index_text(value: object) -> str | None:
    """A usable string field of the index: stripped, surrogate-free, non-empty; else None."""
    if not isinstance(value, str):
        return None
    text = scrub_surrogates(value).strip()
    return text or None


_CLAUDE_KEYS = frozenset(("sessionId", "uuid", "leafUuid", "parentUuid"))


def _is_transcript(path: Path) -> bool:
    """Session files, and in ``subagents/`` only the agent files (not workflow journals)."""
    if not path.name.endswith(".jsonl"):
        return False
    return path.parent.name != "subagents" or path.name.startswith("agent-")


def _agent_id_from_name(path: Path) -> str | None:
    name = path.name
    if name.startswith("agent-") and name.endswith(".jsonl") and len(name) > len("agent-.jsonl"):
        return name[len("agent-") : -len(".jsonl")]
    return None


class _FileReader:
    """Reads one file; a file can hold several transcripts (resume copies, inline sidechains)."""

    def __init__(
        self,
        path: Path,
        options: ReadOptions,
        report: ParseReport,
        index: Callable[[], Mapping[str, IndexEntry] | None] = lambda: None,
    ) -> None:
        self.path = path
        self.options = options
        self.report = report
        self.index = index  # the project's sessions-index.json, loaded only if a session needs it
        self.file_agent_id = _agent_id_from_name(path)
        self.compaction_run = bool(self.file_agent_id and self.file_agent_id.startswith("acompact"))
        # In the 2.1.2+ layout the directory names the parent session, whatever the lines say.
        self.layout_session_id = path.parent.parent.name if path.parent.name == "subagents" else None
        self.stem = path.stem
        self.sessions: dict[str, SessionDraft] = {}
        self.main_ids: list[str] = []
        self.owner_of_uuid: dict[str, str] = {}
        self.sidechain_roots: dict[str, str] = {}
        self.tool_names: dict[str, str] = {}
        self.titles: dict[str, dict[int, str]] = {}
        self.summaries: list[tuple[str, str]] = []
        self.handlers: dict[str, Callable[[int, dict[str, Any]], None]] = {
            "user": self._user,
            "assistant": self._assistant,
            "system": self._system,
            "attachment": self._attachment,
            "tool_use": self._bare_tool_use,
            "tool_result": self._bare_tool_result,
            "summary": self._summary,
            "custom-title": self._title,
            "ai-title": self._title,
        }

    def transcripts(self) -> Iterator[Transcript]:
        feed_records(self.path, self.report, self._record)
        self._link_sessions()
        self._fill_from_index()
        for session in self.sessions.values():
            transcript = session.freeze()
            if transcript is not None:
                yield transcript

    # -- records ---------------------------------------------------------------------------------

    def _record(self, line_no: int, record: dict[str, Any]) -> None:
        label = type_label(record.get("type"))
        handler = self.handlers.get(label)
        if handler is not None:
            handler(line_no, record)
        elif label not in _BOOKKEEPING_TYPES:
            self.report.skip(f"unknown_type:{label}", f"{self.path}:{line_no}")

    def _user(self, line_no: int, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            self.report.skip("bad_record", f"{self.path}:{line_no}: user line without message content")
            return
        entered = self._enter(line_no, record)
        if entered is not None:
            session, uuid, when = entered
            self._user_content(session, uuid, when, self._base_origin(record, session), content, record)

    def _assistant(self, line_no: int, record: dict[str, Any]) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.report.skip("bad_record", f"{self.path}:{line_no}: assistant line without message")
            return
        entered = self._enter(line_no, record)
        if entered is None:
            return
        session, uuid, when = entered
        message_id = message.get("id")
        text_key = f"msg:{message_id}" if isinstance(message_id, str) and message_id else uuid
        origin = Origin.AGENT
        if record.get("isApiErrorMessage") is True:
            origin = Origin.INJECTED
        elif self.compaction_run:
            origin = Origin.COMPACTION
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>":
            session.models[model] += 1
        meta = {"uuid": uuid, "message_id": message_id, "request_id": record.get("requestId")}
        for index, block in enumerate(_blocks(message.get("content"))):
            kind = type_label(block.get("type"))
            if kind == "text":
                if _has_text(block.get("text")):  # a blank block must not place the message early
                    draft = self._merged(session, text_key, MessageKind.TEXT, origin, when, meta)
                    draft.add_once(block["text"])
            elif kind == "thinking":
                if self.options.include_thinking and _has_text(block.get("thinking")):
                    key = f"{text_key}:thinking"
                    draft = self._merged(session, key, MessageKind.THINKING, Origin.AGENT, when, meta)
                    draft.add_once(block["thinking"])
            elif kind in ("tool_use", "server_tool_use"):
                self._tool_call(session, uuid, index, block, when)
            elif kind == "image":
                self._merged(session, text_key, MessageKind.TEXT, origin, when, meta).add(IMAGE_MARKER)
            elif kind not in _SILENT_BLOCKS:
                self.report.skip(f"unknown_block:{kind}", f"{self.path}:{line_no}")

    def _system(self, line_no: int, record: dict[str, Any]) -> None:
        """Only ``local_command`` carries conversation text (a slash command and its output)."""
        if record.get("subtype") != "local_command":
            return
        entered = self._enter(line_no, record)
        if entered is not None:
            session, uuid, when = entered
            draft = Draft(uuid, Role.SYSTEM, Origin.INJECTED, timestamp=when, meta={"uuid": uuid})
            draft.add(record.get("content"))
            session.add(draft)

    def _attachment(self, line_no: int, record: dict[str, Any]) -> None:
        """A ``queued_command`` attachment is a prompt typed while the agent was busy (2.1.101+)."""
        attachment = record.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return
        entered = self._enter(line_no, record)
        if entered is not None:
            session, uuid, when = entered
            origin = self._base_origin(record, session)
            if origin in (Origin.HUMAN, Origin.AGENT):  # the queued prompt carries its own flags too
                origin = self._base_origin(attachment, session)
            self._user_content(session, uuid, when, origin, attachment.get("prompt"), record)

    def _bare_tool_use(self, line_no: int, record: dict[str, Any]) -> None:
        """Top-level ``tool_use`` lines of early builds (schema-drift shape)."""
        entered = self._enter(line_no, record)
        if entered is not None:
            session, uuid, when = entered
            self._tool_call(
                session, uuid, 0, {"name": record.get("name"), "input": record.get("input")}, when
            )

    def _bare_tool_result(self, line_no: int, record: dict[str, Any]) -> None:
        entered = self._enter(line_no, record)
        if entered is not None:
            session, uuid, when = entered
            name = record.get("name")
            draft = self._result_draft(uuid, when, name if isinstance(name, str) else None, {"uuid": uuid})
            draft.add(result_text(_result_text(record.get("output", record.get("content")))))
            session.add(draft)

    def _summary(self, line_no: int, record: dict[str, Any]) -> None:
        leaf, text = record.get("leafUuid"), record.get("summary")
        if isinstance(leaf, str) and isinstance(text, str) and text.strip():
            self.summaries.append((leaf, text.strip()))

    def _title(self, line_no: int, record: dict[str, Any]) -> None:
        field_name, rank = _TITLE_FIELDS[record["type"]]
        session_id, title = record.get("sessionId"), record.get(field_name)
        if isinstance(session_id, str) and isinstance(title, str) and title.strip():
            self.titles.setdefault(session_id, {})[rank] = title.strip()

    # -- helpers ---------------------------------------------------------------------------------

    def _enter(
        self, line_no: int, record: dict[str, Any]
    ) -> tuple[SessionDraft, str, datetime | None] | None:
        """Route a message line to its session; None when its ``uuid`` was read before."""
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            uuid = f"line:{line_no}"
        elif uuid in self.owner_of_uuid:
            self.report.skip("duplicate_uuid")  # routine: a resumed session copies what came before
            return None
        session = self._session_for(record, uuid)
        self.owner_of_uuid[uuid] = session.external_id
        when = line_timestamp(record.get("timestamp"), self.report, f"{self.path}:{line_no}")
        session.touch(when)
        cwd, branch = record.get("cwd"), record.get("gitBranch")
        if isinstance(cwd, str) and cwd:
            session.cwds[cwd] += 1
        if isinstance(branch, str) and branch:
            session.branches[branch] += 1
        for name in ("version", "entrypoint", "slug"):
            value = record.get(name)
            if isinstance(value, str) and value:
                session.meta[name] = value
        return session, uuid, when

    def _session_for(self, record: dict[str, Any], uuid: str) -> SessionDraft:
        session_id = self.layout_session_id or record.get("sessionId") or record.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            session_id = self.stem
        agent_id = self.file_agent_id
        if agent_id is None and record.get("isSidechain") is True:
            agent_id = record.get("agentId") if isinstance(record.get("agentId"), str) else None
            if not agent_id:
                agent_id = f"sidechain-{self._sidechain_root(record, uuid)}"
        external_id = session_id if agent_id is None else f"{session_id}#agent-{agent_id}"
        session = self.sessions.get(external_id)
        if session is None:
            session = SessionDraft(HOST, external_id, str(self.path))
            if agent_id is None:
                self.main_ids.append(external_id)
            else:
                session.agent_id = agent_id
                session.parent_external_id = session_id
                session.meta.update(self._agent_meta())
            self.sessions[external_id] = session
        return session

    def _sidechain_root(self, record: dict[str, Any], uuid: str) -> str:
        """An inline (1.x) sidechain has no agent id; the uuid of its first line names it."""
        parent = record.get("parentUuid")
        root = self.sidechain_roots.get(parent, uuid) if isinstance(parent, str) else uuid
        self.sidechain_roots[uuid] = root
        return root

    def _agent_meta(self) -> dict[str, Any]:
        """What ``agent-<id>.meta.json`` says about a subagent file (2.1.2+), if anything."""
        meta: dict[str, Any] = {"compaction_run": True} if self.compaction_run else {}
        if self.file_agent_id is None:
            return {"inline_sidechain": True}
        sidecar = self.path.with_name(f"agent-{self.file_agent_id}.meta.json")
        try:
            with open_regular(sidecar) as stream:
                data = json.loads(stream.read(SIDE_FILE_MAX_BYTES).decode("utf-8", "replace"))
        except FileNotFoundError:
            return meta
        except (OSError, ValueError) as exc:
            self.report.skip("bad_agent_meta", f"{sidecar}: {exc}")
            return meta
        if isinstance(data, dict):
            for source, target in (
                ("agentType", "agent_type"),
                ("description", "agent_description"),
                ("toolUseId", "spawn_tool_use_id"),
                ("parentAgentId", "parent_agent_id"),
                ("spawnDepth", "spawn_depth"),
            ):
                if data.get(source) is not None:
                    meta[target] = data[source]
        return meta

    def _base_origin(self, record: dict[str, Any], session: SessionDraft) -> Origin:
        """Who wrote a user-role line, judged from its flags before its text is looked at."""
        if self.compaction_run or record.get("isMeta") is True:
            return Origin.INJECTED
        if record.get("isCompactSummary") is True:
            return Origin.COMPACTION
        origin = record.get("origin")
        if isinstance(origin, dict) and (
            type_label(origin.get("kind")) in _INJECTED_ORIGIN_KINDS or "senderTaskId" in origin
        ):
            return Origin.INJECTED
        return Origin.AGENT if session.agent_id is not None else Origin.HUMAN

    def _user_content(
        self,
        session: SessionDraft,
        uuid: str,
        when: datetime | None,
        base: Origin,
        content: object,
        record: dict[str, Any],
    ) -> None:
        """User text grouped by who wrote it (one message per origin); tool results stand alone."""
        groups: dict[Origin, Draft] = {}
        meta = {"uuid": uuid, "parent_uuid": record.get("parentUuid")}

        def group(origin: Origin) -> Draft:
            draft = groups.get(origin)
            if draft is None:
                key = uuid if not groups else f"{uuid}:{origin}"
                draft = groups[origin] = Draft(key, Role.USER, origin, timestamp=when, meta=dict(meta))
                session.add(draft)
            return draft

        for index, block in enumerate(_blocks(content)):
            kind = type_label(block.get("type"))
            if kind == "text":
                text = block.get("text")
                group(_text_origin(text, base) if isinstance(text, str) else base).add(text)
            elif kind == "tool_result":
                self._tool_result(session, uuid, index, block, when)
            elif kind in ("image", "document"):
                group(base).add(IMAGE_MARKER if kind == "image" else "[document]")
            else:
                self.report.skip(f"unknown_block:{kind}", f"{self.path}: {uuid}")

    def _merged(
        self,
        session: SessionDraft,
        key: str,
        kind: MessageKind,
        origin: Origin,
        when: datetime | None,
        meta: dict[str, Any],
    ) -> Draft:
        """The assistant message for one ``message.id``, created by the first of its lines."""
        draft = session.drafts.get(key)
        if draft is None:
            draft = Draft(key, Role.ASSISTANT, origin, kind, when, meta=dict(meta))
            session.add(draft)
        return draft

    def _tool_call(
        self, session: SessionDraft, uuid: str, index: int, block: dict[str, Any], when: datetime | None
    ) -> None:
        tool_id = text_or_none(block.get("id"))
        name = text_or_none(block.get("name")) or "tool"
        if tool_id is not None:
            self.tool_names[tool_id] = name
        draft = Draft(
            f"call:{tool_id}" if tool_id else f"{uuid}:{index}",
            Role.ASSISTANT,
            Origin.AGENT,
            MessageKind.TOOL_CALL,
            when,
            tool_name=name,
            meta={"uuid": uuid, "tool_use_id": tool_id, **tool_facts(name, block.get("input"))},
            limit=tool_call_limit(name, self.options.tool_text_cap),
        )
        draft.add(tool_call_text(name, block.get("input")))
        draft.calls.append(ToolCall(name, block.get("input")))
        session.add(draft)

    def _tool_result(
        self, session: SessionDraft, uuid: str, index: int, block: dict[str, Any], when: datetime | None
    ) -> None:
        tool_id = text_or_none(block.get("tool_use_id"))
        meta = {
            "uuid": uuid,
            "tool_use_id": tool_id,
            "is_error": True if block.get("is_error") is True else None,
        }
        draft = self._result_draft(f"result:{tool_id}" if tool_id else f"{uuid}:{index}", when, None, meta)
        draft.tool_name = self.tool_names.get(tool_id) if tool_id else None
        draft.add(result_text(_result_text(block.get("content"))))
        session.add(draft)

    def _result_draft(
        self, key: str, when: datetime | None, tool_name: str | None, meta: dict[str, Any]
    ) -> Draft:
        return Draft(
            key,
            Role.TOOL,
            Origin.TOOL,
            MessageKind.TOOL_RESULT,
            when,
            tool_name=tool_name,
            meta=meta,
            limit=self.options.tool_text_cap,
        )

    def _link_sessions(self) -> None:
        """Resume links, partial-copy flags and titles, once every line has been read.

        Only a file named after one of its sessions is known to be that session's: its other
        sessions are replayed copies, and each session links to the one before it.
        """
        if self.stem in self.main_ids and len(self.main_ids) > 1:
            for earlier, later in zip(self.main_ids, self.main_ids[1:], strict=False):
                self.sessions[later].parent_external_id = earlier
            for session_id in self.main_ids:
                if session_id != self.stem:
                    self.sessions[session_id].meta["partial_copy"] = True
        for leaf, text in self.summaries:
            owner_id = self.owner_of_uuid.get(leaf)
            if owner_id is None:
                self.report.skip("orphan_summary")  # routine: it titles a session kept in another file
                continue
            main_id = (
                self.sessions[owner_id].parent_external_id if self.sessions[owner_id].agent_id else owner_id
            )
            self.titles.setdefault(main_id or owner_id, {})[_SUMMARY_RANK] = text
        for session_id in self.main_ids:
            ranked = self.titles.get(session_id)
            if ranked:
                self.sessions[session_id].title = ranked[min(ranked)]

    def _fill_from_index(self) -> None:
        """Fill the title and cwd that no line gave from the project's ``sessions-index.json``.

        The index's ``summary`` ranks below every title the file states itself (custom-title, then
        ai-title, then a ``summary`` line): the index is the host's own listing, derived from the
        transcripts and rewritten at its own pace, so it can lag behind a later ``/rename`` or a new
        summary, while a line in the file is what the session itself last said. The index still
        titles a session that never got a title line, or whose summary line sits in another file
        (counted there as ``orphan_summary``). ``firstPrompt`` is never a title: it is a message,
        already kept as one.

        ``projectPath`` is the host's record of the real cwd, so it stands in when no line carries a
        ``cwd``; any line's ``cwd`` wins, as the lines say where the session actually ran (after a
        ``cd`` too). A subagent takes it from its parent session's entry, but never a title: titles
        belong to main sessions here as everywhere in this reader.
        """
        wanting = [
            s for s in self.sessions.values() if not s.cwds or (s.agent_id is None and s.title is None)
        ]
        if not wanting:
            return
        entries = self.index()
        if not entries:
            return
        for session in wanting:
            main_id = session.parent_external_id if session.agent_id is not None else session.external_id
            entry = entries.get(main_id) if main_id else None
            if entry is None:
                continue
            if session.agent_id is None and session.title is None and entry.summary:
                session.title = entry.summary
            if not session.cwds and entry.project_path:
                session.cwds[entry.project_path] += 1


def _blocks(content: object) -> list[dict[str, Any]]:
    """Message content as a list of block dicts; a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [
            b if isinstance(b, dict) else {"type": "text", "text": b}
            for b in content
            if isinstance(b, dict | str)
        ]
    return []


def _has_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _text_origin(text: str, base: Origin) -> Origin:
    """Wrapper text the host puts into user turns, recognised by how it starts."""
    if base not in (Origin.HUMAN, Origin.AGENT):
        return base
    head = text[:200].lstrip()
    if head.startswith(_COMPACTION_PREFIX):
        return Origin.COMPACTION
    if head.startswith(_INJECTED_PREFIXES):
        return Origin.INJECTED
    return base


def _result_text(content: object) -> str:
    """A tool result's text: a string, or text/image blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "image":
                parts.append(IMAGE_MARKER)
            elif isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


ADAPTER = ClaudeCodeAdapter()
