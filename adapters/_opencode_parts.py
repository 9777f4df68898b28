"""OpenCode sessions, messages and parts (JSON files up to 1.1, SQLite rows from 1.2) as drafts.

Ground truth (anomalyco/opencode ``session/message-v2.ts``, ``session/session.sql.ts``; shared/ref/
more-hosts.md §1). The JSON era stores each record as a file; the SQLite era stores the same record
minus its ids in a ``data`` column. Both are handed here in the JSON shape:

- A session: ``id, parentID?, directory, title, version, slug, time{created, updated}``. A subagent's
  session (made by the ``task`` tool) has ``parentID`` = the calling session; its prompts are written
  by that agent, not the person. ``directory`` is the working directory.
- A message: ``role`` user|assistant, ``time.created`` (ms), the model (``modelID`` on assistant
  messages, ``model.modelID`` on user ones), ``summary: true`` on the assistant message that holds a
  compaction summary, ``error`` when a step failed. One assistant message is written per model step.
- Parts, in id order: ``text`` (kept unless ``synthetic`` (a file the host attached) or ``ignored``),
  ``reasoning``, ``tool`` (``callID``, ``tool``, ``state{status, input, output|error}``; a pending or
  running call has no result yet), ``patch`` (files a step changed), ``file`` (an image is a marker;
  a mentioned file is already named in the text), ``subtask`` (a prompt the person sent to a
  subagent). ``step-start``, ``step-finish``, ``snapshot``, ``agent``, ``retry`` and ``compaction``
  carry no text.

Keys are the host's ids: a message's text is keyed by its message id, tool calls and results by the
call id, patches by the part id. The JSON files and the rows made from them by the 1.2 migration
carry the same ids, so a session read from both is stored once.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._jsonl import as_object, parse_timestamp, text_or_none, type_label
from adapters._text import IMAGE_MARKER, result_text, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role

HOST = "opencode"
_QUIET_PARTS = frozenset({"step-start", "step-finish", "snapshot", "agent", "retry", "compaction"})
_PLACEHOLDER_TITLE = re.compile(r"^(New session|Child session) - \d{4}-\d\d-\d\d")


def session_draft(info: dict[str, Any], source_path: str) -> SessionDraft:
    """A session record (JSON shape) as an empty draft: ids, folder, title, times."""
    session_id = text_or_none(info.get("id"))
    if session_id is None:
        raise ValueError("a session without an id")
    session = SessionDraft(HOST, session_id, source_path)
    session.parent_external_id = text_or_none(info.get("parentID"))
    directory = text_or_none(info.get("directory"))
    if directory:
        session.cwds[directory] += 1
    title = text_or_none(info.get("title"))
    if title and not _PLACEHOLDER_TITLE.match(title):
        session.title = title.strip()
    times = as_object(info.get("time"))
    session.touch(parse_timestamp(times.get("created")))
    session.touch(parse_timestamp(times.get("updated")))
    for name in ("slug", "version", "projectID"):
        value = text_or_none(info.get(name))
        if value:
            session.meta[name] = value
    return session


def add_message(
    session: SessionDraft,
    message_id: str,
    info: dict[str, Any],
    parts: list[dict[str, Any]],
    options: ReadOptions,
    report: ParseReport,
) -> None:
    """One message and its parts (already in id order) into the session draft."""
    role = type_label(info.get("role"))
    times = as_object(info.get("time"))
    when = parse_timestamp(times.get("created"))
    session.touch(when)
    session.touch(parse_timestamp(times.get("completed")))
    model = info.get("modelID") or (info.get("model") or {}).get("modelID")
    if isinstance(model, str) and model:
        session.models[model] += 1
    if session.parent_external_id and session.agent_id is None:
        session.agent_id = text_or_none(info.get("agent")) or session.external_id
    if role == "user":
        origin = Origin.AGENT if session.parent_external_id else Origin.HUMAN
        text = Draft(message_id, Role.USER, origin, timestamp=when)
    elif role == "assistant":
        origin = Origin.COMPACTION if info.get("summary") is True else Origin.AGENT
        text = Draft(message_id, Role.ASSISTANT, origin, timestamp=when)
    else:
        report.skip(f"unknown_role:{role}", f"{session.source_path}: {message_id}")
        return
    session.add(text)
    _PartReader(session, text, options, report).read(parts)
    error = info.get("error")
    if isinstance(error, dict):
        data = as_object(error.get("data"))
        note = Draft(f"{message_id}:error", Role.SYSTEM, Origin.INJECTED, timestamp=when)
        note.add(
            f"error: {text_or_none(data.get('message')) or text_or_none(error.get('name')) or 'unknown'}"
        )
        session.add(note)


class _PartReader:
    def __init__(self, session: SessionDraft, text: Draft, options: ReadOptions, report: ParseReport) -> None:
        self.session = session
        self.text = text
        self.options = options
        self.report = report

    def read(self, parts: list[dict[str, Any]]) -> None:
        for part in parts:
            kind = type_label(part.get("type"))
            if kind == "text":
                if part.get("synthetic") is not True and part.get("ignored") is not True:
                    self.text.add(part.get("text"))
            elif kind == "reasoning":
                self._thinking(part)
            elif kind == "tool":
                self._tool(part)
            elif kind == "patch":
                self._patch(part)
            elif kind == "file":
                if str(part.get("mime") or "").startswith("image/"):
                    self.text.add(IMAGE_MARKER)
            elif kind == "subtask":
                self._subtask(part)
            elif kind not in _QUIET_PARTS:
                self.report.skip(f"unknown_part:{kind}", f"{self.session.source_path}: {part.get('id')}")

    def _thinking(self, part: dict[str, Any]) -> None:
        if not self.options.include_thinking:
            return
        key = f"{self.text.key}:thinking"
        draft = self.session.drafts.get(key)
        if draft is None:
            draft = Draft(key, Role.ASSISTANT, Origin.AGENT, MessageKind.THINKING, self.text.timestamp)
            self.session.add(draft)
        draft.add(part.get("text"))

    def _tool(self, part: dict[str, Any]) -> None:
        state = as_object(part.get("state"))
        call_id = text_or_none(part.get("callID")) or text_or_none(part.get("id"))
        if call_id is None:
            raise ValueError("a tool part without a call id")
        name = text_or_none(part.get("tool")) or "tool"
        times = as_object(state.get("time"))
        when = parse_timestamp(times.get("start")) or self.text.timestamp
        call = tool_draft(
            self.options, f"call:{call_id}", Role.ASSISTANT, Origin.AGENT, MessageKind.TOOL_CALL, when
        )
        call.tool_name = name
        call.add(tool_call_text(name, state.get("input")))
        self.session.add(call)
        status = state.get("status")
        if status not in ("completed", "error", "success"):
            return  # pending or running: the result comes with a later read
        ended = parse_timestamp(times.get("end")) or when
        result = tool_draft(
            self.options, f"result:{call_id}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, ended
        )
        result.tool_name = name
        metadata = as_object(state.get("metadata"))
        child = text_or_none(metadata.get("sessionId"))
        result.meta.update(is_error=True if status == "error" else None, child_session=child)
        output = f"error: {state.get('error')}" if status == "error" else state.get("output")
        result.add(result_text(output if isinstance(output, str) else ""))
        self.session.add(result)

    def _patch(self, part: dict[str, Any]) -> None:
        files = [f for f in part.get("files") or [] if isinstance(f, str)]
        key = text_or_none(part.get("id")) or f"{self.text.key}:patch"
        draft = tool_draft(
            self.options, f"patch:{key}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, self.text.timestamp
        )
        draft.tool_name = "patch"
        draft.meta["hash"] = text_or_none(part.get("hash"))
        draft.add("patch: " + ", ".join(files) if files else "")
        self.session.add(draft)

    def _subtask(self, part: dict[str, Any]) -> None:
        key = text_or_none(part.get("id")) or f"{self.text.key}:subtask"
        draft = Draft(f"subtask:{key}", Role.USER, Origin.HUMAN, timestamp=self.text.timestamp)
        draft.meta["agent"] = text_or_none(part.get("agent"))
        draft.add(part.get("prompt"))
        self.session.add(draft)


def tool_draft(
    options: ReadOptions, key: str, role: Role, origin: Origin, kind: MessageKind, when: datetime | None
) -> Draft:
    """Every OpenCode tool call and result (all eras) is cut to the one tool-text cap here."""
    return Draft(key, role, origin, kind, when, limit=options.tool_text_cap)
