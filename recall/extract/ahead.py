"""Extraction read ahead: the rules run in the read-ahead worker over a session new to the store.

The rules read a session as the store holds it, already scrubbed (recall.extract.session), so
extraction runs after the messages are written. For a session an import creates, the read-ahead
worker holds the very rows that will be written (``preclean``): it puts them in a private
in-memory database of the same columns, reads the session back with the same query, and runs the
same rules, so the importing process only checks the candidates against the store and writes them
(adr/0045). Its candidates name messages by ordinal; they are placed on the stored ids when the
session stored is exactly the one the worker read (same project, same messages in the same order,
none stored before this import). Otherwise extraction reads the session itself.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.extract.candidate import Analysis
from recall.extract.session import SessionView, read_session

if TYPE_CHECKING:
    from recall.store import Store
    from recall.store.writer import CleanRow

_SCHEMA = """
CREATE TABLE sessions (id INTEGER PRIMARY KEY, project, host, title, agent_id, ended_at, meta);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY, session_id, ordinal, role, origin, kind, tool_name, content, timestamp, meta
);
"""
_SESSION_COLUMNS = ("project", "host", "title", "agent_id", "ended_at", "meta")
_MESSAGE_COLUMNS = ("role", "origin", "kind", "tool_name", "content", "timestamp", "meta")


_COPIES = threading.local()  # each thread's private in-memory database, emptied after each session


def _private_copy() -> sqlite3.Connection:
    conn: sqlite3.Connection | None = getattr(_COPIES, "conn", None)
    if conn is None:
        conn = _COPIES.conn = sqlite3.connect(":memory:")
        conn.row_factory = sqlite3.Row
        conn.executescript(_SCHEMA)
    return conn


@dataclass(frozen=True, slots=True)
class ExtractionAhead:
    """What the rules found in a new session as the worker read it, and the messages they read."""

    keys: tuple[str, ...]  # the external ids of the session's messages, by ordinal
    analysis: Analysis  # sources are ordinals until ``placed``

    def placed(self, store: Store, session_id: int) -> Analysis | None:
        """The analysis on the stored message ids; None unless the store holds exactly these messages
        and the caller has checked that no extraction read the session before."""
        with store.reading() as conn:
            project = conn.execute("SELECT project FROM sessions WHERE id = ?", (session_id,)).fetchone()
            rows = conn.execute(
                "SELECT ordinal, id, external_id FROM messages WHERE session_id = ? ORDER BY ordinal",
                (session_id,),
            ).fetchall()
        if project is None or project[0] != self.analysis.project:
            return None
        if tuple(row[2] for row in rows) != self.keys or any(row[0] != at for at, row in enumerate(rows)):
            return None
        ids = [row[1] for row in rows]
        candidates = tuple(
            dataclasses.replace(c, sources=tuple(ids[ordinal] for ordinal in c.sources))
            for c in self.analysis.candidates
        )
        return dataclasses.replace(self.analysis, candidates=candidates)


def extraction_ahead(
    session: Mapping[str, Any], rows: Sequence[CleanRow], analyse: Callable[[SessionView], Analysis]
) -> ExtractionAhead | None:
    """In the worker: the rules' findings (``analyse``: recall.extract.stage.analyse) in a new session
    whose cleaned session row is ``session`` and whose messages, by ordinal, are ``rows``."""
    if not rows:
        return None
    conn = _private_copy()
    try:
        conn.execute(
            f"INSERT INTO sessions (id, {', '.join(_SESSION_COLUMNS)}) VALUES (1, ?, ?, ?, ?, ?, ?)",
            tuple(session.get(column) for column in _SESSION_COLUMNS),
        )
        conn.executemany(
            f"INSERT INTO messages (id, session_id, ordinal, {', '.join(_MESSAGE_COLUMNS)}) "
            "VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (ordinal, ordinal, *(row.values.get(column) for column in _MESSAGE_COLUMNS))
                for ordinal, row in enumerate(rows)
            ],
        )
        view = read_session(conn, 1, -1)
    finally:
        conn.execute("DELETE FROM messages")
        conn.execute("DELETE FROM sessions")
    if view is None:
        return None
    keys = tuple(row.values["external_id"] for row in rows)
    return ExtractionAhead(keys, analyse(view))
