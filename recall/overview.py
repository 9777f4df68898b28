"""A project at a glance: what is in force, where work was left, recent sessions, counts, activity.

The web view's first page (``recall ui``). Decisions and breadcrumbs are the ones the catch-up
(recall.brief) shows, so the page and the start-of-session brief agree on what is in force.
Activity counts sessions and messages per day over a window that ends on the scope's last active
day, not today: a history imported from months ago still draws a chart, and its caption names the dates.
Messages count on the day their session started, so the chart is drawn from the sessions and an
index, never from the messages' own rows: it costs the same with 1,000 or 100,000 messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from recall.brief import BriefItem, catch_up

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

ACTIVITY_DAYS = 30
RECENT_SESSIONS = 12
IN_FORCE = 20  # decisions and breadcrumbs shown; the decision log has every one
_COUNTED = (
    ("session", "sessions"),
    ("message", "messages"),
    ("decision", "decisions"),
    ("learning", "learnings"),
    ("breadcrumb", "breadcrumbs"),
    ("session_summary", "session_summaries"),
)


@dataclass(frozen=True, slots=True)
class SessionItem:
    """One session as a list shows it; ``title`` falls back to its summary's."""

    id: int
    project: str
    host: str
    title: str | None
    started_at: str | None
    ended_at: str | None
    messages: int
    parent_id: int | None

    @property
    def ref(self) -> str:
        return f"session#{self.id}"


@dataclass(frozen=True, slots=True)
class DayActivity:
    day: str  # YYYY-MM-DD, UTC
    messages: int
    sessions: int


@dataclass(frozen=True, slots=True)
class Overview:
    project: str | None  # None: every project
    projects: tuple[str, ...]  # every project that holds something, to choose another
    counts: Mapping[str, int]  # per kind, in scope
    decisions: tuple[BriefItem, ...]  # active, newest day first
    breadcrumbs: tuple[BriefItem, ...]  # not expired
    sessions: tuple[SessionItem, ...]  # most recent first
    activity: tuple[DayActivity, ...]  # one per day, oldest first, quiet days included

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def project_overview(store: Store, project: str | None) -> Overview:
    """Everything the overview page shows for ``project`` (None: every project)."""
    brief = catch_up(store, project, limit=IN_FORCE)
    with store.reading() as conn:
        return Overview(
            project=project,
            projects=_projects(conn),
            counts=_counts(conn, project),
            decisions=brief.decisions,
            breadcrumbs=brief.breadcrumbs,
            sessions=session_items(
                conn,
                "s.project = :project" if project else "1",
                {"project": project},
                newest_first=True,
                limit=RECENT_SESSIONS,
            ),
            activity=_activity(conn, project, ACTIVITY_DAYS),
        )


def session_items(
    conn: sqlite3.Connection, where: str, params: Mapping[str, Any], *, newest_first: bool, limit: int = -1
) -> tuple[SessionItem, ...]:
    """Sessions matching ``where`` (over ``sessions s``) in the order they started, those the host
    gave no start time last; ``limit`` -1: every one."""
    order = "DESC" if newest_first else "ASC"
    rows = conn.execute(
        f"""SELECT s.id, s.project, s.host, coalesce(s.title, ss.title) AS title, s.started_at, s.ended_at,
                   (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS messages, s.parent_id
            FROM sessions s LEFT JOIN session_summaries ss ON ss.session_id = s.id WHERE {where}
            ORDER BY s.started_at IS NULL, coalesce(s.started_at, s.created_at) {order}, s.id {order}
            LIMIT :limit""",
        {**params, "limit": limit},
    ).fetchall()
    return tuple(SessionItem(**dict(row)) for row in rows)


def _projects(conn: sqlite3.Connection) -> tuple[str, ...]:
    tables = ("sessions", "decisions", "learnings", "breadcrumbs")
    sql = " UNION ".join(f"SELECT project FROM {table}" for table in tables)
    return tuple(row[0] for row in conn.execute(f"{sql} ORDER BY 1"))


def _counts(conn: sqlite3.Connection, project: str | None) -> dict[str, int]:
    scope = "WHERE project = ?" if project else ""
    args = (project,) if project else ()
    return {
        kind: conn.execute(f"SELECT count(*) FROM {table} {scope}", args).fetchone()[0]
        for kind, table in _COUNTED
    }


def _activity(conn: sqlite3.Connection, project: str | None, days: int) -> tuple[DayActivity, ...]:
    """Sessions, and their messages, per day for ``days`` days up to the last day a session started.

    A session counts on the day it started, with all its messages: its messages are counted on the
    ``(session_id, ordinal)`` index without reading a row, so a window of 100,000 messages costs what
    its sessions do.
    """
    scope = "AND s.project = :project" if project else ""
    last = conn.execute(
        f"SELECT max(substr(coalesce(s.started_at, s.ended_at), 1, 10)), max(substr(s.created_at, 1, 10)) "
        f"FROM sessions s WHERE 1 {scope}",
        {"project": project},
    ).fetchone()
    last = last[0] or last[1]  # a session the host gave no time is dated by its import only when none has one
    if last is None:
        return ()
    end = date.fromisoformat(last)
    start = end - timedelta(days=days - 1)
    rows = conn.execute(
        f"""SELECT substr(coalesce(s.started_at, s.ended_at, s.created_at), 1, 10) AS day, count(*),
                   sum((SELECT count(*) FROM messages m WHERE m.session_id = s.id))
            FROM sessions s WHERE day BETWEEN :start AND :end {scope} GROUP BY day""",
        {"project": project, "start": start.isoformat(), "end": end.isoformat()},
    ).fetchall()
    per_day = {day: (messages, sessions) for day, sessions, messages in rows}
    window = (start + timedelta(days=n) for n in range(days))
    return tuple(DayActivity(day.isoformat(), *per_day.get(day.isoformat(), (0, 0))) for day in window)
