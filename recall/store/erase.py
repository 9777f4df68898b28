"""Forgetting rows for good: one by kind and id, or many records by filter behind a confirmation.

Forget means gone (adr/0014): the row, what only it produced (a session's messages, summary,
subagent sessions, vectors and source-file bookkeeping; a message's place in its session's
summary), and every byte of its text on disk (recall.store.wipe). A forgotten session or message
is remembered by a digest only, so a transcript still on disk does not bring it back on the next
import (recall.store.forgotten).

Deleting many records at once is guarded: the age filter is at least a day, a call without
``confirm`` equal to the number it would delete deletes nothing and answers that number with a
sample, and acting on every project takes ``project='*'``.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.project import ALL_PROJECTS
from recall.rowkinds import KIND_CODES, TABLE_NAMES, TYPED_KINDS, RecordKind
from recall.store.forgotten import message_digest, session_digest
from recall.store.records import normalise_tags
from recall.store.synced import tombstone_digests, tombstone_records
from recall.store.wipe import Wiped, wipe
from recall.store.writer import Writer, to_db_time, utc_now

if TYPE_CHECKING:
    from recall.kinds import Ref
    from recall.store import Store

SAMPLE_SIZE = 5
PREVIEW_CHARS = 80


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What ``forget`` removed; ``deleted`` counts rows per kind, vectors included."""

    kind: str
    id: int
    found: bool
    deleted: dict[str, int] = field(default_factory=dict)
    skipped_on_import: int = 0  # sessions and messages the next import will pass over
    source_path: str | None = None  # a forgotten session's transcript, which recall leaves on disk
    kept_sessions: tuple[int, ...] = ()  # resumed or forked sessions that stay (they are their own)
    summary_rebuilt: bool = False
    wiped: Wiped | None = None

    @property
    def message(self) -> str:
        if not self.found:
            return f"no {self.ref}; search or list to find the right id"
        parts = [f"{self.ref} forgotten"]
        others = {k: n for k, n in self.deleted.items() if n and k != self.kind}
        if others:
            parts[0] += " with " + ", ".join(f"{n:,} {_plural(k, n)}" for k, n in others.items())
        if self.summary_rebuilt:
            parts.append("its session's summary was rebuilt without it")
        if self.skipped_on_import:
            parts.append("recall remembers only that it is forgotten (no text), so imports skip it")
        if self.source_path:
            parts.append(f"its transcript is still at {self.source_path}; delete it there too if it must go")
        if self.kept_sessions:
            ids = ", ".join(str(i) for i in self.kept_sessions)
            parts.append(f"sessions resumed or forked from it are kept: {ids}")
        if self.wiped is not None and self.wiped.checkpointed:
            parts.append("no copy of its text is left in recall's files")
        return "; ".join(parts + list(self.wiped.notes if self.wiped else ()))

    @property
    def ref(self) -> str:
        return f"{self.kind}#{self.id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "id": self.id,
            "found": self.found,
            "deleted": self.deleted,
            "skipped_on_import": self.skipped_on_import,
            "source_path": self.source_path,
            "kept_sessions": list(self.kept_sessions),
            "summary_rebuilt": self.summary_rebuilt,
            "wiped": self.wiped.to_dict() if self.wiped else None,
        }


def forget(store: Store, ref: Ref) -> ForgetReport:
    """Delete one row of any kind and everything only it produced, then wipe the disk."""
    kind, row_id = ref.kind.value, ref.id
    with store.transaction() as writer:
        in_place = writer.erase_index_in_place()
        conn = store.connection
        if kind == "session":
            report = _forget_session(conn, writer, row_id)
        elif kind == RecordKind.MESSAGE.value:
            report = _forget_message(store, writer, row_id)
        else:
            tombstone_records(conn, writer, RecordKind(kind), "SELECT ?", [row_id])
            report = _forget_row(conn, RecordKind(kind), row_id)
        if report.found and not in_place:
            writer.merge_index()
    return replace(report, wiped=wipe(store)) if report.found else report


def _forget_row(conn: sqlite3.Connection, kind: RecordKind, row_id: int) -> ForgetReport:
    vectors = _vector_count(conn, KIND_CODES[kind], [row_id])
    found = conn.execute(f"DELETE FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).rowcount > 0
    deleted = {kind.value: 1, "vector": vectors} if found else {}
    return ForgetReport(kind.value, row_id, found, deleted)


def _forget_message(store: Store, writer: Writer, row_id: int) -> ForgetReport:
    """A message, remembered by digest so a re-read transcript skips it; its summary is rebuilt."""
    conn = store.connection
    row = conn.execute(
        "SELECT m.session_id, m.external_id AS key, s.host, s.external_id AS session "
        "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?",
        (row_id,),
    ).fetchone()
    if row is None:
        return ForgetReport("message", row_id, False)
    own = session_digest(row["host"], row["session"])
    digest = message_digest(row["host"], row["session"], row["key"])
    writer.remember_forgotten([(digest, own, "message")])
    tombstone_digests(conn, writer, [("message", digest, own)])
    extracted = drop_extracted(conn, "SELECT ?", [row_id], tombstones=writer)
    report = _forget_row(conn, RecordKind.MESSAGE, row_id)
    rebuilt = _rebuild_summary(store, writer, row["session_id"])
    deleted = {**report.deleted, "extracted record": extracted}
    return ForgetReport("message", row_id, True, deleted, skipped_on_import=1, summary_rebuilt=rebuilt)


def _rebuild_summary(store: Store, writer: Writer, session_id: int) -> bool:
    """A summary quotes its session's messages (the first request, decision lines): build it again."""
    from recall.summary import build_summary

    conn = store.connection
    summary = conn.execute("SELECT id FROM session_summaries WHERE session_id = ?", (session_id,)).fetchone()
    if summary is None:
        return False
    messages = store.session_messages(session_id)
    if not messages:
        conn.execute("DELETE FROM session_summaries WHERE id = ?", (summary["id"],))
        return True
    title = conn.execute("SELECT title FROM sessions WHERE id = ?", (session_id,)).fetchone()["title"]
    draft = build_summary(title, messages)
    writer.update(
        "session_summaries",
        summary["id"],
        {"title": draft.title, "content": draft.content, "meta": draft.meta},
    )
    return True


def _forget_session(conn: sqlite3.Connection, writer: Writer, row_id: int) -> ForgetReport:
    row = conn.execute("SELECT source_path FROM sessions WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        return ForgetReport("session", row_id, False)
    children = conn.execute(
        "SELECT id, agent_id IS NOT NULL AS subagent FROM sessions WHERE parent_id = ?", (row_id,)
    ).fetchall()
    subagents = [child["id"] for child in children if child["subagent"]]
    kept = tuple(child["id"] for child in children if not child["subagent"])  # resumes and forks
    deleted = delete_sessions(conn, writer, [row_id, *subagents], propagate=True)
    deleted["session"] -= len(subagents)
    deleted["subagent session"] = len(subagents)
    return ForgetReport(
        "session",
        row_id,
        True,
        deleted,
        skipped_on_import=1 + len(subagents),
        source_path=row["source_path"],
        kept_sessions=kept,
    )


def delete_sessions(
    conn: sqlite3.Connection, writer: Writer, ids: Sequence[int], *, propagate: bool = False
) -> dict[str, int]:
    """Delete sessions with their messages, summaries and vectors; remember them; drop the
    bookkeeping of source files that held nothing else. Runs inside the caller's transaction.
    ``propagate`` (a forget, not a purge) also queues them, and the extracted records only they
    produced, for the team servers this machine syncs with (adr/0039)."""
    deleted = {"session": 0, "message": 0, "session_summary": 0, "vector": 0, "extracted record": 0}
    for begin in range(0, len(ids), _CHUNK):
        batch = list(ids[begin : begin + _CHUNK])
        marks = ", ".join("?" for _ in batch)
        deleted["extracted record"] += drop_extracted(
            conn,
            f"SELECT id FROM messages WHERE session_id IN ({marks})",
            batch,
            tombstones=writer if propagate else None,
        )
        sessions = conn.execute(
            f"SELECT host, external_id, source_path FROM sessions WHERE id IN ({marks})", batch
        ).fetchall()
        digests = [session_digest(r[0], r[1]) for r in sessions]
        writer.remember_forgotten((digest, digest, "session") for digest in digests)
        if propagate:
            tombstone_digests(conn, writer, [("session", digest, digest) for digest in digests])
        messages = f"SELECT id FROM messages WHERE session_id IN ({marks})"
        summaries = f"SELECT id FROM session_summaries WHERE session_id IN ({marks})"
        if propagate:
            tombstone_records(conn, writer, RecordKind.SESSION_SUMMARY, summaries, batch)
        deleted["message"] += conn.execute(f"SELECT count(*) FROM ({messages})", batch).fetchone()[0]
        deleted["session_summary"] += conn.execute(f"SELECT count(*) FROM ({summaries})", batch).fetchone()[0]
        deleted["vector"] += conn.execute(
            f"SELECT count(*) FROM embeddings WHERE (kind_code = {KIND_CODES[RecordKind.MESSAGE]} AND row_id "
            f"IN ({messages})) OR (kind_code = {KIND_CODES[RecordKind.SESSION_SUMMARY]} AND row_id IN ({summaries}))",
            batch * 2,
        ).fetchone()[0]
        deleted["session"] += conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", batch).rowcount
        _drop_lone_sources(conn, {(r[0], r[2]) for r in sessions if r[2]})
    return deleted


def drop_extracted(
    conn: sqlite3.Connection, messages_sql: str, params: Sequence[Any], *, tombstones: Writer | None = None
) -> int:
    """Delete the extracted records that only the given messages produced (``messages_sql`` selects
    their ids): their text is a copy of what is being forgotten. A record other messages also back
    keeps them as its sources, and a person's own record is never deleted this way. With
    ``tombstones`` (a forget) the team servers' copies are queued to go too."""
    removed = 0
    for kind in TYPED_KINDS:
        code = KIND_CODES[kind]
        table = TABLE_NAMES[kind]
        chosen = (
            f"SELECT id FROM {table} WHERE provenance = 'extracted' AND id IN ("
            f"SELECT record_id FROM record_sources WHERE kind_code = {code} AND message_id IN ({messages_sql})) "
            f"AND NOT EXISTS (SELECT 1 FROM record_sources other WHERE other.kind_code = {code} "
            f"AND other.record_id = {table}.id AND other.message_id NOT IN ({messages_sql}))"
        )
        if tombstones is not None:
            tombstone_records(conn, tombstones, kind, chosen, [*params, *params])
        removed += conn.execute(f"DELETE FROM {table} WHERE id IN ({chosen})", [*params, *params]).rowcount
    return removed


_CHUNK = 400  # ids per statement, under SQLite's bound-variable limit even when used twice


def _drop_lone_sources(conn: sqlite3.Connection, sources: Iterable[tuple[str, str]]) -> None:
    """A source file whose every session is gone was only theirs: its bookkeeping goes too."""
    for host, path in sources:
        if conn.execute("SELECT 1 FROM sessions WHERE source_path = ? LIMIT 1", (path,)).fetchone():
            continue
        conn.execute(
            "DELETE FROM source_files WHERE host = ? AND path IN (?, ?)",
            (host, path, str(Path(path).resolve())),
        )


def _vector_count(conn: sqlite3.Connection, code: int, ids: Sequence[int]) -> int:
    marks = ", ".join("?" for _ in ids)
    return conn.execute(
        f"SELECT count(*) FROM embeddings WHERE kind_code = ? AND row_id IN ({marks})", (code, *ids)
    ).fetchone()[0]


def _plural(kind: str, count: int) -> str:
    name = kind.replace("_", " ")
    if count == 1:
        return name
    return name.removesuffix("y") + "ies" if name.endswith("ry") else name + "s"


# -- many records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Match:
    """One record a bulk forget would delete, shown so the caller can check before confirming."""

    kind: str
    id: int
    project: str
    created_at: str
    preview: str

    @property
    def ref(self) -> str:
        return f"{self.kind}#{self.id}"


@dataclass(frozen=True, slots=True)
class BulkForgetReport:
    """``matched`` records fit the filters; they were deleted only if ``confirmed``."""

    matched: int
    confirmed: bool
    deleted: dict[str, int]
    sample: tuple[Match, ...]
    wiped: Wiped | None = None

    @property
    def total(self) -> int:
        return sum(self.deleted.values())

    @property
    def message(self) -> str:
        counts = ", ".join(f"{kind} {n}" for kind, n in self.deleted.items())
        if self.confirmed:
            return f"forgot {self.total} records ({counts})"
        if not self.matched:
            return "no record matches those filters; nothing forgotten"
        shown = "; ".join(f"{m.kind}#{m.id} ({m.project}): {m.preview}" for m in self.sample)
        return (
            f"{self.matched} records match and nothing was forgotten yet; to forget them, repeat with "
            f"confirm {self.matched}. For example: {shown}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "matched": self.matched,
            "confirmed": self.confirmed,
            "deleted": self.deleted,
            "total": self.total,
            "sample": [{"ref": m.ref, **asdict(m)} for m in self.sample],
            "wiped": self.wiped.to_dict() if self.wiped else None,
        }


def forget_many(
    store: Store,
    *,
    project: str,
    tags: Iterable[str] | str | None = None,
    older_than_days: float | None = None,
    confirm: int | None = None,
) -> BulkForgetReport:
    """Delete the decisions, learnings and breadcrumbs that match every filter (every tag too).

    ``project`` is one project's name or ``'*'`` for all. Without ``confirm`` equal to the number
    of matches nothing is deleted: the answer says how many match and shows a few.
    """
    where, params = _bulk_filter(project, normalise_tags(tags), older_than_days)
    with store.transaction() as writer:
        conn = store.connection
        counts = {
            kind.value: conn.execute(
                f"SELECT count(*) FROM {TABLE_NAMES[kind]} WHERE {where}", params
            ).fetchone()[0]
            for kind in TYPED_KINDS
        }
        matched = sum(counts.values())
        if confirm is None or confirm != matched or not matched:
            sample = _sample(conn, where, params)
            return BulkForgetReport(matched, False, {kind: 0 for kind in counts}, sample)
        in_place = writer.erase_index_in_place()
        for kind in TYPED_KINDS:
            tombstone_records(conn, writer, kind, f"SELECT id FROM {TABLE_NAMES[kind]} WHERE {where}", params)
            conn.execute(f"DELETE FROM {TABLE_NAMES[kind]} WHERE {where}", params)
        if not in_place:
            writer.merge_index()
    return BulkForgetReport(matched, True, counts, (), wipe(store))


def _bulk_filter(project: str, tags: list[str], older_than_days: float | None) -> tuple[str, list[Any]]:
    if older_than_days is not None and older_than_days < 1:
        raise InvalidInput(f"older_than_days must be at least 1, got {older_than_days}")
    if not project:
        raise InvalidInput("name the project, or '*' for every project")
    if not tags and older_than_days is None:
        raise InvalidInput(
            "refusing to forget records without a filter: give tags or older_than_days "
            "(a whole project goes with `recall purge --project`)"
        )
    clauses: list[str] = []
    params: list[Any] = []
    if project != ALL_PROJECTS:
        clauses.append("project = ?")
        params.append(project)
    if older_than_days is not None:
        clauses.append("created_at < ?")
        params.append(to_db_time(utc_now() - timedelta(days=older_than_days)))
    for tag in tags:  # every tag must be there
        clauses.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.value = ?)")
        params.append(tag)
    return " AND ".join(clauses) or "1", params


def _sample(conn: sqlite3.Connection, where: str, params: list[Any]) -> tuple[Match, ...]:
    union = " UNION ALL ".join(
        f"SELECT '{kind.value}' AS kind, id, project, created_at, content FROM {TABLE_NAMES[kind]} WHERE {where}"
        for kind in TYPED_KINDS
    )
    rows = conn.execute(f"{union} ORDER BY created_at LIMIT {SAMPLE_SIZE}", params * len(TYPED_KINDS))
    return tuple(
        Match(r["kind"], r["id"], r["project"], r["created_at"], _preview(r["content"])) for r in rows
    )


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


@dataclass(slots=True)
class SyncedForget:
    """What erasing another machine's forgets did here: rows deleted per kind, and what was refused."""

    deleted: dict[str, int] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)


def forget_synced(
    store: Store,
    records: Sequence[tuple[RecordKind, int]],
    digests: Sequence[tuple[str, str, str]] = (),
    may_use: Callable[[str], bool] = lambda project: True,
) -> SyncedForget:
    """Erase what another machine forgot (adr/0039): ``records`` by id here, sessions and messages by
    ``digests`` (kind, digest, session digest), each remembered as forgotten even when this side
    never held it, so no later import or push stores it. Rows of a project ``may_use`` refuses stay,
    and so do their digests (a token cannot bar another project's session from the server).
    Nothing is queued for a team server: the forget came from one. One transaction, one wipe."""
    result = SyncedForget()
    counts: Counter[str] = Counter()
    with store.transaction() as writer:
        in_place = writer.erase_index_in_place()
        conn = store.connection
        for kind, row_id in records:
            row = conn.execute(f"SELECT project FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()
            if row is None:
                continue
            if not may_use(str(row[0])):
                result.refused.append(f"{kind.value}#{row_id}: project {row[0]} not open to this token")
                continue
            counts.update(_forget_row(conn, kind, row_id).deleted)
        found = _sessions_by_digest(conn, {sd for _, _, sd in digests})
        closed = {d for d, session in found.items() if not may_use(session[3])}
        result.refused.extend(
            f"a forgotten session of project {found[d][3]} not open to this token" for d in closed
        )
        allowed = [(what, d, sd) for what, d, sd in digests if sd not in closed]
        writer.remember_forgotten((d, sd, what) for what, d, sd in allowed)
        for what, digest, own in allowed:
            session = found.get(own)
            if session is None:
                continue
            if what == "session":
                counts.update(_forget_session(conn, writer, session[0]).deleted)
                continue
            message = _message_by_digest(conn, session, digest)
            if message is not None:
                counts.update(_forget_message(store, writer, message).deleted)
        if counts and not in_place:
            writer.merge_index()
    result.deleted = {kind: n for kind, n in counts.items() if n}
    if counts:
        wipe(store)
    return result


def _sessions_by_digest(conn: sqlite3.Connection, digests: set[str]) -> dict[str, tuple[int, str, str, str]]:
    """digest → (id, host, external id, project) of the sessions held here; only the digest is
    known, so the sessions are hashed one by one (this runs only when a forget arrives)."""
    if not digests:
        return {}
    found: dict[str, tuple[int, str, str, str]] = {}
    for row_id, host, external_id, project in conn.execute(
        "SELECT id, host, external_id, project FROM sessions"
    ):
        digest = session_digest(host, external_id)
        if digest in digests:
            found[digest] = (int(row_id), str(host), str(external_id), str(project))
    return found


def _message_by_digest(
    conn: sqlite3.Connection, session: tuple[int, str, str, str], digest: str
) -> int | None:
    rows = conn.execute("SELECT id, external_id FROM messages WHERE session_id = ?", (session[0],))
    for row_id, key in rows:
        if message_digest(session[1], session[2], key) == digest:
            return int(row_id)
    return None
