"""OpenCode 2.x messages: rows of the event-sourced ``session_message`` table.

Ground truth: read from anomalyco/opencode ``packages/core/src/session/message.ts`` and the code that
writes the table (one indexed source version, which the index mixes with forks); no real 2.x database
has been seen, so this reader is tolerant and counts what it does not know. A row is ``(id,
session_id, type, seq, time_created, time_updated, data)``, where ``data`` is the message minus its
``id`` and ``type``, ordered by ``seq``; most writes update a row in place, so a changed row is read
again whole. Types:

- ``user``: ``text`` (plus ``files``, ``agents``, ``references``); ``synthetic`` and ``system``:
  ``text`` the host put in; ``compaction``: ``summary``; ``shell``: a ``command`` the person ran and
  its ``output``.
- ``assistant``: ``model{id, providerID}`` and ``content[]`` of ``text`` (``ignored``/``synthetic``
  ones are not the model's words), ``reasoning``, and ``tool`` (``id``, ``name``, ``state{status,
  input, content[], result?, error?}``).
- ``model-switched``, ``agent-switched``, ``location-switched`` carry no conversation.

Keys are the row id, and the tool id for calls and results: the same ids the 1.x tables used when
the upgrade carried a message over, so a message in both tables is stored once.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._jsonl import as_object, parse_timestamp, text_or_none
from adapters._opencode_parts import tool_draft
from adapters._text import result_text, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role

_QUIET = frozenset({"model-switched", "agent-switched", "location-switched"})
_HOST_TEXT = {"synthetic": (Role.USER, "text"), "system": (Role.SYSTEM, "text")}


def add_v2_message(
    session: SessionDraft,
    message_id: str,
    kind: str,
    data: dict[str, Any],
    options: ReadOptions,
    report: ParseReport,
) -> None:
    times = as_object(data.get("time"))
    when = parse_timestamp(times.get("created"))
    session.touch(when)
    if kind == "user":
        origin = Origin.AGENT if session.parent_external_id else Origin.HUMAN
        _text(session, message_id, Role.USER, origin, data.get("text"), when)
    elif kind == "assistant":
        _assistant(session, message_id, data, when, options)
    elif kind in _HOST_TEXT:
        role, field = _HOST_TEXT[kind]
        _text(session, message_id, role, Origin.INJECTED, data.get(field), when)
    elif kind == "compaction":
        _text(session, message_id, Role.ASSISTANT, Origin.COMPACTION, data.get("summary"), when)
    elif kind == "shell":
        _shell(session, message_id, data, when, options)
    elif kind not in _QUIET:
        report.skip(f"unknown_type:session_message/{kind}", f"{session.source_path}: {message_id}")


def _text(
    session: SessionDraft, key: str, role: Role, origin: Origin, text: object, when: datetime | None
) -> Draft:
    draft = Draft(key, role, origin, timestamp=when)
    draft.add(text)
    session.add(draft)
    return draft


def _assistant(
    session: SessionDraft, message_id: str, data: dict[str, Any], when: datetime | None, options: ReadOptions
) -> None:
    model = data.get("model")
    if isinstance(model, dict) and isinstance(model.get("id"), str):
        session.models[model["id"]] += 1
    text = _text(session, message_id, Role.ASSISTANT, Origin.AGENT, None, when)
    for item in data.get("content") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text" and item.get("ignored") is not True and item.get("synthetic") is not True:
            text.add(item.get("text"))
        elif kind == "reasoning" and options.include_thinking:
            draft = Draft(f"{message_id}:thinking:{item.get('id')}", Role.ASSISTANT, Origin.AGENT,
                          MessageKind.THINKING, when)  # fmt: skip
            draft.add(item.get("text"))
            session.add(draft)
        elif kind == "tool":
            _tool(session, item, when, options)


def _tool(session: SessionDraft, item: dict[str, Any], when: datetime | None, options: ReadOptions) -> None:
    call_id = text_or_none(item.get("id"))
    if call_id is None:
        raise ValueError("a tool without an id")
    name = text_or_none(item.get("name")) or "tool"
    state = as_object(item.get("state"))
    call = tool_draft(options, f"call:{call_id}", Role.ASSISTANT, Origin.AGENT, MessageKind.TOOL_CALL, when)
    call.tool_name = name
    call.add(tool_call_text(name, state.get("input")))
    session.add(call)
    status = state.get("status")
    if status not in ("completed", "error"):
        return
    result = tool_draft(options, f"result:{call_id}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, when)
    result.tool_name = name
    result.meta["is_error"] = True if status == "error" else None
    result.add(result_text(_output(state)))
    session.add(result)


def _shell(
    session: SessionDraft, message_id: str, data: dict[str, Any], when: datetime | None, options: ReadOptions
) -> None:
    """A command the person ran from OpenCode's prompt: their call, then its output."""
    key = text_or_none(data.get("callID")) or message_id
    call = tool_draft(options, f"call:{key}", Role.USER, Origin.HUMAN, MessageKind.TOOL_CALL, when)
    call.tool_name = "bash"
    call.add(tool_call_text("bash", {"command": str(data.get("command") or "")}))
    result = tool_draft(options, f"result:{key}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, when)
    result.tool_name = "bash"
    result.add(result_text(str(data.get("output") or "")))
    session.add(call)
    session.add(result)


def _output(state: dict[str, Any]) -> str:
    """A finished tool's text: its error, else its content parts, else its result."""
    error = state.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        return f"error: {message}"
    texts = [
        part if isinstance(part, str) else str(part.get("text") or "")
        for part in state.get("content") or []
        if isinstance(part, str | dict)
    ]
    if any(texts):
        return "\n".join(t for t in texts if t)
    result = state.get("result")
    if isinstance(result, str):
        return result
    return "" if result is None else json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)
