"""How many secrets the scrubber took out of what is stored, per kind of secret and per kind of row.

The scrubber leaves ``[REDACTED:<kind>]`` where a secret was (adr/0002), and nothing else records
a redaction, so the count is read from the stored text. The keyword index finds the rows holding the
word ``redacted`` (the markers included) without reading every message; only those rows are read
and their markers counted. Session titles are not in the index and are read directly (one row per
session).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall.rowkinds import KIND_BY_CODE, TABLE_NAMES, split_rowid

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

MARKER = re.compile(r"\[REDACTED:([a-z0-9_-]+)\]")
_TEXT = {  # the columns each table keeps text in
    "decisions": "content || ' ' || coalesce(detail, '') || ' ' || tags",
    "learnings": "content || ' ' || coalesce(detail, '') || ' ' || tags",
    "breadcrumbs": "content || ' ' || coalesce(detail, '') || ' ' || tags",
    "session_summaries": "title || ' ' || content",
    "messages": "content || ' ' || coalesce(tool_name, '')",
    "notes": "path || ' ' || content",
}
_BATCH = 500


@dataclass(frozen=True, slots=True)
class Redactions:
    by_secret: Mapping[str, int]  # secret kind → markers stored, most first
    rows_by_kind: Mapping[str, int]  # row kind → rows holding at least one marker

    @property
    def total(self) -> int:
        return sum(self.by_secret.values())


def count_redactions(store: Store) -> Redactions:
    secrets: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    with store.reading() as conn:
        for kind, text in _marked_texts(conn):
            found = MARKER.findall(text)
            if found:
                secrets.update(found)
                rows[kind] += 1
    return Redactions(dict(secrets.most_common()), dict(rows.most_common()))


def _marked_texts(conn: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    """(row kind, text) of every row the index says holds the word ``redacted``, and such session titles."""
    candidates: dict[int, list[int]] = {}
    for (rowid,) in conn.execute("SELECT rowid FROM search_index WHERE search_index MATCH 'redacted'"):
        code, row_id = split_rowid(rowid)
        candidates.setdefault(code, []).append(row_id)
    for code, ids in candidates.items():
        table = TABLE_NAMES[KIND_BY_CODE[code]]
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            sql = f"SELECT {_TEXT[table]} FROM {table} WHERE id IN ({', '.join('?' for _ in batch)})"
            yield from ((KIND_BY_CODE[code].value, text) for (text,) in conn.execute(sql, batch))
    for (title,) in conn.execute("SELECT title FROM sessions WHERE title LIKE '%[REDACTED:%'"):
        yield "session", title
