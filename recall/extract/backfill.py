"""`recall extract`: run extraction over sessions stored before it existed, or again from scratch.

Sessions are taken oldest first, so a later session's plan closes an earlier one's breadcrumbs the
way it would have on import. Each session commits on its own with its progress, so an interrupted
run resumes with the first session it had not finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall.extract.stage import ExtractionReport, Progress, extract_sessions

if TYPE_CHECKING:
    from recall.store import Store


def sessions_to_extract(store: Store, project: str | None = None) -> list[int]:
    """Sessions holding messages extraction has not read, oldest first."""
    scope = "AND s.project = ?" if project else ""
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT s.id FROM sessions s LEFT JOIN extraction_progress p ON p.session_id = s.id "
            f"WHERE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id "
            f"AND m.ordinal > coalesce(p.last_ordinal, -1)) {scope} "
            "ORDER BY coalesce(s.started_at, s.created_at), s.id",
            (project,) if project else (),
        ).fetchall()
    return [int(row[0]) for row in rows]


def unread_sessions(store: Store, session_ids: list[int]) -> list[int]:
    """Those of ``session_ids`` holding messages extraction has not read (one indexed probe each)."""
    with store.reading() as conn:
        return [
            session_id
            for session_id in dict.fromkeys(session_ids)
            if conn.execute(
                "SELECT 1 FROM messages m WHERE m.session_id = ? AND m.ordinal > coalesce("
                "(SELECT last_ordinal FROM extraction_progress WHERE session_id = ?), -1) LIMIT 1",
                (session_id, session_id),
            ).fetchone()
        ]


def backfill(
    store: Store, *, project: str | None = None, rebuild: bool = False, progress: Progress | None = None
) -> tuple[int, ExtractionReport]:
    """(records removed by ``rebuild``, what extraction did). Rebuild keeps accepted records and rejections."""
    removed = store.reset_extraction(project) if rebuild else 0
    return removed, extract_sessions(store, sessions_to_extract(store, project), progress)
