"""Rows a sync brings or takes: written here, through the one write path, on either backend (adr/0025).

A synced record is a copy of a row another recall store's write path already stamped; the
receiving write path stamps it again from what the row is, never from a free value: a decision,
learning or breadcrumb arrives ``user_authored`` or ``extracted`` (anything else is refused), and
its text passes this side's scrubber. Status changes follow the lifecycle invariant (only an
active decision changes status), which is also the conflict rule: the first change wins.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.rowkinds import TABLE_NAMES, DecisionStatus, Provenance, RecordKind
from recall.store.writer import to_db_time, utc_now

if TYPE_CHECKING:
    from recall.store import Store
    from recall.store.writer import Writer

SYNCED_KINDS = (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB)
# Records a forget reaches on the other side by their row there (sessions and messages go by digest).
FORGOTTEN_KINDS = frozenset(
    {RecordKind.DECISION.value, RecordKind.LEARNING.value, RecordKind.BREADCRUMB.value, "session_summary"}
)
SYNCED_PROVENANCE = frozenset({Provenance.USER_AUTHORED.value, Provenance.EXTRACTED.value})
# The columns a synced record carries, per kind (as the SQLite tables have them).
RECORD_COLUMNS: dict[RecordKind, tuple[str, ...]] = {
    RecordKind.DECISION: (
        "project", "content", "detail", "tags", "confidence", "importance", "valid_until", "source", "meta",
    ),
    RecordKind.LEARNING: (
        "project", "content", "detail", "tags", "confidence", "importance", "valid_until", "source", "meta",
    ),
    RecordKind.BREADCRUMB: ("project", "content", "detail", "tags", "importance", "valid_until", "source", "meta"),
}  # fmt: skip
EDITABLE = ("content", "detail", "tags", "confidence", "importance", "valid_until", "source", "meta")


@dataclass(slots=True)
class Applied:
    """What applying one synced record did: its id on this side, and a conflict, if it lost one."""

    id: int
    outcome: str  # added, updated, unchanged
    status: str | None = None
    conflict: str | None = None


@dataclass(slots=True)
class PulledCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    profiles: int = 0
    conflicts: list[str] = field(default_factory=list)


def record_kind(name: str) -> RecordKind:
    kind = RecordKind(name)
    if kind not in SYNCED_KINDS:
        raise InvalidInput(f"{name} rows are not synced; decisions, learnings and breadcrumbs are")
    return kind


def provenance_of(row: Mapping[str, Any]) -> Provenance:
    value = row.get("provenance")
    if value not in SYNCED_PROVENANCE:
        raise InvalidInput(f"a synced record is user_authored or extracted, not {value!r}")
    return Provenance(value)


def record_values(kind: RecordKind, row: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of ``kind`` found in ``row`` (JSON columns as objects; the writer serialises)."""
    values = {column: row.get(column) for column in RECORD_COLUMNS[kind] if column in row}
    for column in ("tags", "meta"):
        value = values.get(column)
        if isinstance(value, str):
            values[column] = json.loads(value)
    return values


def write_record(
    store: Store, writer: Writer, kind: RecordKind, row: Mapping[str, Any], target: int | None
) -> Applied:
    """Insert ``row`` (``target`` None) or bring the row ``target`` up to it: edits when ``row`` is
    newer, a status change only when the stored decision is still active."""
    table = TABLE_NAMES[kind]
    values = record_values(kind, row)
    if target is None:
        values["created_at"] = row.get("created_at") or to_db_time(utc_now())
        new_id = writer.insert(table, values, provenance_of(row))
        return Applied(new_id, "added", DecisionStatus.ACTIVE.value if kind is RecordKind.DECISION else None)
    stored = store.connection.execute(f"SELECT * FROM {table} WHERE id = ?", (target,)).fetchone()
    if stored is None:
        raise InvalidInput(f"no {kind.value} {target} to update")
    stored_data = {key: stored[key] for key in stored.keys()}  # noqa: SIM118 - a row, not a dict
    changes = {
        column: values[column]
        for column in EDITABLE
        if column in values and _differs(stored_data.get(column), values[column])
    }
    outcome = "unchanged"
    if changes and str(row.get("updated_at") or "") > str(stored_data["updated_at"]):
        writer.update(table, target, changes)
        outcome = "updated"
    return Applied(target, outcome, stored_data.get("status"))


def change_status(
    store: Store, writer: Writer, decision_id: int, status: str, superseded_by: int | None
) -> tuple[str, str | None]:
    """Apply a decision's status from the other side: (status now, conflict or None)."""
    current = store.connection.execute(
        "SELECT status, superseded_by FROM decisions WHERE id = ?", (decision_id,)
    ).fetchone()
    if current is None:
        return (status, None)
    if status == current[0] and (superseded_by is None or superseded_by == current[1]):
        return (status, None)
    if current[0] != DecisionStatus.ACTIVE.value:
        return (
            str(current[0]),
            f"decision {decision_id} was already {current[0]}"
            + (f" by decision {current[1]}" if current[1] else "")
            + f" when it arrived {status}"
            + (f" by decision {superseded_by}" if superseded_by else "")
            + ": the first change wins, and both successors stay active for a person to settle",
        )
    if status not in (DecisionStatus.SUPERSEDED.value, DecisionStatus.REVERTED.value):
        return (str(current[0]), None)  # back to active is not a lifecycle move
    writer.update("decisions", decision_id, {"status": status, "superseded_by": superseded_by})
    return (status, None)


def _expired(row: Mapping[str, Any], now: str) -> bool:
    until = row.get("valid_until")
    return until is not None and str(until) <= now


def apply_forgotten(store: Store, remote: str, items: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Erase here what the team forgot (a pull's tombstones, or a push answered "forgotten"):
    records this machine holds a copy of (its ``sync_links``), sessions by digest. Nothing is queued
    back for the server, and rows this machine never had are passed over."""
    from recall.store.erase import forget_synced

    records: list[tuple[RecordKind, int]] = []
    digests: list[tuple[str, str, str]] = []
    for item in items:
        kind = str(item.get("kind"))
        if kind in FORGOTTEN_KINDS and item.get("server_id") is not None:
            local = links(store, remote, kind).get(int(item["server_id"]))
            if local is not None:
                records.append((RecordKind(kind), local))
        elif kind == "session" and item.get("digest"):
            digests.append(("session", str(item["digest"]), str(item["digest"])))
    if not records and not digests:
        return {}
    return forget_synced(store, records, digests).deleted


def tombstone_records(
    conn: Any, writer: Writer, kind: RecordKind, ids_sql: str, params: Sequence[Any]
) -> None:
    """Queue, for each team server holding them, the records ``ids_sql`` selects (before they are
    deleted: deleting drops their ``sync_links``), so the next sync erases them there (adr/0039)."""
    rows = conn.execute(
        f"SELECT remote, server_id FROM sync_links WHERE kind = ? AND local_id IN ({ids_sql})",
        [kind.value, *params],
    ).fetchall()
    writer.queue_sync_forgets((str(r[0]), kind.value, int(r[1]), None, None) for r in rows)


def tombstone_digests(conn: Any, writer: Writer, rows: Sequence[tuple[str, str, str]]) -> None:
    """Queue forgotten sessions or messages, (kind, digest, session digest), for every team server
    this machine has synced with; a server that never held them remembers them all the same, so no
    machine's push brings them there."""
    remotes = [str(row[0]) for row in conn.execute("SELECT remote FROM sync_state")]
    writer.queue_sync_forgets((remote, kind, None, d, sd) for remote in remotes for kind, d, sd in rows)


def pending_forgets(store: Store, remote: str, limit: int) -> list[dict[str, Any]]:
    """The oldest tombstones queued for ``remote`` (m0016_sync_forgets)."""
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT id, kind, server_id, digest, session_digest FROM sync_forgets WHERE remote = ? "
            "ORDER BY id LIMIT ?",
            (remote, limit),
        ).fetchall()
    return [{key: row[key] for key in row.keys()} for row in rows]  # noqa: SIM118 - a row, not a dict


def drop_forgets(store: Store, ids: Sequence[int]) -> None:
    """Tombstones the server answered for: they are done."""
    with store.transaction():
        store.connection.executemany("DELETE FROM sync_forgets WHERE id = ?", [(i,) for i in ids])


def _differs(stored: Any, incoming: Any) -> bool:
    if isinstance(incoming, list | dict):
        try:
            return bool(json.loads(stored or "null") != incoming)
        except (TypeError, ValueError):
            return True
    return bool(stored != incoming)


# -- a client's own bookkeeping (m0014_sync) ------------------------------------------------------


def sync_key(remote: str) -> str:
    """How a server's URL is remembered: scrubbed, like every text written (a URL may carry a password)."""
    from recall.scrub import scrub

    return scrub(remote).text


def sync_state(store: Store, remote: str) -> dict[str, Any]:
    """This machine's sync state with ``remote``, made (with a new machine id) on the first sync."""
    with store.transaction() as writer:
        writer.remember_sync(remote, uuid.uuid4().hex)
        row = store.connection.execute("SELECT * FROM sync_state WHERE remote = ?", (remote,)).fetchone()
    return {key: row[key] for key in row.keys()}  # noqa: SIM118 - a row, not a dict


def advance(store: Store, remote: str, **values: Any) -> None:
    """Move the marks of a sync (ids, sequence numbers and times: nothing to scrub)."""
    allowed = {"pushed_message_id", "pulled_seq", "profiles_at", "synced_at"}
    if not values or set(values) - allowed:
        raise ValueError(f"sync_state has no columns {sorted(set(values) - allowed)}")
    assignments = ", ".join(f"{column} = ?" for column in values)
    with store.transaction():
        store.connection.execute(
            f"UPDATE sync_state SET {assignments} WHERE remote = ?", (*values.values(), remote)
        )


def link(store: Store, remote: str, kind: str, pairs: Iterable[tuple[int, int, str]]) -> None:
    """Remember local id ↔ server id, and the ``updated_at`` both sides agreed on."""
    rows = [(remote, kind, local, server, agreed) for local, server, agreed in pairs]
    if not rows:
        return
    with store.transaction() as writer:
        writer.link_synced(rows)


def links(store: Store, remote: str, kind: str) -> dict[int, int]:
    """server id → local id for ``kind``."""
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT server_id, local_id FROM sync_links WHERE remote = ? AND kind = ?", (remote, kind)
        ).fetchall()
    return {int(server): int(local) for server, local in rows}


def apply_pulled(store: Store, remote: str, records: Sequence[Mapping[str, Any]]) -> PulledCounts:
    """Write the team's records a pull brought: new ones added, known ones brought up to date."""
    counts = PulledCounts()
    now = str(to_db_time(utc_now()))
    for row in records:
        kind = record_kind(str(row["kind"]))
        known = links(store, remote, kind.value)
        if int(row["server_id"]) not in known and _expired(row, now):
            continue  # a breadcrumb that ended before it got here: nothing to show, nothing to keep
        decisions = links(store, remote, RecordKind.DECISION.value)
        with store.transaction() as writer:
            applied = write_record(store, writer, kind, row, known.get(int(row["server_id"])))
            if kind is RecordKind.DECISION and row.get("status") not in (None, DecisionStatus.ACTIVE.value):
                successor = decisions.get(int(row["superseded_by"])) if row.get("superseded_by") else None
                _, conflict = change_status(store, writer, applied.id, str(row["status"]), successor)
                if conflict:
                    counts.conflicts.append(conflict)
            agreed = store.connection.execute(
                f"SELECT updated_at FROM {TABLE_NAMES[kind]} WHERE id = ?", (applied.id,)
            ).fetchone()[0]
        link(store, remote, kind.value, [(applied.id, int(row["server_id"]), str(agreed))])
        setattr(counts, applied.outcome, getattr(counts, applied.outcome) + 1)
    return counts
