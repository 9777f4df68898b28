"""One session as extraction reads it: its stored messages, the new ones marked, and its plan calls.

Extraction reads what the store holds (already scrubbed), never the host's files. A session that grew
is read from a little before its first new message (rules pair a failure with a later fix, or an
answer with the proposal before it), and every plan-bearing tool call of the whole session is read
too, because where work was left depends on the plan's last state, not on the new messages alone.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recall.store import Store

CONTEXT_TURNS = 60  # stored messages re-read before the first new one
# Only the parts of ``meta`` rules read, pulled out by SQLite: parsing every message's JSON in Python
# would cost more than all the rules together.
_COLUMNS = (
    "id, ordinal, role, origin, kind, tool_name, content, timestamp, "
    "coalesce(json_extract(meta, '$.tool_use_id'), json_extract(meta, '$.call_id')) AS call_key, "
    "json_extract(meta, '$.is_error') AS is_error, json_extract(meta, '$.phase') = 'commentary' AS aside, "
    "CASE WHEN instr(meta, '\"plan\"') OR instr(meta, '\"memory_file\"') OR instr(meta, '\"proposed_plan\"') "
    "THEN meta END AS facts"
)
FACT_KEYS = ("plan", "memory_file", "proposed_plan")  # what adapters._facts puts in meta


@dataclass(frozen=True, slots=True)
class Turn:
    """A stored message, as rules see it."""

    id: int
    ordinal: int
    role: str
    origin: str
    kind: str
    tool_name: str | None
    content: str
    timestamp: str | None
    call_key: str | None = None  # what ties a tool call to its result: Claude's tool_use_id, Codex's call_id
    failed: bool = False  # the host marked this tool result an error
    aside: bool = False  # Codex "commentary": the agent narrating while it works, not its answer
    facts: dict[str, Any] = field(default_factory=dict)  # plan, memory_file, proposed_plan (adapters._facts)

    @property
    def human(self) -> bool:
        """Words the person typed (not host-injected text, not a tool result)."""
        return self.role == "user" and self.origin == "human" and self.kind == "text"

    @property
    def agent_text(self) -> bool:
        return self.role == "assistant" and self.origin == "agent" and self.kind == "text"

    @property
    def tool(self) -> str:
        return (self.tool_name or "").lower()


@dataclass(frozen=True, slots=True)
class SessionView:
    id: int
    project: str
    host: str
    title: str | None
    ended_at: datetime | None
    subagent: bool
    turns: tuple[Turn, ...]  # from a little before the first new message to the last
    plan_turns: tuple[Turn, ...]  # every plan call of the session and the results naming new tasks
    first_new: int  # ordinals from here on are new to extraction
    last_ordinal: int
    results: dict[str, Turn] = field(default_factory=dict)  # tool results by call id

    def is_new(self, turn: Turn) -> bool:
        return turn.ordinal >= self.first_new

    def new_turns(self) -> Iterator[Turn]:
        return (t for t in self.turns if t.ordinal >= self.first_new)

    def result_of(self, call: Turn) -> Turn | None:
        """The tool result answering ``call``: by call id, else the next result of the same tool."""
        key = call.call_key
        if key is not None:
            return self.results.get(key)
        later = (t for t in self.turns if t.ordinal > call.ordinal and t.kind == "tool_result")
        return next((t for t in later if t.tool == call.tool), None)


def load_session(store: Store, session_id: int, read_up_to: int) -> SessionView | None:
    """The session with every message after ordinal ``read_up_to`` marked new; None when none is."""
    with store.reading() as conn:
        return read_session(conn, session_id, read_up_to)


def read_session(conn: sqlite3.Connection, session_id: int, read_up_to: int) -> SessionView | None:
    """``load_session`` on any connection holding the session: the store, or the read-ahead worker's
    copy of a new session (recall.extract.ahead)."""
    session = conn.execute(
        "SELECT id, project, host, title, agent_id, ended_at, meta FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if session is None:
        return None
    last = conn.execute("SELECT max(ordinal) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0]
    if last is None or last <= read_up_to:
        return None
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: a session can hold thousands of messages
    turns = cursor.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND ordinal > ? ORDER BY ordinal",
        (session_id, read_up_to - CONTEXT_TURNS),
    ).fetchall()
    plan_turns = cursor.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND ("
        "(kind != 'tool_result' AND json_extract(meta, '$.plan') IS NOT NULL) OR "
        "(kind = 'tool_result' AND tool_name = 'TaskCreate')) ORDER BY ordinal",
        (session_id,),
    ).fetchall()
    meta = json.loads(session["meta"] or "{}")
    window = tuple(_turn(row) for row in turns)
    return SessionView(
        id=session["id"],
        project=session["project"],
        host=session["host"],
        title=session["title"],
        ended_at=parse_time(session["ended_at"]),
        subagent=session["agent_id"] is not None or bool(meta.get("compaction_run")),
        turns=window,
        plan_turns=tuple(_turn(row) for row in plan_turns),
        first_new=read_up_to + 1,
        last_ordinal=last,
        results={t.call_key: t for t in window if t.kind == "tool_result" and t.call_key},
    )


def _turn(row: tuple[Any, ...]) -> Turn:
    ident, ordinal, role, origin, kind, tool_name, content, timestamp, call_key, is_error, aside, raw = row
    facts = json.loads(raw) if raw else {}
    return Turn(
        ident,
        ordinal,
        role,
        origin,
        kind,
        tool_name,
        content,
        timestamp,
        call_key if isinstance(call_key, str) else None,
        is_error == 1,
        aside == 1,
        {key: facts[key] for key in FACT_KEYS if key in facts} if isinstance(facts, dict) else {},
    )


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
