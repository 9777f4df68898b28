"""Writing records read from an export file (recall.records_import): each one through the Writer,
scrubbed and stamped ``user_authored`` like `recall add` (adr/0032), in short transactions.

A record already stored (same project, kind and scrubbed content; for a note, the same path) is not
written again, so importing a file twice adds nothing. Ids are new: the caller gets the map from the
file's ids to the stored ones and restores supersession links once every decision is in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.models import TABLE_NAMES, Provenance, RecordKind
from recall.store.entities import connect_record
from recall.store.writer import clean_row

if TYPE_CHECKING:
    from recall.store import Store

BATCH = 200


@dataclass(frozen=True, slots=True)
class IncomingRecord:
    """One validated record from a file: its kind, its id there, its columns, when it last changed."""

    kind: RecordKind
    old_id: int | None
    values: Mapping[str, Any]  # columns to insert (text scrubbed by the Writer), created_at included
    updated_at: str | None
    superseded_by: int | None = None  # a decision's successor, by its id in the file


def write_imported(store: Store, batch: Sequence[IncomingRecord]) -> list[tuple[IncomingRecord, int, bool]]:
    """Store ``batch`` in one transaction: (record, its id here, whether it was new) for each."""
    done: list[tuple[IncomingRecord, int, bool]] = []
    with store.transaction() as writer:
        conn = store.connection
        for record in batch:
            table = TABLE_NAMES[record.kind]
            keys = {key: record.values[key] for key in ("project", "content", "path") if key in record.values}
            clean = clean_row(table, keys).values  # compared as it would be stored
            if record.kind is RecordKind.NOTE:
                found = conn.execute(
                    "SELECT id FROM notes WHERE project = ? AND path = ?", (clean["project"], clean["path"])
                ).fetchone()
            else:
                found = conn.execute(
                    f"SELECT id FROM {table} WHERE project = ? AND content = ?",
                    (clean["project"], clean["content"]),
                ).fetchone()
            if found is not None:
                done.append((record, int(found[0]), False))
                continue
            row_id = writer.insert(table, record.values, Provenance.USER_AUTHORED)
            if record.updated_at:
                writer.restore_updated_at(table, row_id, record.updated_at)
            connect_record(conn, writer, record.kind, row_id)
            done.append((record, row_id, True))
    return done


def link_superseded(store: Store, links: Sequence[tuple[int, int]]) -> None:
    """(decision id, id of the decision that superseded it), both as stored here."""
    if not links:
        return
    with store.transaction() as writer:
        for decision_id, by in links:
            writer.link_superseded(decision_id, by)
