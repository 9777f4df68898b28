"""`recall purge`: delete a whole scope, or the expired breadcrumbs, and then compact the file.

A scope is one project, everything older than some days, or both. Sessions go with their messages,
summaries and vectors, and are remembered by digest so that an import does not bring them back
(adr/0014); a session's age is its last activity. Records go by their own creation time.
``expired`` keeps to the decisions, learnings and breadcrumbs whose ``valid_until`` has passed. A dry run does the same work and
rolls it back, so its counts are exactly what a real run deletes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.project import ALL_PROJECTS
from recall.rowkinds import KIND_CODES, TABLE_NAMES, TYPED_KINDS, RecordKind
from recall.store.erase import delete_sessions
from recall.store.wipe import Wiped, wipe
from recall.store.writer import to_db_time, utc_now

if TYPE_CHECKING:
    from recall.store import Store


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """Rows deleted (or, in a dry run, that would be) per kind, vectors included; sizes in bytes."""

    dry_run: bool
    counts: dict[str, int]
    size_before: int
    size_after: int
    wiped: Wiped | None = None

    @property
    def message(self) -> str:
        listed = ", ".join(f"{kind.replace('_', ' ')} {n:,}" for kind, n in self.counts.items() if n)
        if self.dry_run:
            return f"would purge {listed or 'nothing'} (dry run: nothing deleted)"
        notes = list(self.wiped.notes) if self.wiped else []
        size = f"; file {self.size_before / 1_048_576:.1f} → {self.size_after / 1_048_576:.1f} MiB"
        return "; ".join([f"purged {listed or 'nothing'}{size}", *notes])

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "counts": self.counts,
            "size_before": self.size_before,
            "size_after": self.size_after,
            "wiped": self.wiped.to_dict() if self.wiped else None,
        }


class _DryRun(Exception):
    """Raised inside the transaction to roll a dry run back after counting."""


def purge(
    store: Store,
    *,
    project: str | None = None,
    expired: bool = False,
    older_than_days: float | None = None,
    dry_run: bool = False,
) -> PurgeReport:
    """Delete what the scope holds (every project when ``project`` is None or '*'), then vacuum."""
    project = None if project == ALL_PROJECTS else project
    if not (project or expired or older_than_days is not None):
        raise InvalidInput("purge what? give --project, --expired or --older-than DAYS")
    if older_than_days is not None and older_than_days < 1:
        raise InvalidInput(f"--older-than must be at least 1 day, got {older_than_days}")
    cutoff = None if older_than_days is None else to_db_time(utc_now() - timedelta(days=older_than_days))
    before = _size(store.path)
    counts = {"session": 0, "message": 0, "session_summary": 0, "vector": 0}
    try:
        with store.transaction() as writer:
            in_place = writer.erase_index_in_place()
            conn = store.connection
            if not expired:
                where, params = _scope(project, cutoff, "coalesce(ended_at, started_at, created_at)")
                ids = [row[0] for row in conn.execute(f"SELECT id FROM sessions WHERE {where}", params)]
                counts.update(delete_sessions(conn, writer, ids))
            kinds = TYPED_KINDS if expired else (*TYPED_KINDS, RecordKind.NOTE)
            where, params = _scope(project, cutoff, "created_at")
            if expired:
                where += " AND valid_until IS NOT NULL AND valid_until <= ?"
                params.append(to_db_time(utc_now()))
            _delete_records(store, kinds, where, params, counts)
            if project and not expired and cutoff is None:  # the whole project: its profile goes too
                counts["profile"] = conn.execute(
                    "DELETE FROM profiles WHERE project = ?", (project,)
                ).rowcount
            if dry_run:
                raise _DryRun
            if not in_place:
                writer.merge_index()
    except _DryRun:
        return PurgeReport(True, counts, before, before)
    wiped = wipe(store, vacuum=True)
    return PurgeReport(False, counts, before, _size(store.path), wiped)


def _delete_records(
    store: Store, kinds: tuple[RecordKind, ...], where: str, params: list[Any], counts: dict[str, int]
) -> None:
    conn = store.connection
    for kind in kinds:
        table = TABLE_NAMES[kind]
        counts["vector"] += conn.execute(
            f"SELECT count(*) FROM embeddings WHERE kind_code = {KIND_CODES[kind]} "
            f"AND row_id IN (SELECT id FROM {table} WHERE {where})",
            params,
        ).fetchone()[0]
        counts[kind.value] = conn.execute(f"DELETE FROM {table} WHERE {where}", params).rowcount


def _scope(project: str | None, cutoff: str | None, when: str) -> tuple[str, list[Any]]:
    clauses, params = ["1"], []
    if project:
        clauses.append("project = ?")
        params.append(project)
    if cutoff is not None:
        clauses.append(f"{when} < ?")
        params.append(cutoff)
    return " AND ".join(clauses), params


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
