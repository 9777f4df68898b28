"""The store: the only module that writes to the database.

``Store`` is a façade over one SQLite connection. Typed records are added, read, corrected,
forgotten and moved through the decision lifecycle here; transcripts arrive through
``import_transcript`` (recall.store.transcripts). All writes run in ``BEGIN IMMEDIATE``
transactions through ``Writer``, which scrubs every text and stamps provenance.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from recall.config import default_db_path
from recall.db import connect, describe_sqlite_error
from recall.errors import InvalidInput, InvalidTransition, NotFound, StoreUnavailable
from recall.models import (
    JSON_COLUMNS,
    TABLE_NAMES,
    TABLES,
    TYPED_KINDS,
    DecisionStatus,
    Provenance,
    RecordKind,
)
from recall.store.entities import connect_record
from recall.store.records import NewRecord, RecordChanges, change_values, normalise_tags, record_values
from recall.store.writer import Writer, to_db_time, utc_now

if TYPE_CHECKING:
    from sqlmodel import SQLModel

    from recall.search.embedder import Embedder
    from recall.search.keyword import Hit
    from recall.store.transcripts import BatchOutcome, SourceStamp
    from recall.summary import SummaryDraft
    from recall.transcript import Transcript

__all__ = ["NewRecord", "RecordChanges", "Store"]

log = logging.getLogger(__name__)


class Store:
    """One open recall database."""

    def __init__(
        self, path: str | Path | None = None, *, embedder: Embedder | None = None, embed_on_write: bool = True
    ) -> None:
        self.path = default_db_path(path)
        self._embedder = embedder
        self.embed_on_write = embed_on_write
        self._conn = connect(self.path)
        self._lock = threading.RLock()
        self._writer = Writer(self._conn)
        self.cache: dict[str, Any] = {}  # per-process derived state, e.g. in-memory vector indexes

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        """The embedder given at open, else the process-wide default (its model loads on first use)."""
        if self._embedder is None:
            from recall.search.embedder import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def embed_written(self, kind: RecordKind, row_id: int) -> None:
        """Embed a row just written. The write already committed; a missing model only leaves it pending."""
        if not self.embed_on_write:
            return
        from recall.errors import ModelUnavailable
        from recall.search.semantic import embed_one

        try:
            embed_one(self, self.embedder, kind, row_id)
        except ModelUnavailable as exc:
            log.warning("%s %s stays pending for embedding: %s", kind.value, row_id, exc)

    @property
    def connection(self) -> sqlite3.Connection:
        """For reads by the search and stats modules; writes must go through ``transaction``."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[Writer]:
        """A write transaction; the writer's redaction counter is reset for each one."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreUnavailable(describe_sqlite_error(exc, self.path)) from exc
            self._writer.redactions.clear()
            try:
                yield self._writer
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for multi-statement reads."""
        with self._lock:
            yield self._conn

    # -- typed records ---------------------------------------------------------------------------

    def add(self, new: NewRecord) -> int:
        """Add a decision, learning or breadcrumb written by a person or an agent (user_authored)."""
        if new.kind not in TYPED_KINDS:
            raise InvalidInput(f"{new.kind.value} records cannot be added directly")
        values = record_values(new)
        with self.transaction() as writer:
            row_id = writer.insert(TABLE_NAMES[new.kind], values, Provenance.USER_AUTHORED)
            connect_record(self._conn, writer, new.kind, row_id)
        self.embed_written(new.kind, row_id)
        return row_id

    def get(self, kind: RecordKind, row_id: int) -> dict[str, Any] | None:
        """The row as JSON-ready data, with its kind; ``None`` when there is no such row."""
        with self.reading() as conn:
            row = conn.execute(f"SELECT * FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()
        return None if row is None else row_to_dict(kind, row)

    def require(self, kind: RecordKind, row_id: int) -> dict[str, Any]:
        found = self.get(kind, row_id)
        if found is None:
            raise NotFound(f"no {kind.value} with id {row_id}; search first to find the right id")
        return found

    def update(self, kind: RecordKind, row_id: int, changes: RecordChanges) -> dict[str, Any]:
        """Correct a record in place (created_at kept, updated_at refreshed, re-indexed)."""
        if kind not in TYPED_KINDS:
            raise InvalidInput(
                f"{kind.value} rows are not edited by hand; only decisions, learnings, breadcrumbs"
            )
        values = change_values(kind, changes)
        with self.transaction() as writer:
            self.require(kind, row_id)
            writer.update(TABLE_NAMES[kind], row_id, values)
            connect_record(self._conn, writer, kind, row_id)
        self.embed_written(kind, row_id)
        return self.require(kind, row_id)

    def forget(self, kind: RecordKind, row_id: int) -> bool:
        """Hard delete; the FTS entry goes with it (trigger). Returns whether a row existed."""
        with self.transaction():
            cursor = self._conn.execute(f"DELETE FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,))
        return cursor.rowcount > 0

    def forget_many(
        self,
        *,
        tags: list[str] | str | None = None,
        older_than_days: float | None = None,
        project: str | None = None,
    ) -> dict[str, int]:
        """Delete typed records matching every filter given; refuses to run with none."""
        wanted_tags = normalise_tags(tags)
        if not wanted_tags and older_than_days is None and not project:
            raise InvalidInput("refusing to forget everything: give tags, older_than_days or project")
        if older_than_days is not None and older_than_days < 0:
            raise InvalidInput("older_than_days must be zero or more")
        clauses: list[str] = []
        params: list[Any] = []
        if project:
            clauses.append("project = ?")
            params.append(project)
        if older_than_days is not None:
            clauses.append("created_at < ?")
            params.append(to_db_time(utc_now() - timedelta(days=older_than_days)))
        if wanted_tags:
            marks = ", ".join("?" for _ in wanted_tags)
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.value IN ({marks}))")
            params.extend(wanted_tags)
        where = " AND ".join(clauses)
        removed: dict[str, int] = {}
        with self.transaction():
            for kind in TYPED_KINDS:
                cursor = self._conn.execute(f"DELETE FROM {TABLE_NAMES[kind]} WHERE {where}", params)
                removed[kind.value] = cursor.rowcount
        return removed

    # -- transcripts ---------------------------------------------------------------------------

    def import_transcripts(
        self,
        transcripts: Iterable[Transcript],
        *,
        project: str | None = None,
        expect_host: str | None = None,
        source: SourceStamp | None = None,
        dry_run: bool = False,
    ) -> BatchOutcome:
        """Store sessions and messages verbatim, in one transaction (recall.store.transcripts)."""
        from recall.store.transcripts import import_transcripts

        return import_transcripts(
            self, transcripts, project=project, expect_host=expect_host, source=source, dry_run=dry_run
        )

    def known_source(self, host: str, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) recorded when ``path`` was last imported, if ever."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT size, mtime_ns FROM source_files WHERE host = ? AND path = ?", (host, path)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def write_summary(
        self, session_id: int, draft: SummaryDraft, *, importance: int = 5, embed: bool = True
    ) -> int:
        """Store (or refresh) the one summary of a session; recall composed it, so it is derived.

        Bulk callers (imports) pass ``embed=False`` and leave the vector to the batched embedder.
        """
        with self.transaction() as writer:
            session = self._conn.execute(
                "SELECT project, coalesce(ended_at, started_at) AS happened FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            if session is None:
                raise NotFound(f"no session with id {session_id}")
            values = {
                "title": draft.title,
                "content": draft.content,
                "meta": draft.meta,
                "importance": importance,
            }
            existing = self._conn.execute(
                "SELECT id, title, content FROM session_summaries WHERE session_id = ?", (session_id,)
            ).fetchone()
            if existing is not None and (existing["title"], existing["content"]) == (
                draft.title,
                draft.content,
            ):
                return int(existing["id"])
            if existing is None:
                # A summary dates from its session, so catch-up lists old imports by when they happened.
                dated = {"created_at": session["happened"]} if session["happened"] else {}
                summary_id = writer.insert(
                    "session_summaries",
                    {"project": session["project"], "session_id": session_id, **dated, **values},
                    Provenance.DERIVED,
                )
            else:
                summary_id = int(existing[0])
                writer.update("session_summaries", summary_id, values)
        if embed:
            self.embed_written(RecordKind.SESSION_SUMMARY, summary_id)
        return summary_id

    def session_messages(self, session_id: int) -> list[dict[str, Any]]:
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT id, role, origin, kind, tool_name, content, timestamp FROM messages "
                "WHERE session_id = ? ORDER BY ordinal",
                (session_id,),
            ).fetchall()
        return [dict(row) for row in rows]

    # -- reads -----------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        table: RecordKind | None = None,
        bias: RecordKind | None = None,
        limit: int = 10,
    ) -> list[Hit]:
        """Keyword search (recall.search.keyword); any text is a valid query."""
        from recall.search.keyword import keyword_search

        with self.reading() as conn:
            return keyword_search(conn, query, project=project, table=table, bias=bias, limit=limit)

    def stats(self, *, embeddings: bool = True) -> dict[str, Any]:
        from recall.store.stats import collect_stats, embedding_stats

        with self.reading() as conn:
            data = collect_stats(conn, self.path)
        if embeddings:
            data["embeddings"] = embedding_stats(self)
        return data

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
    """Validate a row against its SQLModel class and return JSON-ready data tagged with its kind."""
    return validated_row(TABLES[kind], row, kind.value)


def validated_row(model: type[SQLModel], row: sqlite3.Row, kind: str) -> dict[str, Any]:
    data = dict(row)
    for column in JSON_COLUMNS:
        if isinstance(data.get(column), str):
            data[column] = json.loads(data[column])
    out = model.model_validate(data).model_dump(mode="json")
    out["kind"] = kind
    return out
