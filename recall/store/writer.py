"""The single write path: every INSERT and UPDATE of a text-bearing row goes through ``Writer``.

Two guarantees live here and nowhere else (adr/0001, adr/0002):

* every text column, and every string inside JSON columns, passes ``recall.scrub.scrub``, and
  text is shortened only after that (a :class:`Capped` value says where; adr/0013);
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
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from recall.db import FTS5_SECURE_DELETE, sqlite_version
from recall.dbtime import to_db_time, utc_now
from recall.entities.mention import lookup_key
from recall.pathnames import printable
from recall.pickled import pickled_as_call
from recall.rowkinds import JSON_COLUMNS, Provenance
from recall.scrub import scrub, scrub_value
from recall.store.caps import scrub_then_cap
from recall.store.records import normalise_tags
from recall.transcript import Cut

# Columns whose text is free-form and may carry secrets. Everything else is ids, enums and times.
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("title", "cwd", "git_branch", "model", "source_path", "parent_external_id"),
    "messages": ("content", "tool_name"),
    "decisions": ("content", "detail", "source"),
    "learnings": ("content", "detail", "source"),
    "breadcrumbs": ("content", "detail", "source"),
    "session_summaries": ("title", "content"),
    "notes": ("path", "content"),
    "entities": ("name",),  # the lookup key is derived from the scrubbed name
    "entity_links": ("detail",),
    "profiles": ("value",),  # keys are checked words (recall.profile), never free text
}
# Entity names and command lines repeat across a whole import (`pytest`, `git status`): their scrub
# is remembered.
_SHORT_TEXT_TABLES = frozenset({"entities", "entity_links"})
_scrub_short = lru_cache(maxsize=16_384)(scrub)
# From this many messages on, one insert indexes them in one statement rather than by row trigger.
BULK_INDEX_ROWS = 8
# The values of m0001's message index trigger, for every message above an id (m0017).
_INDEX_MESSAGES_ABOVE = (
    "INSERT INTO search_index (rowid, content, detail, tags, scope) "
    "SELECT id * 8 + 5, content, coalesce(tool_name, ''), '', 'kmessage p' || hex(project) "
    "FROM messages WHERE id > ?"
)
ENTITY_PAIRS_PER_QUERY = 400  # (type, name) pairs looked up together: 801 parameters, under SQLite's 999
# The owners an entity link can have; each is a foreign key that removes the link with its owner.
LINK_OWNERS = ("message_id", "decision_id", "learning_id", "breadcrumb_id")


@dataclass(frozen=True, slots=True)
class Capped:
    """Text to store with parts cut to their limits, after it is scrubbed (never before)."""

    text: str
    cuts: tuple[Cut, ...] = ()


# Names the host or the file system chose (ids, paths): bytes that are not UTF-8 are written as \xNN
# (recall.pathnames), the same text every time, so an id taken from such a file name stays one key.
NAME_COLUMNS = frozenset({"external_id", "parent_external_id", "agent_id", "source_path"})


@pickled_as_call
@dataclass(frozen=True, slots=True)
class CleanRow:
    """A row that ``clean_row`` has scrubbed and serialised, ready for ``Writer.insert_clean``.

    Why it exists: scrubbing is most of an import's cost, and inside a write transaction it holds
    the database's one write lock while every other process waits (adr/0016). Rows are cleaned
    first and written afterwards in a short transaction; only ``clean_row`` makes one, so text that
    reaches the database this way has passed the scrubber all the same.
    """

    table: str
    values: Mapping[str, Any]
    redactions: tuple[str, ...]

    def only(self, columns: Iterable[str]) -> CleanRow:
        """The same cleaned row cut to ``columns`` (an update of a few of them)."""
        return CleanRow(self.table, {column: self.values[column] for column in columns}, self.redactions)


def clean_row(table: str, values: Mapping[str, Any]) -> CleanRow:
    """Scrub text, serialise JSON columns and times: the only transformation before SQL."""
    text_columns = TEXT_COLUMNS[table]
    row: dict[str, Any] = {}
    redactions: list[str] = []
    for column, value in values.items():
        if isinstance(value, str) and (column in NAME_COLUMNS or column not in text_columns):
            value = printable(value)
        if column in text_columns and isinstance(value, str) and table in _SHORT_TEXT_TABLES:
            # Derived from messages whose secrets were counted already: redacted, not counted twice.
            value = _scrub_short(value).text
        elif column in text_columns and isinstance(value, str | Capped):
            capped = value if isinstance(value, Capped) else Capped(value)
            result = scrub_then_cap(capped.text, capped.cuts)
            redactions.extend(result.kinds)
            value = result.text
        elif column in JSON_COLUMNS:
            value, kinds = scrub_value(value if value is not None else ([] if column == "tags" else {}))
            redactions.extend(kinds)
            if column == "tags":
                value = normalise_tags(value)
            value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        elif isinstance(value, datetime):
            value = to_db_time(value)
        row[column] = value
    return CleanRow(table, row, tuple(redactions))


ENTITY_ROWS_KEPT = 4096  # entity names cleaned once per writer (``Writer._entity_row``)


class Writer:
    """Scrubs and stamps rows, then writes them on the store's connection."""

    def __init__(self, conn: sqlite3.Connection, *, bulk_index: bool = False) -> None:
        self._conn = conn
        self._bulk_index = bulk_index  # SQLite's index of messages, written once per insert (m0017)
        self.redactions: Counter[str] = Counter()
        self._entity_rows: dict[tuple[str, str, str], tuple[dict[str, Any], tuple[str, ...]]] = {}

    def clean(self, table: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """``clean_row``, counting what it redacted in this transaction's ``redactions``."""
        cleaned = clean_row(table, values)
        self.redactions.update(cleaned.redactions)
        return dict(cleaned.values)

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
        cleaned = [clean_row(table, values) for values in rows]
        missing = set(columns) - set(cleaned[0].values) if cleaned else set()
        if missing:
            raise ValueError(f"rows for {table} lack columns {sorted(missing)}")
        return self.insert_clean(cleaned, provenance, [{} for _ in cleaned])

    def insert_clean(
        self, rows: Sequence[CleanRow], provenance: Provenance, fills: Sequence[Mapping[str, Any]]
    ) -> int:
        """Insert rows cleaned beforehand, each completed by its ``fills`` entry (ids, ordinals,
        project: never text); returns how many were written."""
        if not rows:
            return 0
        table = rows[0].table
        stamped = []
        for row, fill in zip(rows, fills, strict=True):
            if row.table != table or set(fill).intersection(TEXT_COLUMNS[table], JSON_COLUMNS):
                raise ValueError(f"text for {table} must pass clean_row, not a fill")
            stamped.append(self._stamp({**row.values, **fill}, provenance))
            self.redactions.update(row.redactions)
        names = list(stamped[0])
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
        values = [tuple(row[name] for name in names) for row in stamped]
        if self._bulk_index and table == "messages" and len(values) >= BULK_INDEX_ROWS:
            self._insert_messages_indexed_once(sql, values)
        else:
            self._conn.executemany(sql, values)
        return len(stamped)

    def _insert_messages_indexed_once(self, sql: str, values: list[tuple[Any, ...]]) -> None:
        """Insert messages with the index trigger deferred, then index them in one statement
        (m0017, adr/0046). New rows take ids above the largest before them, so ``id > top`` is
        exactly this insert's rows; they are indexed even when a row fails partway, and the deferral
        ends before anything else runs in the transaction."""
        top = self._conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        self._conn.execute("INSERT INTO message_index_deferred VALUES (1)")
        try:
            self._conn.executemany(sql, values)
        finally:
            try:
                self._conn.execute(_INDEX_MESSAGES_ABOVE, (top,))
            finally:
                self._conn.execute("DELETE FROM message_index_deferred")

    def update(
        self, table: str, row_id: int, values: Mapping[str, Any] | CleanRow, *, touch: bool = True
    ) -> None:
        """Correct a row in place: provenance and created_at stay, updated_at moves.

        A rescrub passes ``touch=False``: redacting a secret is not a change anyone made to the row.
        """
        if isinstance(values, CleanRow):
            if values.table != table:
                raise ValueError(f"a row cleaned for {values.table} cannot update {table}")
            self.redactions.update(values.redactions)
            row = dict(values.values)
        else:
            row = self.clean(table, values)
        row.pop("provenance", None)
        row.pop("created_at", None)
        if touch:
            row["updated_at"] = to_db_time(utc_now())
        assignments = ", ".join(f"{column} = ?" for column in row)
        self._conn.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", (*row.values(), row_id))

    def entity(self, project: str, type_: str, name: str) -> int:
        """The id of an entity, added (provenance extracted) if the project has none of that name."""
        return self.entities(project, [(type_, name)])[type_, name]

    def entities(self, project: str, names: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """``entity`` for many (type, name) pairs of one project: those it has are found a few hundred
        to a query, the rest added in the order given."""
        rows = {pair: self._entity_row(project, *pair) for pair in names}
        cleaned = list(dict.fromkeys((row["type"], row["name"]) for row in rows.values()))
        found: dict[tuple[str, str], int] = {}
        if rows:
            owner = next(iter(rows.values()))["project"]
            for start in range(0, len(cleaned), ENTITY_PAIRS_PER_QUERY):
                chunk = cleaned[start : start + ENTITY_PAIRS_PER_QUERY]
                query = (
                    "SELECT type, name, id FROM entities WHERE project = ? AND (type, name) IN "
                    f"(VALUES {', '.join('(?, ?)' for _ in chunk)})"
                )
                flat = [value for pair in chunk for value in pair]
                found.update(
                    ((type_, name), id_) for type_, name, id_ in self._conn.execute(query, (owner, *flat))
                )
        ids: dict[tuple[str, str], int] = {}
        for pair, row in rows.items():
            key = (row["type"], row["name"])
            if key not in found:
                found[key] = self._add_entity(row)
            ids[pair] = found[key]
        return ids

    def _add_entity(self, row: dict[str, Any]) -> int:
        stamped = self._stamp(row, Provenance.EXTRACTED)
        cursor = self._conn.execute(
            f"INSERT INTO entities ({', '.join(stamped)}) VALUES ({', '.join('?' for _ in stamped)})",
            tuple(stamped.values()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _entity_row(self, project: str, type_: str, name: str) -> dict[str, Any]:
        """An entity's cleaned columns. An import names the same files and commands again and again,
        and scrubbing a name is pure, so each is cleaned once (the redactions are counted each time)."""
        made = self._entity_rows.get((project, type_, name))
        if made is None:
            cleaned = clean_row("entities", {"project": project, "type": type_, "name": name})
            values = {**cleaned.values, "key": lookup_key(type_, cleaned.values["name"])}
            if len(self._entity_rows) >= ENTITY_ROWS_KEPT:
                self._entity_rows.clear()
            made = self._entity_rows[project, type_, name] = (values, cleaned.redactions)
        self.redactions.update(made[1])
        return dict(made[0])

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

    def remember_forgotten(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Note forgotten sessions and messages by digest (no text): (digest, session digest, kind)."""
        self._conn.executemany(
            "INSERT OR IGNORE INTO forgotten (digest, session_digest, kind, forgotten_at) VALUES (?, ?, ?, ?)",
            [(*row, to_db_time(utc_now())) for row in rows],
        )

    def erase_index_in_place(self) -> bool:
        """Have FTS5 take a deleted row's words out of the index pages themselves (SQLite 3.43+).

        Otherwise a delete only adds a tombstone beside the old entry, and the words stay on disk
        until the segments are merged (``merge_index``). The setting is kept in the index and moves
        it to FTS5 file format 5, which an older SQLite cannot open (adr/0014).
        """
        if sqlite_version(self._conn) < FTS5_SECURE_DELETE:
            return False
        self._conn.execute("INSERT INTO search_index (search_index, rank) VALUES ('secure-delete', 1)")
        return True

    def merge_index(self) -> None:
        """Merge every index segment into one: deleted entries and their tombstones leave the file."""
        self._conn.execute("INSERT INTO search_index (search_index) VALUES ('optimize')")

    def queue_summary(self, session_id: int) -> None:
        """Queue a session for its summary in this transaction (m0007_import_repair): a crash before
        the summary is written leaves it queued for the next import."""
        self._conn.execute(
            "INSERT INTO summaries_due (session_id) VALUES (?) "
            "ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1",
            (session_id,),
        )

    def summary_generation(self, session_id: int) -> int | None:
        """How often the session was queued: a summary drafted at this generation is still current."""
        row = self._conn.execute(
            "SELECT generation FROM summaries_due WHERE session_id = ?", (session_id,)
        ).fetchone()
        return None if row is None else int(row[0])

    def summary_done(self, session_id: int, generation: int) -> None:
        """Take a session off the queue, unless it was queued again since ``generation`` was read."""
        self._conn.execute(
            "DELETE FROM summaries_due WHERE session_id = ? AND generation = ?", (session_id, generation)
        )

    # -- extraction lineage: ids, rule names, hashes and times, no free text (recall.store.extracted) --

    def record_lineage(
        self,
        kind_code: int,
        row_id: int,
        rule: str,
        version: int,
        confidence: float,
        mark: str,
        session_id: int,
    ) -> None:
        self._conn.execute(
            "INSERT INTO extraction_lineage (kind_code, record_id, rule, rule_version, confidence, fingerprint, "
            "session_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind_code, row_id, rule, version, confidence, mark, session_id),
        )

    def add_sources(self, kind_code: int, row_id: int, message_ids: Sequence[int]) -> int:
        """Link a record to the messages it came from; returns how many links are new."""
        before = self._conn.total_changes
        self._conn.executemany(
            "INSERT OR IGNORE INTO record_sources (kind_code, record_id, message_id) VALUES (?, ?, ?)",
            [(kind_code, row_id, message_id) for message_id in message_ids],
        )
        return self._conn.total_changes - before

    def restore_updated_at(self, table: str, row_id: int, updated_at: str) -> None:
        """Give an imported row back the ``updated_at`` it had where it was exported (a time, no text)."""
        self._conn.execute(f"UPDATE {table} SET updated_at = ? WHERE id = ?", (updated_at, row_id))

    def link_superseded(self, decision_id: int, by: int) -> None:
        """Restore an imported decision's supersession link (ids only), keeping its dates."""
        self._conn.execute("UPDATE decisions SET superseded_by = ? WHERE id = ?", (by, decision_id))

    def repoint_supersession(self, merged: Sequence[int], keep: int) -> None:
        """Decisions superseded by a merged decision are now superseded by the one kept (ids only)."""
        marks = ", ".join("?" for _ in merged)
        self._conn.execute(
            f"UPDATE decisions SET superseded_by = ? WHERE superseded_by IN ({marks}) AND id != ?",
            (keep, *merged, keep),
        )

    def update_lineage(self, kind_code: int, row_id: int, **values: Any) -> None:
        """Set lineage columns: ``confidence`` (raised, never lowered), ``review``, ``conflicts_with``."""
        assignments, params = [], []
        for column, value in values.items():
            if column == "confidence":
                assignments.append("confidence = max(confidence, ?)")
            elif column in ("review", "conflicts_with"):
                assignments.append(f"{column} = ?")
                value = json.dumps(value) if column == "conflicts_with" else value
            else:
                raise ValueError(f"not a lineage column: {column}")
            params.append(value)
        self._conn.execute(
            f"UPDATE extraction_lineage SET {', '.join(assignments)} WHERE kind_code = ? AND record_id = ?",
            (*params, kind_code, row_id),
        )

    def remember_extraction(self, session_id: int, last_ordinal: int) -> None:
        self._conn.execute(
            "INSERT INTO extraction_progress (session_id, last_ordinal, extracted_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET last_ordinal = excluded.last_ordinal, "
            "extracted_at = excluded.extracted_at",
            (session_id, last_ordinal, to_db_time(utc_now())),
        )

    def remember_closure(self, project: str, mark: str, closed_at: str, session_id: int) -> None:
        self._conn.execute(
            "INSERT INTO plan_closures (project, fingerprint, closed_at, session_id) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (project, fingerprint) DO UPDATE SET closed_at = max(closed_at, excluded.closed_at), "
            "session_id = excluded.session_id",
            (project, mark, closed_at, session_id),
        )

    def remember_rejection(self, project: str, kind_code: int, mark: str) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO extraction_rejections (project, kind_code, fingerprint, rejected_at) "
            "VALUES (?, ?, ?, ?)",
            (project, kind_code, mark, to_db_time(utc_now())),
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

    def clear_due(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Take rows off the embedding queue (m0010) whose row is gone: nothing is left to embed."""
        self._conn.executemany("DELETE FROM vectors_due WHERE kind_code = ? AND row_id = ?", pairs)

    def drop_vectors(self) -> int:
        return self._conn.execute("DELETE FROM embeddings").rowcount

    # -- sync and team bookkeeping (recall.store.synced, recall.pg.team, adr/0025) ----------------
    # Ids, digests, sequence numbers and times; the two texts (a server's URL, a person's name) are
    # scrubbed by the caller's key (``sync_key``) or here.

    def remember_sync(self, remote: str, machine: str) -> None:
        self._conn.execute(
            "INSERT INTO sync_state (remote, machine) VALUES (?, ?) ON CONFLICT (remote) DO NOTHING",
            (remote, machine),
        )

    def link_synced(self, rows: Sequence[tuple[str, str, int, int, str]]) -> None:
        """(remote, kind, local id, server id, agreed updated_at) pairs of a client's records."""
        self._conn.executemany(
            "INSERT INTO sync_links (remote, kind, local_id, server_id, agreed_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (remote, kind, local_id) DO UPDATE SET server_id = excluded.server_id, "
            "agreed_at = excluded.agreed_at",
            rows,
        )

    def queue_sync_forgets(self, rows: Iterable[tuple[str, str, int | None, str | None, str | None]]) -> None:
        """Tombstones for a team server (m0016_sync_forgets): (remote, kind, server id, digest,
        session digest); ids and digests only."""
        now = to_db_time(utc_now())
        self._conn.executemany(
            "INSERT INTO sync_forgets (remote, kind, server_id, digest, session_digest, forgotten_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(*row, now) for row in rows],
        )

    def remember_origin(self, origin: str, kind_code: int, row_id: int) -> None:
        """The server's row for a record another machine made (origin: machine id, kind, its id)."""
        self._conn.execute(
            "INSERT INTO sync_origins (origin, kind_code, row_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (origin, kind_code, row_id),
        )

    def add_token(self, name: str, digest: str, projects: Sequence[str]) -> None:
        self._conn.execute(
            "INSERT INTO team_tokens (name, token_hash, projects, created_at) VALUES (?, ?, ?, ?)",
            (scrub(name).text, digest, json.dumps(list(projects)), to_db_time(utc_now())),
        )

    def revoke_tokens(self, name: str) -> int:
        return int(
            self._conn.execute(
                "UPDATE team_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                (to_db_time(utc_now()), scrub(name).text),
            ).rowcount
        )

    @staticmethod
    def _stamp(row: dict[str, Any], provenance: Provenance) -> dict[str, Any]:
        now = to_db_time(utc_now())
        row.setdefault("created_at", now)
        row["updated_at"] = now
        row["provenance"] = provenance.value
        return row
