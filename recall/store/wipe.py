"""What makes a delete final on disk: after it, no byte of the old text is left in a file recall writes.

SQLite's DELETE only unlinks a row. Its text stays in free space, in older copies of the page in
the write-ahead log, in the keyword index (a contentless FTS5 delete adds a tombstone beside the
entry, which keeps the words until the segments merge) and in the vector snapshot. So every forget,
purge and rescrub ends here (adr/0014):

- every connection runs with ``PRAGMA secure_delete`` (recall.db), so freed space is zeroed;
- the deleting transaction has FTS5 drop the words in place (SQLite 3.43+) or merges the index
  into one segment before it commits (``Writer.erase_index_in_place``, ``Writer.merge_index``);
- a database written before secure_delete was on is vacuumed once (``vacuum_pending``);
- the write-ahead log is checkpointed and truncated;
- every vector snapshot of the database is deleted and this process's vector indexes dropped.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recall.store import Store


@dataclass(frozen=True, slots=True)
class Wiped:
    """What the last steps of an erase did; ``notes`` says what could not be done, and why."""

    vacuumed: bool
    checkpointed: bool
    snapshots_removed: int
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "vacuumed": self.vacuumed,
            "checkpointed": self.checkpointed,
            "snapshots_removed": self.snapshots_removed,
            "notes": list(self.notes),
        }


def wipe(store: Store, *, vacuum: bool = False) -> Wiped:
    """Run after the deleting transaction committed; ``vacuum`` compacts the file whatever it owes."""
    notes: list[str] = []
    vacuumed = _vacuum(store, notes) if vacuum or _vacuum_owed(store) else False
    checkpointed = _checkpoint(store, notes)
    return Wiped(vacuumed, checkpointed, store.drop_derived(), tuple(notes))


def _vacuum_owed(store: Store) -> bool:
    with store.reading() as conn:
        return conn.execute("SELECT 1 FROM vacuum_pending LIMIT 1").fetchone() is not None


def _vacuum(store: Store, notes: list[str]) -> bool:
    """Rewrite the file: free pages from before secure_delete go, and the file shrinks."""
    with store.reading() as conn:  # the store's lock, outside any transaction: VACUUM needs that
        try:
            conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            notes.append(
                f"the database was not compacted ({exc}); free space written before secure_delete is "
                "wiped by the next forget, purge or rescrub"
            )
            return False
    with store.transaction():
        store.connection.execute("DELETE FROM vacuum_pending")
    return True


def _checkpoint(store: Store, notes: list[str]) -> bool:
    """Copy the write-ahead log into the file and truncate it: older page copies leave with it."""
    with store.reading() as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        notes.append(
            "another recall process kept reading, so the write-ahead log still holds old pages; "
            "they go at its next checkpoint (any later forget, purge or rescrub forces one)"
        )
    return not busy
