"""One session as a person reads it: its messages in order, a page at a time, with its summary and records.

A session can hold tens of thousands of messages, so messages come a page at a time, read down the
``(session_id, ordinal)`` index. Records that came from the session (decisions, learnings and
breadcrumbs extracted from it or whose ``session_id`` names it, and records one of its messages is a
source of, adr/0018) come with the messages they came from, so a page can link each record to its
lines; ``locate_message`` says which page a message is on, for such a link.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput, NotFound
from recall.overview import SessionItem, session_items

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

PER_PAGE = 200
ENTITIES = 30  # what a session touched, most often first
MAX_PER_PAGE = 1_000
_RECORD_TABLES = (
    ("decision", 1, "decisions"),
    ("learning", 2, "learnings"),
    ("breadcrumb", 3, "breadcrumbs"),
)


@dataclass(frozen=True, slots=True)
class MessageView:
    id: int
    ordinal: int
    role: str
    origin: str
    kind: str  # text, tool_call, tool_result, thinking
    tool_name: str | None
    content: str
    timestamp: str | None

    @property
    def ref(self) -> str:
        return f"message#{self.id}"


@dataclass(frozen=True, slots=True)
class LinkedRecord:
    """A record that came from the session, and the messages it came from (empty when none are known)."""

    kind: str
    id: int
    content: str
    provenance: str
    status: str | None  # decisions only
    review: str | None  # extracted records: pending or accepted; None for the rest
    rule: str | None  # the extraction rule that wrote it
    sources: tuple[int, ...]  # message ids, this session's first, in order

    @property
    def ref(self) -> str:
        return f"{self.kind}#{self.id}"


@dataclass(frozen=True, slots=True)
class SessionView:
    session: Mapping[str, Any]  # the session row, as ``Memory.get`` returns it
    summary: Mapping[str, Any] | None  # its session summary, when there is one
    messages: tuple[MessageView, ...]  # this page's, in order
    page: int  # from 1
    pages: int
    per_page: int
    total: int  # messages in the session
    records: tuple[LinkedRecord, ...]
    subagents: tuple[SessionItem, ...]  # sessions whose parent this is
    parent: SessionItem | None
    entities: tuple[Mapping[str, Any], ...]  # files, commands, errors it touched, most often first


@dataclass(frozen=True, slots=True)
class MessageLocation:
    message_id: int
    session_id: int
    page: int


def session_view(store: Store, session_id: int, page: int = 1, per_page: int = PER_PAGE) -> SessionView:
    """Page ``page`` of the session's messages with everything around them; NotFound when it is gone."""
    from recall.connections import row_entities
    from recall.store.views import load_session

    _check_paging(page, per_page)
    session = load_session(store, session_id)
    total = int(session["message_count"])
    pages = max(1, -(-total // per_page))
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT id, ordinal, role, origin, kind, tool_name, content, timestamp FROM messages "
            "WHERE session_id = ? ORDER BY ordinal LIMIT ? OFFSET ?",
            (session_id, per_page, (min(page, pages) - 1) * per_page),
        ).fetchall()
        summary = conn.execute(
            "SELECT id, title, content, provenance, created_at, meta FROM session_summaries WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return SessionView(
            session=session,
            summary=None if summary is None else {"kind": "session_summary", **_decoded(summary)},
            messages=tuple(MessageView(**dict(row)) for row in rows),
            page=min(page, pages),
            pages=pages,
            per_page=per_page,
            total=total,
            records=_records(conn, session_id),
            subagents=session_items(conn, "s.parent_id = :id", {"id": session_id}, newest_first=False),
            parent=_parent(conn, session["parent_id"]),
            entities=tuple(row_entities(store, "session", session_id, limit=ENTITIES)),
        )


def locate_message(store: Store, message_id: int, per_page: int = PER_PAGE) -> MessageLocation:
    """The session and page that show message ``message_id``."""
    _check_paging(1, per_page)
    with store.reading() as conn:
        row = conn.execute("SELECT session_id, ordinal FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise NotFound(f"no message with id {message_id}; it may have been forgotten")
        before = conn.execute(
            "SELECT count(*) FROM messages WHERE session_id = ? AND ordinal < ?", (row[0], row[1])
        ).fetchone()[0]
    return MessageLocation(message_id, int(row[0]), before // per_page + 1)


def _records(conn: sqlite3.Connection, session_id: int) -> tuple[LinkedRecord, ...]:
    """Records written from the session or sourced from one of its messages, with all their sources."""
    sourced: dict[int, set[int]] = {}
    for code, record_id in conn.execute(
        "SELECT rs.kind_code, rs.record_id FROM messages m JOIN record_sources rs ON rs.message_id = m.id "
        "WHERE m.session_id = ?",
        (session_id,),
    ):
        sourced.setdefault(code, set()).add(record_id)
    found: list[LinkedRecord] = []
    for kind, code, table in _RECORD_TABLES:
        status = "r.status" if kind == "decision" else "NULL"
        ids = sorted(sourced.get(code, ()))
        rows = conn.execute(
            f"SELECT r.id, r.content, r.provenance, {status} AS status, l.review, l.rule FROM {table} r "
            f"LEFT JOIN extraction_lineage l ON l.kind_code = {code} AND l.record_id = r.id "
            f"WHERE r.session_id = ? OR r.id IN ({', '.join('?' for _ in ids)}) ORDER BY r.id",
            (session_id, *ids),
        ).fetchall()
        for row in rows:
            sources = conn.execute(
                "SELECT m.id FROM record_sources rs JOIN messages m ON m.id = rs.message_id "
                "WHERE rs.kind_code = ? AND rs.record_id = ? ORDER BY m.session_id != ?, m.ordinal",
                (code, row["id"], session_id),
            ).fetchall()
            found.append(LinkedRecord(kind, sources=tuple(m for (m,) in sources), **dict(row)))
    return tuple(found)


def _parent(conn: sqlite3.Connection, parent_id: int | None) -> SessionItem | None:
    if parent_id is None:
        return None
    return next(iter(session_items(conn, "s.id = :id", {"id": parent_id}, newest_first=False)), None)


def _decoded(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    if isinstance(data.get("meta"), str):
        data["meta"] = json.loads(data["meta"])
    return data


def _check_paging(page: int, per_page: int) -> None:
    if page < 1:
        raise InvalidInput(f"page numbers start at 1, got {page}")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise InvalidInput(f"a page holds from 1 to {MAX_PER_PAGE} messages, got {per_page}")
