"""``Store`` on a PostgreSQL server: the same methods, the same write path, another connection.

Only what differs lives here: opening (schema from ``recall.pg.schema``), transactions (psycopg's
``BEGIN``/``COMMIT`` instead of ``BEGIN IMMEDIATE``), and the files a SQLite store keeps beside its
database (vector snapshots), which a server has none of: its vector index lives in its memory.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from recall.pg.compat import PgConnection, redact_url
from recall.pg.schema import apply_schema, pg_schema
from recall.store import Store
from recall.store.derived import VECTOR_INDEXES
from recall.store.writer import Writer


class PgStore(Store):
    """One recall database on a PostgreSQL server."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = Path(redact_url(url))
        schema = pg_schema()
        self._pg = PgConnection(url, schema.conflict_keys, schema.id_tables)
        apply_schema(self._pg.raw)
        self._conn = cast(Any, self._pg)
        self._lock = threading.RLock()
        self._writer = Writer(self._conn)
        self.cache: dict[str, Any] = {}
        self.author: str | None = None  # who this store's writes are recorded as (recall.pg.team)

    def view(self, author: str) -> PgStore:
        """The same connection, lock and caches, writing as ``author`` (one per team member)."""
        other = copy.copy(self)
        other.author = author
        other._writer = Writer(self._conn)
        return other

    @property
    def pg(self) -> PgConnection:
        """The connection itself, for what only PostgreSQL has (full-text search, COPY)."""
        return self._pg

    def close(self) -> None:
        with self._lock:
            self._pg.close()

    def side_reader(self) -> None:
        """No second connection: the server's own planner runs the searches (adr/0041 is SQLite's)."""
        return

    @contextmanager
    def transaction(self) -> Iterator[Writer]:
        with self._lock:
            self._pg.execute("BEGIN")
            if self.author is not None:
                self._pg.raw.execute("SELECT set_config('recall.author', %s, true)", (self.author,))
            writer = self._writer
            assert writer is not None  # built in __init__ and view, unlike the SQLite store's
            writer.redactions.clear()
            try:
                yield writer
                self._pg.execute("COMMIT")
            except BaseException:
                if self._pg.in_transaction:
                    self._pg.execute("ROLLBACK")
                raise

    @contextmanager
    def one_commit(self, rows: int) -> Iterator[None]:
        """Each transaction commits on its own: what ``Store.one_commit`` saves is SQLite's pages."""
        yield

    @contextmanager
    def commit_group(self) -> Iterator[None]:
        yield

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self._lock:
            yield self._conn

    @contextmanager
    def team(self) -> Iterator[Any]:
        """The raw psycopg connection under the store's lock, for the team tables (recall.pg.team)."""
        with self._lock:
            yield self._pg.raw

    def vector_snapshot_path(self, key: int) -> Path | None:
        return None  # a server keeps its index in memory and rebuilds it from the table at start

    def drop_derived(self) -> int:
        self.cache.pop(VECTOR_INDEXES, None)
        return 0
