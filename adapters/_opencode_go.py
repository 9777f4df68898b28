"""The Go OpenCode (opencode-ai/opencode ≤ v0.0.55, now Crush): ``<project>/.opencode/opencode.db``.

Ground truth (opencode-ai/opencode ``internal/db/migrations``, ``internal/message``; shared/ref/
more-hosts.md §1): tables ``sessions(id, parent_session_id, title, created_at, updated_at, ...)`` and
``messages(id, session_id, role, parts, model, created_at, ...)``, where ``parts`` is a JSON list of
``{type, data}``: ``text{text}``, ``reasoning{thinking}``, ``image_url{url}``, ``binary{path,
mimeType}``, ``tool_call{id, name, input}``, ``tool_result{tool_call_id, name, content, is_error}``,
``finish{reason, time}``. Times are written with ``strftime('%s')``: seconds, though the schema says
milliseconds. The database lives in the project (``data.directory`` defaults to ``.opencode``), so
its folder's parent is the working directory. A subagent (the ``agent`` tool) gets a session whose id
is the tool call's id; ``title-<id>`` sessions only generate titles and are not conversations.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapters._draft import Draft, SessionDraft
from adapters._jsonl import parse_timestamp, text_or_none
from adapters._opencode_parts import HOST, tool_draft
from adapters._text import IMAGE_MARKER, result_text, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role

GO_TABLES = frozenset({"sessions", "messages"})
_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}


def read_go_database(
    conn: sqlite3.Connection, path: Path, options: ReadOptions, report: ParseReport, only: str | None = None
) -> Iterator[SessionDraft]:
    cwd = str(Path(path).absolute().parent.parent) if Path(path).parent.name == ".opencode" else None
    conn.row_factory = sqlite3.Row
    sessions = conn.execute("SELECT * FROM sessions ORDER BY created_at, id").fetchall()
    for row in sessions:
        session_id = str(row["id"])
        if session_id.startswith("title-") or (only and only not in (session_id, row["parent_session_id"])):
            continue
        session = SessionDraft(HOST, session_id, str(path))
        session.parent_external_id = text_or_none(row["parent_session_id"])
        session.agent_id = session_id if session.parent_external_id else None
        session.title = text_or_none(row["title"])
        session.touch(parse_timestamp(row["created_at"]))
        session.touch(parse_timestamp(row["updated_at"]))
        if cwd:
            session.cwds[cwd] += 1
        messages = conn.execute(
            "SELECT id, role, parts, model, created_at FROM messages WHERE session_id = ? ORDER BY created_at, id",
            (session_id,),
        ).fetchall()
        for message in messages:
            report.lines_read += 1
            try:
                _message(session, message, options, report)
            except (AttributeError, TypeError, ValueError) as exc:
                report.skip("bad_record", f"{path}: message {message['id']}: {exc!r}")
        yield session


def _message(session: SessionDraft, row: sqlite3.Row, options: ReadOptions, report: ParseReport) -> None:
    message_id, role = str(row["id"]), str(row["role"])
    when = parse_timestamp(row["created_at"])
    session.touch(when)
    model = text_or_none(row["model"])
    if model:
        session.models[model] += 1
    try:
        parts = json.loads(row["parts"] or "[]")
    except (ValueError, RecursionError):
        report.skip("bad_json", f"{session.source_path}: message {message_id}")
        return
    if role == "tool":
        for part in _parts(parts, "tool_result"):
            _result(session, part, when, options)
        return
    if role not in _ROLES:
        report.skip(f"unknown_role:{role}", f"{session.source_path}: message {message_id}")
        return
    origin = {"user": Origin.AGENT if session.parent_external_id else Origin.HUMAN, "system": Origin.INJECTED}
    text = Draft(message_id, _ROLES[role], origin.get(role, Origin.AGENT), timestamp=when)
    session.add(text)
    for kind, data in ((p.get("type"), p.get("data")) for p in parts if isinstance(p, dict)):
        if not isinstance(data, dict):
            continue
        if kind == "text":
            text.add(data.get("text"))
        elif kind in ("image_url", "binary"):
            text.add(IMAGE_MARKER)
        elif kind == "reasoning" and options.include_thinking:
            thinking = Draft(
                f"{message_id}:thinking", Role.ASSISTANT, Origin.AGENT, MessageKind.THINKING, when
            )
            thinking.add(data.get("thinking"))
            session.add(thinking)
        elif kind == "tool_call":
            _call(session, data, when, options)


def _parts(parts: object, kind: str) -> Iterator[dict[str, Any]]:
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and part.get("type") == kind and isinstance(part.get("data"), dict):
            yield part["data"]


def _call(session: SessionDraft, data: dict[str, Any], when: Any, options: ReadOptions) -> None:
    call_id = text_or_none(data.get("id"))
    if call_id is None:
        raise ValueError("a tool call without an id")
    name = text_or_none(data.get("name")) or "tool"
    call = tool_draft(options, f"call:{call_id}", Role.ASSISTANT, Origin.AGENT, MessageKind.TOOL_CALL, when)
    call.tool_name = name
    call.add(tool_call_text(name, data.get("input")))
    session.add(call)


def _result(session: SessionDraft, data: dict[str, Any], when: Any, options: ReadOptions) -> None:
    call_id = text_or_none(data.get("tool_call_id"))
    if call_id is None:
        raise ValueError("a tool result without a call id")
    result = tool_draft(options, f"result:{call_id}", Role.TOOL, Origin.TOOL, MessageKind.TOOL_RESULT, when)
    result.tool_name = text_or_none(data.get("name"))
    result.meta["is_error"] = True if data.get("is_error") is True else None
    content = data.get("content")
    result.add(result_text(content if isinstance(content, str) else ""))
    session.add(result)
