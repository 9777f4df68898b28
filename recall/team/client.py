"""`recall sync`: one machine's side of sharing with a team server (adr/0025).

Push first, then pull. Messages go in id order, in batches; the mark of the last one pushed moves
only after the server answered its batch, and the server imports by natural keys (host and
session id, message key), so a sync killed at any point resumes with at most one batch sent
twice, which adds nothing. Records go when new or changed since both sides last agreed
(``sync_links``); profiles when changed since the last sync. The pull brings the team's
decisions, learnings and profiles changed since the last change this machine saw.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from recall.errors import InvalidInput, StoreUnavailable
from recall.rowkinds import TABLE_NAMES, RecordKind
from recall.store.erase import forget_synced
from recall.store.synced import (
    SYNCED_KINDS,
    advance,
    apply_forgotten,
    apply_pulled,
    drop_forgets,
    link,
    links,
    pending_forgets,
    sync_key,
    sync_state,
)

if TYPE_CHECKING:
    from recall.memory import Memory
    from recall.store import Store

REMOTE_ENV = "RECALL_REMOTE"
MESSAGE_BATCH = 500
RECORD_BATCH = 200
TIMEOUT_S = 120


class Transport(Protocol):
    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]: ...


@dataclass
class HttpTransport:
    """JSON over HTTP(S) with the member's bearer token (TLS is the reverse proxy's, README)."""

    remote: str
    token: str

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.remote.rstrip("/") + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                result: dict[str, Any] = json.loads(answer.read() or b"{}")
                return result
        except urllib.error.HTTPError as exc:
            raise _refusal(self.remote, exc) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreUnavailable(
                f"cannot reach the team server {self.remote} ({reason}); check --remote / RECALL_REMOTE and "
                "that `recall serve` runs there, then sync again (nothing is lost: it resumes)"
            ) from exc


def _refusal(remote: str, exc: urllib.error.HTTPError) -> Exception:
    try:
        detail = json.loads(exc.read() or b"{}").get("error_description") or exc.reason
    except ValueError:
        detail = exc.reason
    if exc.code == 401:
        return InvalidInput(
            f"the team server {remote} does not accept this RECALL_TOKEN ({detail}); ask its admin for one "
            "(`recall serve token add NAME --projects ...`)"
        )
    return StoreUnavailable(f"the team server {remote} answered {exc.code}: {detail}")


@dataclass
class SyncReport:
    """What one sync did, both ways."""

    remote: str
    machine: str
    messages_pushed: int = 0
    messages_added: int = 0
    records_pushed: int = 0
    summaries_pushed: int = 0
    forgets_pushed: int = 0
    profiles_pushed: int = 0
    pulled_added: int = 0
    pulled_updated: int = 0
    profiles_pulled: int = 0
    forgotten_here: int = 0  # rows erased on this machine because the team forgot them
    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def message(self) -> str:
        text = (
            f"synced with {self.remote}: pushed {self.messages_pushed} messages ({self.messages_added} new there), "
            f"{self.records_pushed} records, {self.summaries_pushed} session summaries, {self.forgets_pushed} "
            f"forgets, {self.profiles_pushed} profile values; pulled {self.pulled_added} new and "
            f"{self.pulled_updated} changed records, {self.profiles_pulled} profile values; "
            f"{self.forgotten_here} rows the team forgot erased here"
        )
        lines = [text, *(f"conflict: {c}" for c in self.conflicts), *(f"refused: {r}" for r in self.refused)]
        return "\n".join(lines)


def sync(memory: Memory, remote: str, transport: Transport) -> SyncReport:
    """Push what this machine has that the server lacks, then pull what the team changed."""
    store = memory.store
    remote = sync_key(remote)  # the marks are kept under the scrubbed URL (it may carry a password)
    state = sync_state(store, remote)
    report = SyncReport(remote, str(state["machine"]))
    _push_forgets(store, remote, transport, report)  # first: a forgotten row is never pushed again
    _push_messages(store, remote, int(state["pushed_message_id"]), transport, report)
    _push_records(store, remote, report.machine, transport, report)
    _push_summaries(store, remote, report.machine, transport, report)
    _push_profiles(store, remote, str(state["profiles_at"]), transport, report)
    _pull(store, memory, remote, int(state["pulled_seq"]), transport, report)
    with store.reading() as conn:
        newest = conn.execute("SELECT coalesce(max(updated_at), '') FROM profiles").fetchone()[0]
    advance(store, remote, profiles_at=str(newest), synced_at=_now())
    return report


def _push_messages(store: Store, remote: str, after: int, transport: Transport, report: SyncReport) -> None:
    while True:
        with store.reading() as conn:
            rows = conn.execute(
                "SELECT m.id, m.external_id, m.role, m.origin, m.kind, m.tool_name, m.content, m.timestamp, "
                "m.meta, m.session_id, s.host, s.external_id AS session FROM messages m "
                "JOIN sessions s ON s.id = m.session_id WHERE m.id > ? ORDER BY m.id LIMIT ?",
                (after, MESSAGE_BATCH),
            ).fetchall()
            session_ids = sorted({int(row["session_id"]) for row in rows})
            sessions = conn.execute(
                f"SELECT * FROM sessions WHERE id IN ({', '.join('?' for _ in session_ids)})", session_ids
            ).fetchall()
        if not rows:
            return
        body = {
            "sessions": [_plain(row, drop=("id", "parent_id", "source_path")) for row in sessions],
            "messages": [_plain(row, drop=("id", "session_id")) for row in rows],
        }
        answer = transport.call("POST", "/sync/push", body)
        report.messages_pushed += len(rows)
        report.messages_added += int(answer.get("messages_added", 0))
        report.refused.extend(answer.get("refused", []))
        after = int(rows[-1]["id"])
        advance(store, remote, pushed_message_id=after)


def _push_records(store: Store, remote: str, machine: str, transport: Transport, report: SyncReport) -> None:
    for kind in SYNCED_KINDS:
        table = TABLE_NAMES[kind]
        with store.reading() as conn:
            rows = conn.execute(
                f"SELECT r.*, l.server_id AS linked FROM {table} r LEFT JOIN sync_links l "
                "ON l.remote = ? AND l.kind = ? AND l.local_id = r.id "
                "WHERE r.provenance IN ('user_authored', 'extracted') "
                "AND (l.local_id IS NULL OR r.updated_at > l.agreed_at) ORDER BY r.id",
                (remote, kind.value),
            ).fetchall()
        decisions = {
            local: server for server, local in links(store, remote, RecordKind.DECISION.value).items()
        }
        for start in range(0, len(rows), RECORD_BATCH):
            batch = rows[start : start + RECORD_BATCH]
            body = {"records": [_record(row, kind, machine, decisions) for row in batch]}
            answer = transport.call("POST", "/sync/push", body)
            by_origin = {item["origin"]: item for item in answer.get("records", [])}
            pairs = []
            gone: list[tuple[RecordKind, int]] = []
            for row in batch:
                item = by_origin.get(_origin(machine, kind, int(row["id"])))
                if item is not None and item.get("forgotten"):
                    gone.append((kind, int(row["id"])))
                elif item is not None:
                    pairs.append((int(row["id"]), int(item["server_id"]), str(row["updated_at"])))
                    if item.get("conflict"):
                        report.conflicts.append(f"{kind.value}#{row['id']}: {item['conflict']}")
            link(store, remote, kind.value, pairs)
            decisions.update(
                {local: server for local, server, _ in pairs} if kind is RecordKind.DECISION else {}
            )
            report.records_pushed += len(pairs)
            report.refused.extend(answer.get("refused", []))
            if gone:  # the team forgot them while this machine held a copy: the forget wins
                report.forgotten_here += _rows(forget_synced(store, gone).deleted)


def _push_forgets(store: Store, remote: str, transport: Transport, report: SyncReport) -> None:
    """Tombstones first, oldest first; each batch leaves the queue once the server answered it."""
    while True:
        items = pending_forgets(store, remote, RECORD_BATCH)
        if not items:
            return
        answer = transport.call(
            "POST", "/sync/push", {"forgotten": [_plain(item, drop=("id",)) for item in items]}
        )
        report.refused.extend(answer.get("refused", []))
        drop_forgets(store, [int(item["id"]) for item in items])
        report.forgets_pushed += len(items)


def _push_summaries(
    store: Store, remote: str, machine: str, transport: Transport, report: SyncReport
) -> None:
    """Session summaries, new or changed since both sides agreed, by their session's natural key."""
    kind = RecordKind.SESSION_SUMMARY
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT r.id, r.project, r.title, r.content, r.importance, r.meta, r.updated_at, s.host, "
            "s.external_id AS session FROM session_summaries r JOIN sessions s ON s.id = r.session_id "
            "LEFT JOIN sync_links l ON l.remote = ? AND l.kind = ? AND l.local_id = r.id "
            "WHERE l.local_id IS NULL OR r.updated_at > l.agreed_at ORDER BY r.id",
            (remote, kind.value),
        ).fetchall()
    for start in range(0, len(rows), RECORD_BATCH):
        batch = rows[start : start + RECORD_BATCH]
        items = [
            {**_plain(row, drop=("id",)), "origin": _origin(machine, kind, int(row["id"]))} for row in batch
        ]
        answer = transport.call("POST", "/sync/push", {"summaries": items})
        by_origin = {item["origin"]: item for item in answer.get("records", [])}
        pairs = [
            (int(row["id"]), int(found["server_id"]), str(row["updated_at"]))
            for row in batch
            if (found := by_origin.get(_origin(machine, kind, int(row["id"])))) is not None
        ]
        link(store, remote, kind.value, pairs)
        report.summaries_pushed += len(pairs)
        report.refused.extend(answer.get("refused", []))


def _record(row: Any, kind: RecordKind, machine: str, decisions: Mapping[int, int]) -> dict[str, Any]:
    data = _plain(row, drop=("session_id", "linked"))
    data["kind"] = kind.value
    data["origin"] = _origin(machine, kind, int(row["id"]))
    data["server_id"] = row["linked"]
    successor = data.pop("superseded_by", None)
    if successor is not None:
        data["superseded_by_server"] = decisions.get(int(successor))
        data["superseded_by_origin"] = _origin(machine, RecordKind.DECISION, int(successor))
    data.pop("id", None)
    return data


def _push_profiles(store: Store, remote: str, since: str, transport: Transport, report: SyncReport) -> None:
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT project, key, value FROM profiles WHERE updated_at > ? ORDER BY id", (since,)
        ).fetchall()
    if rows:
        answer = transport.call(
            "POST", "/sync/push", {"profiles": [dict(zip(row.keys(), row, strict=True)) for row in rows]}
        )
        report.profiles_pushed += len(rows)
        report.refused.extend(answer.get("refused", []))


def _pull(
    store: Store, memory: Memory, remote: str, since: int, transport: Transport, report: SyncReport
) -> None:
    while True:
        answer = transport.call("GET", f"/sync/pull?since={since}")
        counts = apply_pulled(store, remote, answer.get("records", []))
        report.forgotten_here += _rows(apply_forgotten(store, remote, answer.get("forgotten", [])))
        report.pulled_added += counts.added
        report.pulled_updated += counts.updated
        report.conflicts.extend(counts.conflicts)
        for row in answer.get("profiles", []):
            current = {entry.key: entry.value for entry in memory.profile(str(row["project"])).entries}
            if current.get(str(row["key"])) != row["value"]:
                memory.set_profile(str(row["key"]), str(row["value"]), project=str(row["project"]))
                report.profiles_pulled += 1
        since = int(answer.get("next", since))
        advance(store, remote, pulled_seq=since)
        if not answer.get("more"):
            return


def _rows(deleted: Mapping[str, int]) -> int:
    """Rows erased (their vectors are not rows of their own)."""
    return sum(n for kind, n in deleted.items() if kind != "vector")


def _origin(machine: str, kind: RecordKind, local_id: int) -> str:
    return f"{machine}:{kind.value}:{local_id}"


def _plain(row: Any, *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    data = {key: row[key] for key in row.keys() if key not in drop}  # noqa: SIM118 - a row, not a dict
    for column in ("meta", "tags"):
        if isinstance(data.get(column), str):
            try:
                data[column] = json.loads(data[column])
            except ValueError:
                data[column] = {} if column == "meta" else []
    return data


def _now() -> str:
    from recall.store.writer import to_db_time, utc_now

    return str(to_db_time(utc_now()))
