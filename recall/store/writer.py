"""The single write path: every INSERT and UPDATE of a text-bearing row goes through ``Writer``.

Two guarantees live here and nowhere else (adr/0001, adr/0002):

* every text column, and every string inside JSON columns, passes ``recall.scrub.scrub``;
* provenance comes from the caller's *kind of write* (an import is verbatim, ``recall add`` is
  user_authored), fixed by the store method, never by a value in the input.

Store methods receive plain inputs without a provenance field; they call ``insert``/``update`` here
with the provenance that their own path implies.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from recall.entities.mention import lookup_key
from recall.models import JSON_COLUMNS, Provenance
from recall.scrub import scrub, scrub_value
from recall.store.records import normalise_tags

# Columns whose text is free-form and may carry secrets. Everything else is ids, enums and times.
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("title", "cwd", "git_branch", "model", "source_path", "parent_external_id"),
    "messages": ("content", "tool_name"),
    "decisions": ("content", "detail"),
    "learnings": ("content", "detail"),
    "breadcrumbs": ("content", "detail"),
    "session_summaries": ("title", "content"),
    "entities": ("name",),  # the lookup key is derived from the scrubbed name
    "entity_links": ("detail",),
}
# Entity names and command lines repeat across a whole import (`pytest`, `git status`): their scrub
# is remembered. The kinds redacted are remembered too, so redaction counts stay exact.
_SHORT_TEXT_TABLES = frozenset({"entities", "entity_links"})
_scrub_short = lru_cache(maxsize=16_384)(scrub)
# The owners an entity link can have; each is a foreign key that removes the link with its owner.
LINK_OWNERS = ("message_id", "decision_id", "learning_id", "breadcrumb_id")


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_db_time(value: datetime | None) -> str | None:
    """One text format for every timestamp, so SQL comparisons and sorting are plain string ops."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


class Writer:
    """Scrubs and stamps rows, then writes them on the store's connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.redactions: Counter[str] = Counter()

    def clean(self, table: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Scrub text, serialise JSON columns and times: the only transformation before SQL."""
        text_columns = TEXT_COLUMNS[table]
        row: dict[str, Any] = {}
        for column, value in values.items():
            if column in text_columns and isinstance(value, str):
                result = _scrub_short(value) if table in _SHORT_TEXT_TABLES else scrub(value)
                if result.kinds:
                    self.redactions.update(result.kinds)
                value = result.text
            elif column in JSON_COLUMNS:
                value, kinds = scrub_value(value if value is not None else ([] if column == "tags" else {}))
                if kinds:
                    self.redactions.update(kinds)
                if column == "tags":
                    value = normalise_tags(value)
                value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            elif isinstance(value, datetime):
                value = to_db_time(value)
            row[column] = value
        return row

    def insert(self, table: str, values: Mapping[str, Any], provenance: Provenance) -> int:
        row = self._stamp(self.clean(table, values), provenance)
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        cursor = self._conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(row.values()))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def insert_many(
        self, table: str, rows: Iterable[Mapping[str, Any]], provenance: Provenance, *, columns: Sequence[str]
    ) -> int:
        """Bulk insert rows that share ``columns``; returns how many were written."""
        stamped = [self._stamp(self.clean(table, values), provenance) for values in rows]
        if not stamped:
            return 0
        names = list(stamped[0])
        missing = set(columns) - set(names)
        if missing:
            raise ValueError(f"rows for {table} lack columns {sorted(missing)}")
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
        self._conn.executemany(sql, [tuple(row[name] for name in names) for row in stamped])
        return len(stamped)

    def update(self, table: str, row_id: int, values: Mapping[str, Any]) -> None:
        """Correct a row in place: provenance and created_at stay, updated_at moves."""
        row = self.clean(table, values)
        row.pop("provenance", None)
        row.pop("created_at", None)
        row["updated_at"] = to_db_time(utc_now())
        assignments = ", ".join(f"{column} = ?" for column in row)
        self._conn.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", (*row.values(), row_id))

    def entity(self, project: str, type_: str, name: str) -> int:
        """The id of an entity, added (provenance extracted) if the project has none of that name."""
        row = self.clean("entities", {"project": project, "type": type_, "name": name})
        row["key"] = lookup_key(type_, row["name"])
        found = self._conn.execute(
            "SELECT id FROM entities WHERE project = ? AND type = ? AND name = ?",
            (row["project"], row["type"], row["name"]),
        ).fetchone()
        if found is not None:
            return int(found[0])
        stamped = self._stamp(row, Provenance.EXTRACTED)
        cursor = self._conn.execute(
            f"INSERT INTO entities ({', '.join(stamped)}) VALUES ({', '.join('?' for _ in stamped)})",
            tuple(stamped.values()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def link_entities(self, links: Sequence[Mapping[str, Any]]) -> int:
        """Add entity links (a link already there is kept as it is); returns how many were new."""
        columns = ("entity_id", "relation", "at", "session_id", *LINK_OWNERS, "via_id", "detail")
        rows = [self.clean("entity_links", link) for link in links]
        if not rows:
            return 0
        cursor = self._conn.executemany(
            f"INSERT OR IGNORE INTO entity_links ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})",
            [tuple(row.get(column) for column in columns) for row in rows],
        )
        return cursor.rowcount

    def unlink_entities(self, owner: str, owner_id: int) -> None:
        """Drop the links of one message or record, before it is connected again."""
        if owner not in LINK_OWNERS:
            raise ValueError(f"entity links have no owner column {owner!r}")
        self._conn.execute(f"DELETE FROM entity_links WHERE {owner} = ?", (owner_id,))

    def mark_connected(self, session_id: int, message_id: int) -> None:
        """Remember the last message of a session whose entities are stored (ids only: nothing to scrub)."""
        self._conn.execute(
            "INSERT INTO entity_scans (session_id, message_id) VALUES (?, ?) ON CONFLICT (session_id) "
            "DO UPDATE SET message_id = max(message_id, excluded.message_id)",
            (session_id, message_id),
        )

    def mark_records_connected(self, kind: str, row_id: int) -> None:
        self._conn.execute(
            "INSERT INTO entity_record_scans (kind, row_id) VALUES (?, ?) ON CONFLICT (kind) "
            "DO UPDATE SET row_id = max(row_id, excluded.row_id)",
            (kind, row_id),
        )

    def remember_source(
        self, host: str, path: str, size: int, mtime_ns: int, sessions: int, messages: int
    ) -> None:
        """Note a source file as imported at this size and mtime (no free text: nothing to scrub)."""
        self._conn.execute(
            "INSERT INTO source_files (host, path, size, mtime_ns, imported_at, sessions, messages) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (host, path) DO UPDATE SET size = excluded.size, "
            "mtime_ns = excluded.mtime_ns, imported_at = excluded.imported_at, "
            "sessions = excluded.sessions, "
            "messages = source_files.messages + excluded.messages",
            (host, path, size, mtime_ns, to_db_time(utc_now()), sessions, messages),
        )

    def register_model(self, model_id: str, model_hash: str, dim: int) -> int:
        """The key under which vectors of exactly this model file are stored."""
        self._conn.execute(
            "INSERT OR IGNORE INTO embedding_models (model_id, model_hash, dim, created_at) VALUES (?, ?, ?, ?)",
            (model_id, model_hash, dim, to_db_time(utc_now())),
        )
        row = self._conn.execute(
            "SELECT id FROM embedding_models WHERE model_id = ? AND model_hash = ?", (model_id, model_hash)
        ).fetchone()
        return int(row[0])

    def store_vectors(self, model_key: int, rows: Sequence[tuple[int, int, str, str, float, bytes]]) -> None:
        """Vectors are numbers, not text: nothing to scrub. Rows: (kind code, id, project, hash, scale, blob)."""
        self._conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model_key, kind_code, row_id, project, content_hash, scale, vector) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(model_key, *row) for row in rows],
        )

    def drop_vectors(self) -> int:
        return self._conn.execute("DELETE FROM embeddings").rowcount

    @staticmethod
    def _stamp(row: dict[str, Any], provenance: Provenance) -> dict[str, Any]:
        now = to_db_time(utc_now())
        row.setdefault("created_at", now)
        row["updated_at"] = now
        row["provenance"] = provenance.value
        return row
