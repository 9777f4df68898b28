"""Writing transcripts: sessions and their messages, upserted on natural keys, in short transactions.

Re-importing is idempotent by construction: a message is identified by ``(session, key)``, so a
second run over the same transcript writes nothing, a session that grew gets only its new messages,
and a message that grew (Claude's split assistant lines arriving in a later read) is updated in
place. Everything here is stamped ``verbatim``: it is what was said, as it was said (minus secrets).

The database has one write lock, and every process that writes (`recall add`, an MCP server's
``memory_add``, a hook's dump) waits while an import holds it (adr/0016). So the slow part happens
before the lock: what each transcript adds or changes is found from a read, and those rows are
scrubbed (``clean_row``). Each transaction then writes at most ``ROWS_PER_TRANSACTION`` messages,
checking again what is stored so that rows a concurrent writer added are not written twice. A
source file's stamp goes with its last transaction: after a crash between two, the file is not
stamped, and the next import reads it again and writes what is missing. A top-level session that
gains or changes messages is queued for its summary (``summaries_due``) by the same transaction.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from recall.errors import ConflictingSource
from recall.extract.ahead import ExtractionAhead
from recall.pathnames import printable
from recall.project import resolve_project
from recall.rowkinds import Provenance
from recall.store.entities import MentionsAhead, Written, connect_written
from recall.store.forgotten import forgotten_keys
from recall.store.writer import Capped, CleanRow, Writer, clean_row, to_db_time
from recall.summary import DraftAhead
from recall.transcript import Transcript, TranscriptMessage

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

ROWS_PER_TRANSACTION = 200  # a lock held 30 ms at the median, 130 ms at p95 on the shared bench machine
_UPDATED_COLUMNS = ("content", "content_hash", "origin", "kind", "tool_name", "timestamp", "meta")


@dataclass(slots=True)
class TranscriptOutcome:
    external_id: str
    project: str
    new_session: bool
    added: int = 0
    updated: int = 0
    session_id: int | None = None  # None only in a dry run, for a session not stored yet
    updated_keys: list[str] = field(default_factory=list)  # messages rewritten in place


@dataclass(slots=True)
class BatchOutcome:
    """What importing one source file's transcripts did."""

    sessions: list[TranscriptOutcome] = field(default_factory=list)
    redactions: Counter[str] = field(default_factory=Counter)
    forgotten: Counter[str] = field(default_factory=Counter)  # skipped: a user forgot them (adr/0014)
    links: int = 0  # entity links added (recall.store.entities)
    # what the read-ahead worker's extraction found, by id of a session this batch created whole
    extraction_ahead: dict[int, ExtractionAhead] = field(default_factory=dict)
    # and the summary it drafted, with the queue generation the batch left (recall.summary_queue)
    summary_ahead: dict[int, DraftAhead] = field(default_factory=dict)

    @property
    def added(self) -> int:
        return sum(s.added for s in self.sessions)

    @property
    def updated(self) -> int:
        return sum(s.updated for s in self.sessions)


def message_hash(message: TranscriptMessage) -> str:
    """Identity of a message's content, to notice when a stored message grew.

    The cuts that shorten it count too, so a re-import with another ``--tool-text-cap`` rewrites
    it; cuts that shorten nothing do not, so such messages keep the hash they always had.
    """
    digest = hashlib.blake2b(digest_size=16)
    digest.update(
        f"{message.role}\x1f{message.origin}\x1f{message.kind}\x1f{message.tool_name or ''}\x1f".encode()
    )
    digest.update(message.text.encode("utf-8", errors="surrogatepass"))
    shortened = [cut for cut in message.cuts if cut.end - cut.start > cut.limit]
    if shortened:
        digest.update(repr(shortened).encode())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class SourceStamp:
    """The file a batch came from, stamped by the batch's last transaction (see the module doc)."""

    host: str
    path: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class Ready:
    """What a read-ahead worker made of one transcript ahead of the plan (recall.read_ahead): the
    cleaned rows of the messages the store did not hold as they were (``preclean``), by message key
    with their content hash, and for a session new to the store what its messages touched and what
    extraction finds in it (``ahead_of_new_session``). The plan and the write transaction still
    decide what is used."""

    rows: dict[str, tuple[str, CleanRow]] = field(default_factory=dict)
    mentions: MentionsAhead | None = None
    extraction: ExtractionAhead | None = None
    summary: DraftAhead | None = None  # a top-level session's summary


@dataclass(slots=True)
class _Plan:
    """One transcript's writes, found from a read before any lock: new or changed messages."""

    transcript: Transcript
    outcome: TranscriptOutcome
    writes: list[tuple[str, TranscriptMessage]]  # (content hash, message), in transcript order
    changed: int = 0  # how many of the writes were stored with other content when planned
    ready: Ready = field(default_factory=Ready)  # made ahead by a read-ahead worker
    queued: int | None = None  # the summary queue's generation after the plan's last write


@dataclass(slots=True)
class _Part:
    """Up to ``ROWS_PER_TRANSACTION`` of a plan's writes, cleaned just before their transaction."""

    plan: _Plan
    writes: list[tuple[str, TranscriptMessage]]
    first: bool  # the plan's first part also inserts or refreshes the session row
    last: bool = True  # the plan's last part reads the summary queue's generation after it
    rows: list[CleanRow] = field(default_factory=list)


def import_transcripts(
    store: Store,
    transcripts: Iterable[Transcript],
    *,
    project: str | None = None,
    expect_host: str | None = None,
    source: SourceStamp | None = None,
    dry_run: bool = False,
    ready: Sequence[Ready] | None = None,
) -> BatchOutcome:
    """Write transcripts in short transactions; ``source`` is stamped by the last one.

    A dry run finds and scrubs the same rows and writes nothing, so its counts are what a real run
    writes (unless another process writes the same sessions in between). ``ready`` holds, for each
    transcript, rows ``preclean`` made from it ahead of time (in a read-ahead worker, recall.read_ahead);
    a row is used only for the very message and content it was made from, else it is cleaned here.
    """
    items = list(transcripts)
    if expect_host is not None:
        _refuse_other_hosts(store, items)
    outcome = BatchOutcome()
    plans: list[_Plan] = []
    for index, t in enumerate(items):
        plan = _plan(store, t, project, outcome.forgotten, ready[index] if ready is not None else Ready())
        if plan is not None:
            plans.append(plan)
    outcome.sessions = [plan.outcome for plan in plans]
    batches = list(_batches(plans))
    for number, batch in enumerate(batches, 1):
        for part in batch:
            part.rows = [_cleaned(part.plan.ready, digest, m) for digest, m in part.writes]
        if dry_run:
            outcome.redactions.update(kind for part in batch for row in part.rows for kind in row.redactions)
            continue
        last = number == len(batches)
        with store.transaction() as writer:
            for part in batch:
                _write_part(store.connection, writer, part)
            outcome.links += connect_written(store.connection, writer, _written(batch))
            if last:
                _link_parents(store.connection)
                if source is not None:
                    writer.remember_source(
                        source.host, source.path, source.size, source.mtime_ns, len(items), outcome.added
                    )
            outcome.redactions.update(writer.redactions)
        for part in batch:
            part.rows = []  # written: a big file's scrubbed copy is not kept until the end
    if dry_run:
        for plan in plans:
            plan.outcome.added, plan.outcome.updated = len(plan.writes) - plan.changed, plan.changed
        return outcome
    for plan in plans:
        made, session = plan.ready.extraction, plan.outcome
        if made is None or session.session_id is None or not _created_whole(session, len(made.keys)):
            continue
        outcome.extraction_ahead[session.session_id] = made
        if plan.ready.summary is not None and plan.queued is not None:
            outcome.summary_ahead[session.session_id] = replace(plan.ready.summary, generation=plan.queued)
    return outcome


def _created_whole(session: TranscriptOutcome, messages: int) -> bool:
    """Whether this batch created the session and wrote all its ``messages`` (none was there before)."""
    return session.new_session and session.added == messages and not session.updated


def _refuse_other_hosts(store: Store, items: list[Transcript]) -> None:
    """A dump must not claim a session another host already holds under the same id."""
    for t in items:
        with store.reading() as conn:
            other = conn.execute(
                "SELECT host FROM sessions WHERE external_id = ? AND host != ? LIMIT 1",
                (printable(t.external_id), t.host),
            ).fetchone()
        if other is not None:
            raise ConflictingSource(
                f"session {printable(t.external_id)} is already stored from {other['host']}, not {t.host}; "
                f"dump it with --source {other['host']} or give another --session-id"
            )


def _cleaned(ready: Ready, digest: str, message: TranscriptMessage) -> CleanRow:
    """The row cleaned ahead for this message and content, or cleaned now."""
    found = ready.rows.get(message.key)
    if found is not None and found[0] == digest:
        return found[1]
    return clean_row("messages", _message_values(message, digest))


def preclean(transcript: Transcript, stored: Mapping[str, str]) -> Ready:
    """Clean, ahead of any plan, the rows of the messages ``stored`` (key → content hash, as
    ``stored_hashes`` reads them) does not hold as they are: what the plan will most likely write.

    ``clean_row`` is pure, so a row made here is the row the plan would make; the plan and the write
    transaction still decide what is written. The scrubbed text is the message's own string object
    when scrubbing changed nothing, so a row sent between processes does not carry its text twice.
    """
    rows: dict[str, tuple[str, CleanRow]] = {}
    for message in transcript.messages:
        if message.key in rows:
            continue
        digest = message_hash(message)
        if stored.get(printable(message.key)) == digest:
            continue
        row = clean_row("messages", _message_values(message, digest))
        if row.values["content"] == message.text:
            row = CleanRow(row.table, {**row.values, "content": message.text}, row.redactions)
        rows[message.key] = (digest, row)
    return Ready(rows)


def first_of_each_key(transcript: Transcript) -> Iterator[TranscriptMessage]:
    """The messages a plan considers, in order: a key seen again later is the same message."""
    seen: set[str] = set()
    for message in transcript.messages:
        if message.key not in seen:
            seen.add(message.key)
            yield message


def stored_hashes(conn: sqlite3.Connection, transcript: Transcript) -> dict[str, str]:
    """key → content hash of the messages stored for ``transcript``'s session (none when new)."""
    row = session_row(conn, transcript)
    if row is None:
        return {}
    return dict(
        conn.execute("SELECT external_id, content_hash FROM messages WHERE session_id = ?", (row[0],))
    )


def _plan(
    store: Store, t: Transcript, project: str | None, forgotten: Counter[str], ready: Ready
) -> _Plan | None:
    """What ``t`` adds or changes; None when the user forgot its session (or a subagent's parent).
    A message cleaned ahead (``ready``) comes with its content hash."""
    with store.reading() as conn:
        skip = forgotten_keys(conn, t)
        if skip.session:
            forgotten["forgotten_session"] += 1
            return None
        row = session_row(conn, t)
        stored = stored_hashes(conn, t) if row is not None else {}
    if row is None:
        outcome = TranscriptOutcome(t.external_id, project or resolve_project(t.cwd), new_session=True)
    else:
        outcome = TranscriptOutcome(t.external_id, row["project"], new_session=False, session_id=row["id"])
    plan = _Plan(t, outcome, [], ready=ready)
    for message in first_of_each_key(t):
        made = ready.rows.get(message.key)
        digest = made[0] if made is not None else message_hash(message)
        before = stored.get(printable(message.key))
        if before is None and skip.skips_message(message.key):
            forgotten["forgotten_message"] += 1
        elif before != digest:
            plan.writes.append((digest, message))
            plan.changed += before is not None
    return plan


def _batches(plans: list[_Plan]) -> Iterator[list[_Part]]:
    """Parts grouped into transactions of at most ``ROWS_PER_TRANSACTION`` messages; the last batch
    is yielded even when empty, as it carries the source stamp."""
    batch: list[_Part] = []
    size = 0
    for plan in plans:
        chunks = [
            plan.writes[i : i + ROWS_PER_TRANSACTION]
            for i in range(0, len(plan.writes), ROWS_PER_TRANSACTION)
        ]
        for index, chunk in enumerate(chunks or [[]]):
            if batch and size + len(chunk) > ROWS_PER_TRANSACTION:
                yield batch
                batch, size = [], 0
            batch.append(_Part(plan, chunk, first=index == 0, last=index == len(chunks or [[]]) - 1))
            size += len(chunk)
    yield batch


def _write_part(conn: sqlite3.Connection, writer: Writer, part: _Part) -> None:
    """Write one part, checking each key against what is stored now (another process may have
    written the same session since the plan was made)."""
    outcome = part.plan.outcome
    if part.first:
        _store_session(conn, writer, part.plan)
    session_id = outcome.session_id
    assert session_id is not None
    stored = _stored(conn, session_id, [printable(m.key) for _, m in part.writes])
    ordinal = conn.execute(
        "SELECT coalesce(max(ordinal), -1) + 1 FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    inserts: list[CleanRow] = []
    fills: list[dict[str, Any]] = []
    updated = 0
    for (digest, message), row in zip(part.writes, part.rows, strict=True):
        found = stored.get(printable(message.key))
        if found is None:
            inserts.append(row)
            fills.append({"project": outcome.project, "session_id": session_id, "ordinal": ordinal})
            ordinal += 1
        elif found[1] != digest:
            writer.update("messages", found[0], row.only(_UPDATED_COLUMNS))
            outcome.updated_keys.append(message.key)
            updated += 1
    outcome.updated += updated
    added = writer.insert_clean(inserts, Provenance.VERBATIM, fills)
    outcome.added += added
    if (added or updated) and part.plan.transcript.parent_external_id is None:
        writer.queue_summary(session_id)
        if part.last and part.plan.ready.summary is not None:
            part.plan.queued = writer.summary_generation(session_id)


def _store_session(conn: sqlite3.Connection, writer: Writer, plan: _Plan) -> None:
    """Insert the session row, or refresh the stored one; either way ``plan.outcome`` learns its id."""
    t, outcome = plan.transcript, plan.outcome
    row = session_row(conn, t)
    values = session_values(t)
    if row is None:
        outcome.session_id = writer.insert(
            "sessions", {"project": outcome.project, **values}, Provenance.VERBATIM
        )
        return
    outcome.session_id, outcome.project, outcome.new_session = row["id"], row["project"], False
    _refresh_session(conn, writer, row["id"], values)


def session_row(conn: sqlite3.Connection, t: Transcript) -> sqlite3.Row | None:
    """The stored session of ``t``: ids are stored as ``printable`` text (a Cursor session is named
    by its file, and a file name need not be UTF-8)."""
    return conn.execute(
        "SELECT id, project FROM sessions WHERE host = ? AND external_id = ?",
        (t.host, printable(t.external_id)),
    ).fetchone()


def _stored(conn: sqlite3.Connection, session_id: int, keys: list[str]) -> dict[str, tuple[int, str]]:
    """key → (id, content hash) of the given keys that the session holds now."""
    if not keys:
        return {}
    marks = ", ".join("?" for _ in keys)
    rows = conn.execute(
        f"SELECT external_id, id, content_hash FROM messages WHERE session_id = ? AND external_id IN ({marks})",
        (session_id, *keys),
    )
    return {key: (row_id, digest) for key, row_id, digest in rows}


def _written(batch: list[_Part]) -> list[Written]:
    """The sessions this transaction wrote to, with their messages in hand (tool calls carry their
    full arguments there) and what the read-ahead worker found they touched: the connect stage reads
    what each session gained past its last mark."""
    plans = {id(part.plan): part.plan for part in batch if part.writes or part.first}
    return [
        Written(
            plan.outcome.session_id,
            {m.key: m for m in plan.transcript.messages},
            tuple(plan.outcome.updated_keys),
            plan.ready.mentions,
        )
        for plan in plans.values()
        if plan.outcome.session_id is not None
    ]


def session_values(t: Transcript) -> dict[str, Any]:
    return {
        "host": t.host,
        "external_id": t.external_id,
        "parent_external_id": t.parent_external_id,
        "agent_id": t.agent_id,
        "title": t.title,
        "cwd": t.cwd,
        "git_branch": t.git_branch,
        "model": t.model,
        "started_at": t.started_at,
        "ended_at": t.ended_at,
        "source_path": t.source_path,
        "meta": t.meta,
    }


def _refresh_session(
    conn: sqlite3.Connection, writer: Writer, session_id: int, values: dict[str, Any]
) -> None:
    """Update what a later read knows better (end time, title, model); never blank a known field.

    A title is replaced by a later one: hosts rename sessions (Claude Code ``/rename``, Codex thread
    names), and the adapter hands over the best title the whole transcript states. The other fields
    only fill blanks: a session's folder or branch as first seen is what its messages were about.
    """
    current = dict(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone())
    changes: dict[str, Any] = {}
    if values["title"] and values["title"] != current["title"]:
        changes["title"] = values["title"]
    for column in ("cwd", "git_branch", "model", "parent_external_id", "agent_id", "source_path"):
        if values[column] and not current[column]:
            changes[column] = values[column]
    for column, later in (("started_at", False), ("ended_at", True)):
        new = to_db_time(values[column])
        old = current[column]
        if new and (not old or (new > old if later else new < old)):
            changes[column] = values[column]
    if changes:
        writer.update("sessions", session_id, changes)


def _message_values(m: TranscriptMessage, digest: str) -> dict[str, Any]:
    """A message's own columns; its project, session and ordinal are filled in when it is written."""
    return {
        "external_id": m.key,
        "role": m.role.value,
        "origin": m.origin.value,
        "kind": m.kind.value,
        "tool_name": m.tool_name,
        "content": Capped(m.text, m.cuts),
        "timestamp": m.timestamp,
        "content_hash": digest,
        "meta": m.meta,
    }


def _link_parents(conn: sqlite3.Connection) -> None:
    """Resolve parent links whose parent arrived in this or an earlier import."""
    conn.execute(
        """UPDATE sessions SET parent_id = (
               SELECT p.id FROM sessions p
               WHERE p.host = sessions.host AND p.external_id = sessions.parent_external_id)
           WHERE parent_id IS NULL AND parent_external_id IS NOT NULL"""
    )
