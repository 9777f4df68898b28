"""Refreshing a record instead of adding its near-duplicate, and merging near-duplicates already stored.

Which records are near-duplicates is decided above the store (recall.near_duplicates, which needs
the model); this module only writes the outcome, in one transaction each, through the Writer:

* a refresh moves the record's ``updated_at`` and takes what the new wording adds: tags it lacked,
  a higher importance, a detail where it had none, a later expiry (none, when one never expires).
  Its content stays: the person or agent sees which record already said it and can correct it, or
  add anyway (``force``). An extracted record refreshed this way counts as accepted in review:
  someone said it on purpose;
* a merge keeps one record and folds the others into it the same way, plus their sources; a
  decision that was superseded by a merged one is now superseded by the one kept. The merged
  records are then deleted and the disk wiped like any forget (adr/0014).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.rowkinds import KIND_CODES, TABLE_NAMES, TYPED_KINDS, Provenance, RecordKind
from recall.store.synced import tombstone_records
from recall.store.writer import to_db_time

if TYPE_CHECKING:
    from recall.store import Store
    from recall.store.wipe import Wiped


def refresh(store: Store, kind: RecordKind, row_id: int, offered: Mapping[str, Any]) -> None:
    """Refresh a live record with what a near-duplicate wording ``offered`` (tags, importance, detail,
    valid_until); ``updated_at`` moves even when nothing else does."""
    _require_typed(kind)
    with store.transaction() as writer:
        kept = _row(store.connection, kind, row_id)
        writer.update(TABLE_NAMES[kind], row_id, _gains(kind, kept, [offered]))
        if kept["provenance"] == Provenance.EXTRACTED.value:
            # A person or agent said on purpose what extraction found: as good as accepting it in review.
            writer.update_lineage(KIND_CODES[kind], row_id, review="accepted")


def merge(store: Store, kind: RecordKind, keep: int, merged: Sequence[int]) -> Wiped | None:
    """Fold ``merged`` records into ``keep`` (tags, importance, detail, expiry, sources, supersession
    links), delete them and wipe their text; None when there was nothing to merge."""
    from recall.store.wipe import wipe

    _require_typed(kind)
    others = [row_id for row_id in dict.fromkeys(merged) if row_id != keep]
    if not others:
        return None
    table, code = TABLE_NAMES[kind], KIND_CODES[kind]
    with store.transaction() as writer:
        conn = store.connection
        kept = _row(conn, kind, keep)
        rows = [_row(conn, kind, row_id) for row_id in others]
        writer.update(table, keep, _gains(kind, kept, rows))
        writer.add_sources(code, keep, _sources(conn, code, others))
        if kind is RecordKind.DECISION:
            writer.repoint_supersession(others, keep)
        marks = ", ".join("?" for _ in others)
        in_place = writer.erase_index_in_place()
        tombstone_records(conn, writer, kind, marks, others)  # the team's copies fold away too (adr/0039)
        conn.execute(f"DELETE FROM {table} WHERE id IN ({marks})", others)
        if not in_place:
            writer.merge_index()
    return wipe(store)


def _gains(kind: RecordKind, kept: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the kept record takes from the others: never its content, never less than it has."""
    tags = list(_tags(kept["tags"]))
    for other in others:
        tags += [tag for tag in _tags(other.get("tags")) if tag not in tags]
    gains: dict[str, Any] = {"tags": tags}
    importance = max(
        [int(kept["importance"])] + [int(o["importance"]) for o in others if o.get("importance")]
    )
    if importance != kept["importance"]:
        gains["importance"] = importance
    if not kept["detail"]:
        detail = next((o["detail"] for o in others if o.get("detail")), None)
        if detail:
            gains["detail"] = detail
    if kept.get("valid_until") is not None:  # every typed kind may expire (adr/0026)
        ends = [_when(o["valid_until"]) for o in others if "valid_until" in o]
        if any(end is None for end in ends):
            gains["valid_until"] = None  # one of them never expires: neither does the merged record
        elif ends:
            latest = max(end for end in ends if end is not None)
            if latest > kept["valid_until"]:
                gains["valid_until"] = latest
    return gains


def _sources(conn: sqlite3.Connection, code: int, ids: Sequence[int]) -> list[int]:
    marks = ", ".join("?" for _ in ids)
    return [
        int(row[0])
        for row in conn.execute(
            f"SELECT message_id FROM record_sources WHERE kind_code = ? AND record_id IN ({marks})",
            (code, *ids),
        )
    ]


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = json.loads(value) if value.startswith("[") else value.split(",")
    return [str(tag) for tag in value or ()]


def _when(value: Any) -> str | None:
    return to_db_time(value) if value is not None and not isinstance(value, str) else value


def _row(conn: sqlite3.Connection, kind: RecordKind, row_id: int) -> dict[str, Any]:
    row = conn.execute(f"SELECT * FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        raise InvalidInput(f"no {kind.value} with id {row_id}; list or search to find the right id")
    return dict(row)


def _require_typed(kind: RecordKind) -> None:
    if kind not in TYPED_KINDS:
        raise InvalidInput(
            f"only decisions, learnings and breadcrumbs are refreshed or merged, not {kind.value}"
        )
