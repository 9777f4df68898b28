"""The store: the only module that writes to the database.

``Store`` is a façade over one SQLite connection: persistence and nothing else. Typed records are
added, read, corrected, forgotten and moved through the decision lifecycle here; transcripts arrive
through ``import_transcripts`` (recall.store.transcripts). All writes run in ``BEGIN IMMEDIATE``
transactions through ``Writer``, which scrubs every text and stamps provenance. Searching and
embedding live above the store (recall.search, recall.memory), which never imports them, so the
store stays usable without numpy, onnxruntime or a model.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from recall.config import default_db_path
from recall.db import begin_immediate, connect, describe_sqlite_error, is_store_problem
from recall.errors import InvalidInput, InvalidTransition, NotFound, StoreUnavailable
from recall.rowkinds import JSON_COLUMNS, TABLE_NAMES, TYPED_KINDS, DecisionStatus, Provenance, RecordKind
from recall.store.records import NewRecord, RecordChanges, change_values, record_values

if TYPE_CHECKING:
    from recall.store.extracted import ExtractionBatch, ExtractionOutcome
    from recall.store.transcripts import BatchOutcome, Ready, SourceStamp
    from recall.store.writer import Writer
    from recall.summary import SummaryDraft
    from recall.transcript import Transcript

__all__ = ["NewRecord", "RecordChanges", "Store", "Written"]

_SIDE_READER = "side_reader"


@dataclass(frozen=True, slots=True)
class Written:
    """A record just written, and the secrets the scrubber took out of it (kind → count)."""

    id: int
    redacted: dict[str, int]


class Store:
    """One open recall database."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = default_db_path(path)
        self._conn = connect(self.path)
        self._lock = threading.RLock()
        # Built on the first write: the writer brings the scrubber and the entity rules, which a
        # search or a brief never needs (issue 16: whole commands in 0.4 s).
        self._writer: Writer | None = None
        self._one_commit = False  # inside ``one_commit``: transactions are savepoints
        self._group_rows: int | None = None  # inside ``commit_group``: messages its open transaction wrote
        self.cache: dict[str, Any] = {}  # per-process derived state, e.g. in-memory vector indexes

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            side = self.cache.pop(_SIDE_READER, None)
            if side is not None:
                side.close()

    def side_reader(self) -> sqlite3.Connection | None:
        """A second connection, for reads another thread does while this store's connection is in
        use (hybrid search's keyword half beside its vector half, adr/0041); None for a store in
        memory, which no second connection sees. It reads, never writes."""
        if str(self.path) == ":memory:":
            return None
        with self._lock:
            side = self.cache.get(_SIDE_READER)
            if side is None:
                try:
                    side = connect(self.path, migrate_schema=False)
                except StoreUnavailable:  # this connection still reads; the halves run in turn
                    return None
                self.cache[_SIDE_READER] = side
            return side

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def vector_snapshot_path(self, key: int) -> Path | None:
        from recall.store.derived import vector_snapshot_path

        return vector_snapshot_path(self.path, key)

    def drop_derived(self) -> int:
        """Forget this process's vector indexes and delete the snapshots beside the file (after an
        erase their vectors must go at once); returns how many snapshot files were removed."""
        from recall.store.derived import VECTOR_INDEXES, remove_vector_snapshots

        self.cache.pop(VECTOR_INDEXES, None)
        return remove_vector_snapshots(self.path)

    @property
    def connection(self) -> sqlite3.Connection:
        """For reads by the search and stats modules; writes must go through ``transaction``."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[Writer]:
        """A write transaction; the writer's redaction counter is reset for each one. Inside
        ``one_commit`` it is a savepoint: a failure undoes its own writes alone, as before."""
        with self._lock, self._file_errors():
            if self._one_commit:
                with self._savepoint():
                    yield self._cleared_writer()
                return
            begin_immediate(self._conn, self.path)
            writer = self._cleared_writer()
            try:
                yield writer
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # SQLite has already rolled back after some I/O errors
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def one_commit(self, rows: int) -> Iterator[None]:
        """The transactions opened inside, which write ``rows`` messages, commit together, once
        (adr/0046); inside ``commit_group`` they commit with the batches beside them.

        A small source's messages, what extraction found in them and the source's stamp were three
        commits; each commit writes every page it touched again, and for a file of fifty messages
        that was a third of storing it. Nothing else changes: each inner transaction still rolls
        back alone, and a failure that escapes rolls all of them back (the file is read again).
        More than ``ROWS_PER_TRANSACTION`` messages keep their own short transactions (adr/0016).
        """
        from recall.store.transcripts import ROWS_PER_TRANSACTION

        with self._lock, self._file_errors():
            if rows > ROWS_PER_TRANSACTION:
                self._end_group(commit=True)
                yield
            elif self._group_rows is not None:
                if self._group_rows + rows > ROWS_PER_TRANSACTION:
                    self._end_group(commit=True)
                if not self._one_commit:
                    self._begin_one_commit()
                with self._savepoint():
                    yield
                self._group_rows += rows
            elif self._one_commit:
                with self._savepoint():
                    yield
            else:
                self._begin_one_commit()
                try:
                    yield
                except BaseException:
                    self._end_one_commit(commit=False)
                    raise
                self._end_one_commit(commit=True)

    @contextmanager
    def commit_group(self) -> Iterator[None]:
        """Batches stored inside through ``one_commit`` share commits of up to
        ``ROWS_PER_TRANSACTION`` messages: an import of many small files commits every few files,
        not after each (adr/0046). A batch that fails rolls back alone; a failure that escapes
        rolls back what the group has not committed yet, whose files are read again next time."""
        with self._lock, self._file_errors():
            if self._group_rows is not None:
                yield
                return
            self._group_rows = 0
            try:
                try:
                    yield
                except BaseException:
                    self._end_group(commit=False)
                    raise
                self._end_group(commit=True)
            finally:
                self._group_rows = None

    def _begin_one_commit(self) -> None:
        begin_immediate(self._conn, self.path)
        self._one_commit = True

    def _end_one_commit(self, *, commit: bool) -> None:
        """Commit, or roll back; a commit that fails is rolled back too, so no transaction stays open."""
        self._one_commit = False
        try:
            if commit:
                self._conn.execute("COMMIT")
                return
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        if self._conn.in_transaction:  # SQLite has already rolled back after some I/O errors
            self._conn.execute("ROLLBACK")

    def _end_group(self, *, commit: bool) -> None:
        """Commit (or roll back) what the group holds; the next batch opens a new transaction."""
        if self._group_rows is not None and self._one_commit:
            self._group_rows = 0
            self._end_one_commit(commit=commit)

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._conn.execute("SAVEPOINT inner_transaction")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK TO inner_transaction")
                self._conn.execute("RELEASE inner_transaction")
            raise
        self._conn.execute("RELEASE inner_transaction")

    def _cleared_writer(self) -> Writer:
        writer = self._writer
        if writer is None:
            from recall.store.writer import Writer

            writer = self._writer = Writer(self._conn, bulk_index=True)
        writer.redactions.clear()
        return writer

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for multi-statement reads."""
        with self._lock, self._file_errors():
            yield self._conn

    @contextmanager
    def _file_errors(self) -> Iterator[None]:
        """A locked, damaged or unwritable file becomes one ``StoreUnavailable`` line, whoever calls."""
        try:
            yield
        except sqlite3.Error as exc:
            if not is_store_problem(exc):
                raise
            raise StoreUnavailable(describe_sqlite_error(exc, self.path)) from exc

    # -- typed records ---------------------------------------------------------------------------

    def add(self, new: NewRecord) -> int:
        """Add a decision, learning or breadcrumb written by a person or an agent (user_authored)."""
        return self.add_record(new).id

    def add_record(self, new: NewRecord) -> Written:
        """``add``, also saying what the scrubber redacted on the way in (the caller is told)."""
        if new.kind not in TYPED_KINDS:
            raise InvalidInput(f"{new.kind.value} records cannot be added directly")
        values = record_values(new)
        with self.transaction() as writer:
            row_id = writer.insert(TABLE_NAMES[new.kind], values, Provenance.USER_AUTHORED)
            from recall.store.entities import connect_record  # lazily: a read never connects

            connect_record(self._conn, writer, new.kind, row_id)
            redacted = dict(writer.redactions)
        return Written(row_id, redacted)

    def get(self, kind: RecordKind, row_id: int) -> dict[str, Any] | None:
        """The row as JSON-ready data, with its kind; ``None`` when there is no such row.

        Decisions, learnings and breadcrumbs also carry ``sources`` (the ids of the messages they
        came from) and ``extraction`` (rule, version, confidence, review; None unless extracted).
        """
        from recall.store.extracted import lineage_of

        with self.reading() as conn:
            row = conn.execute(f"SELECT * FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()
            if row is None:
                return None
            data = row_to_dict(kind, row)
            if kind in TYPED_KINDS:
                data.update(lineage_of(conn, kind, row_id))
        return data

    def require(self, kind: RecordKind, row_id: int) -> dict[str, Any]:
        found = self.get(kind, row_id)
        if found is None:
            raise NotFound(f"no {kind.value} with id {row_id}; search first to find the right id")
        return found

    def update(self, kind: RecordKind, row_id: int, changes: RecordChanges) -> dict[str, Any]:
        """Correct a record in place (created_at kept, updated_at refreshed, re-indexed)."""
        self.update_record(kind, row_id, changes)
        return self.require(kind, row_id)

    def update_record(self, kind: RecordKind, row_id: int, changes: RecordChanges) -> Written:
        """``update``, also saying what the scrubber redacted from the new values."""
        if kind not in TYPED_KINDS:
            raise InvalidInput(
                f"{kind.value} rows are not edited by hand; only decisions, learnings, breadcrumbs"
            )
        values = change_values(kind, changes)
        with self.transaction() as writer:
            self.require(kind, row_id)
            writer.update(TABLE_NAMES[kind], row_id, values)
            from recall.store.entities import connect_record  # lazily: a read never connects

            connect_record(self._conn, writer, kind, row_id)
            redacted = dict(writer.redactions)
        return Written(row_id, redacted)

    # -- transcripts ---------------------------------------------------------------------------

    def import_transcripts(
        self,
        transcripts: Iterable[Transcript],
        *,
        project: str | None = None,
        expect_host: str | None = None,
        source: SourceStamp | None = None,
        dry_run: bool = False,
        ready: Sequence[Ready] | None = None,
    ) -> BatchOutcome:
        """Store sessions and messages verbatim, in short transactions (recall.store.transcripts);
        ``ready`` holds rows cleaned ahead for each transcript (``transcripts.preclean``)."""
        from recall.store.transcripts import import_transcripts

        return import_transcripts(
            self,
            transcripts,
            project=project,
            expect_host=expect_host,
            source=source,
            dry_run=dry_run,
            ready=ready,
        )

    def stamp_source(self, source: SourceStamp, *, sessions: int, messages: int) -> None:
        """Note a source file as imported at its size and mtime, so the next import skips it unchanged."""
        with self.transaction() as writer:
            writer.remember_source(source.host, source.path, source.size, source.mtime_ns, sessions, messages)

    def known_source(self, host: str, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) recorded when ``path`` was last imported, if ever."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT size, mtime_ns FROM source_files WHERE host = ? AND path = ?", (host, path)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def write_summary(
        self, session_id: int, draft: SummaryDraft, *, importance: int = 5, due_generation: int | None = None
    ) -> int:
        """Store (or refresh) the one summary of a session; recall composed it, so it is derived.

        ``due_generation`` takes the session off the summary queue in the same transaction, unless it
        was queued again since (recall.summary_queue.summarise_session).
        """
        with self.transaction() as writer:
            summary_id = self.write_summary_in(writer, session_id, draft, importance, due_generation)
        if summary_id is None:
            raise NotFound(f"no session with id {session_id}")
        return summary_id

    def write_summary_in(
        self,
        writer: Writer,
        session_id: int,
        draft: SummaryDraft,
        importance: int = 5,
        due_generation: int | None = None,
    ) -> int | None:
        """``write_summary`` inside a transaction the caller holds (several summaries share one);
        None when the session is gone."""
        session = self._conn.execute(
            "SELECT project, coalesce(ended_at, started_at) AS happened FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        if session is None:
            return None
        if due_generation is not None:
            writer.summary_done(session_id, due_generation)
        values = {
            "title": draft.title,
            "content": draft.content,
            "meta": draft.meta,
            "importance": importance,
        }
        existing = self._conn.execute(
            "SELECT id, title, content FROM session_summaries WHERE session_id = ?", (session_id,)
        ).fetchone()
        if existing is not None and (existing["title"], existing["content"]) == (draft.title, draft.content):
            return int(existing["id"])
        if existing is None:
            # A summary dates from its session, so catch-up lists old imports by when they happened.
            dated = {"created_at": session["happened"]} if session["happened"] else {}
            return writer.insert(
                "session_summaries",
                {"project": session["project"], "session_id": session_id, **dated, **values},
                Provenance.DERIVED,
            )
        writer.update("session_summaries", int(existing[0]), values)
        return int(existing[0])

    # -- extraction (recall.store.extracted) ------------------------------------------------------

    def write_extraction(self, batch: ExtractionBatch) -> ExtractionOutcome:
        """Write what extraction found in one session, stamped ``extracted``, with its lineage."""
        from recall.store.extracted import write_extraction

        return write_extraction(self, batch)

    def accept_extracted(self, kind: RecordKind, row_id: int) -> dict[str, Any]:
        """A person confirmed an extracted record: it leaves review and counts as confident."""
        from recall.store.extracted import accept

        with self.transaction() as writer:
            accept(self.connection, writer, kind, row_id)
        return self.require(kind, row_id)

    def reject_extracted(self, kind: RecordKind, row_id: int) -> None:
        """A person rejected an extracted record: it is deleted and its wording never extracted again."""
        from recall.store.extracted import reject

        with self.transaction() as writer:
            reject(self.connection, writer, kind, row_id)

    def reset_extraction(self, project: str | None) -> int:
        """Forget unreviewed extracted records and progress (of one project), to extract again."""
        from recall.store.extracted import reset

        with self.transaction():
            return reset(self.connection, project)

    def session_messages(self, session_id: int) -> list[dict[str, Any]]:
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT id, role, origin, kind, tool_name, content, timestamp FROM messages "
                "WHERE session_id = ? ORDER BY ordinal",
                (session_id,),
            ).fetchall()
        return [dict(row) for row in rows]

    # -- reads -----------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts per kind and project and facts about the file (vectors are counted by recall.search)."""
        from recall.store.stats import collect_stats

        with self.reading() as conn:
            return collect_stats(conn, self.path)

    # -- decision lifecycle ----------------------------------------------------------------------

    def supersede(self, decision_id: int, by: int | None = None) -> dict[str, Any]:
        """Mark an active decision superseded, optionally by another (active) decision."""
        if by is not None and by == decision_id:
            raise InvalidInput("a decision cannot supersede itself")
        with self.transaction() as writer:
            self._require_active(decision_id, "supersede")
            if by is not None:
                self.require(RecordKind.DECISION, by)
            writer.update(
                "decisions", decision_id, {"status": DecisionStatus.SUPERSEDED.value, "superseded_by": by}
            )
        return self.require(RecordKind.DECISION, decision_id)

    def revert(self, decision_id: int) -> dict[str, Any]:
        """Mark an active decision reverted: it was undone, nothing replaces it."""
        with self.transaction() as writer:
            self._require_active(decision_id, "revert")
            writer.update("decisions", decision_id, {"status": DecisionStatus.REVERTED.value})
        return self.require(RecordKind.DECISION, decision_id)

    def _require_active(self, decision_id: int, action: str) -> None:
        decision = self.require(RecordKind.DECISION, decision_id)
        if decision["status"] != DecisionStatus.ACTIVE.value:
            raise InvalidTransition(
                f"decision {decision_id} is {decision['status']}; only active decisions can be changed ({action} refused)"
            )


def row_to_dict(kind: RecordKind, row: sqlite3.Row) -> dict[str, Any]:
    """JSON-ready data of a row, tagged with its kind."""
    return plain_row(row, kind.value)


def plain_row(row: sqlite3.Row, kind: str) -> dict[str, Any]:
    """A row as plain data: the writer stores every value in its one format already (times by
    ``to_db_time``, enums as their values), so only JSON columns are parsed. The SQLModel classes
    (recall.models) describe the same shape; tests/test_row_shape.py checks every kind against them,
    and no read pays for importing SQLModel (adr/0030)."""
    data = dict(row)
    for column in JSON_COLUMNS:
        if isinstance(data.get(column), str):
            data[column] = json.loads(data[column])
    data["kind"] = kind
    return data
