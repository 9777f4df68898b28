"""`recall rescrub`: run today's scrubber over everything already stored.

Scrubbing rules improve; rows written under older rules must benefit. Every column the Writer
scrubs on the way in (``writer.TEXT_COLUMNS`` and the JSON columns) is scrubbed again, and only the
rows whose text changes are rewritten, through ``Writer.update`` like any correction, so the
keyword index follows through its triggers and the vectors of rewritten rows are dropped to be
embedded again (`recall embed`, or the next import). Each batch reads and rewrites in one short
transaction, so a row another process changes meanwhile is never overwritten with older text.
The old text then leaves the disk as after a forget (recall.store.wipe, adr/0014).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.rowkinds import JSON_COLUMNS
from recall.scrub import scrub, scrub_value
from recall.store.wipe import Wiped, wipe
from recall.store.writer import TEXT_COLUMNS

if TYPE_CHECKING:
    from recall.store import Store
    from recall.store.writer import Writer

BATCH_ROWS = 1_000
KINDS = {
    "sessions": "session",
    "messages": "message",
    "decisions": "decision",
    "learnings": "learning",
    "breadcrumbs": "breadcrumb",
    "session_summaries": "session_summary",
    "profiles": "profile",
    "notes": "note",
}

Progress = Callable[[int, int], None]  # (rows checked, rows in all)


@dataclass(frozen=True, slots=True)
class RescrubReport:
    """Rows checked and rewritten per kind, secrets redacted per secret kind, vectors to redo."""

    checked: dict[str, int]
    rewritten: dict[str, int]
    redactions: dict[str, int]
    vectors_dropped: int
    wiped: Wiped | None = None

    @property
    def message(self) -> str:
        checked = sum(self.checked.values())
        changed = ", ".join(f"{kind.replace('_', ' ')} {n:,}" for kind, n in self.rewritten.items() if n)
        if not changed:
            return f"checked {checked:,} rows; the current scrubber changes none of them"
        secrets = ", ".join(f"{kind} {n:,}" for kind, n in self.redactions.items())
        lines = [
            f"checked {checked:,} rows, rewrote {changed}",
            f"redacted: {secrets or 'invisible characters only'}",
        ]
        if self.vectors_dropped:
            lines.append(
                f"{self.vectors_dropped:,} vectors dropped: run `recall embed` to embed those rows again"
            )
        return "\n".join(lines + list(self.wiped.notes if self.wiped else ()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "rewritten": self.rewritten,
            "redactions": self.redactions,
            "vectors_dropped": self.vectors_dropped,
            "wiped": self.wiped.to_dict() if self.wiped else None,
        }


def rescrub(store: Store, *, progress: Progress | None = None) -> RescrubReport:
    conn = store.connection
    total = sum(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in KINDS)
    vectors_before = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    checked: Counter[str] = Counter()
    rewritten: Counter[str] = Counter()
    redactions: Counter[str] = Counter()
    in_place: bool | None = None
    for table, kind in KINDS.items():
        columns = _scrubbed_columns(store, table)
        after = 0
        while True:
            with store.transaction() as writer:
                if in_place is None:
                    in_place = writer.erase_index_in_place()
                rows = conn.execute(
                    f"SELECT id, {', '.join(columns)} FROM {table} WHERE id > ? ORDER BY id LIMIT {BATCH_ROWS}",
                    (after,),
                ).fetchall()
                rewritten[kind] += _rewrite_changed(writer, table, columns, rows)
                redactions.update(writer.redactions)
            if not rows:
                break
            after = rows[-1]["id"]
            checked[kind] += len(rows)
            if progress:
                progress(sum(checked.values()), total)
    wiped = None
    if sum(rewritten.values()):
        if not in_place:
            with store.transaction() as writer:
                writer.merge_index()
        wiped = wipe(store)
    dropped = vectors_before - conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    return RescrubReport(
        {kind: checked[kind] for kind in KINDS.values()},
        {kind: rewritten[kind] for kind in KINDS.values()},
        dict(redactions.most_common()),
        max(0, dropped),
        wiped,
    )


def _scrubbed_columns(store: Store, table: str) -> list[str]:
    present = {row[1] for row in store.connection.execute(f"PRAGMA table_info({table})")}
    return [*TEXT_COLUMNS[table], *(column for column in JSON_COLUMNS if column in present)]


def _rewrite_changed(writer: Writer, table: str, columns: list[str], rows: list[Any]) -> int:
    """Rewrite the rows whose scrubbed text differs; the Writer scrubs (and counts) as on any write."""
    changed = 0
    for row in rows:
        values: dict[str, Any] = {}
        for column in columns:
            value = row[column]
            if value is None:
                continue
            if column in JSON_COLUMNS:
                parsed = json.loads(value)
                if scrub_value(parsed)[0] != parsed:
                    values[column] = parsed
            elif scrub(value).text != value:
                values[column] = value
        if values:
            writer.update(table, row["id"], values, touch=False)
            changed += 1
    return changed
