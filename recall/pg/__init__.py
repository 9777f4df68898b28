"""The PostgreSQL backend: one shared recall database for a team (adr/0024).

The store's SQL is written for SQLite; ``recall.pg.compat`` runs it on PostgreSQL through a
connection that speaks the subset of ``sqlite3`` the store uses, and ``recall.pg.schema`` derives the
PostgreSQL schema from the SQLite migrations, so both backends hold the same tables and columns.
Only keyword search differs in substance (``recall.pg.fulltext``: tsvector and GIN instead of FTS5).
"""

from __future__ import annotations

import os
from pathlib import Path

URL_PREFIXES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def is_postgres_url(value: object) -> bool:
    """Whether a ``--db`` value or ``RECALL_DB`` names a PostgreSQL server rather than a file."""
    return isinstance(value, str) and value.strip().lower().startswith(URL_PREFIXES)


def postgres_url(db: str | os.PathLike[str] | None) -> str | None:
    """The PostgreSQL URL a ``--db`` value (else ``RECALL_DB``) names, or None for a SQLite file."""
    if db is not None and not isinstance(db, Path):
        text = os.fspath(db)
        return plain_url(text) if is_postgres_url(text) else None
    if db is None:
        env = os.environ.get("RECALL_DB", "")
        return plain_url(env) if is_postgres_url(env) else None
    return None


def plain_url(url: str) -> str:
    """libpq's spelling of the URL (SQLAlchemy's ``+psycopg`` driver suffix removed)."""
    url = url.strip()
    return "postgresql://" + url.split("://", 1)[1]
