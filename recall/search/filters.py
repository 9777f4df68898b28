"""Filters search applies before ranking: tags asked for, and rows that have expired.

Tag filters keep to the decisions, learnings and breadcrumbs carrying every tag asked for.

Tags live on the typed records only, so a tag filter narrows a search to them. The rows carrying
all the tags are found first, in SQL (``json_each`` over each row's tag list), and both halves of a
search then rank only those: keyword search inside the FTS query (``rowid IN``), meaning search by
exact cosines to exactly those rows. Filtering before ranking, not after, means a tag that few rows
carry still fills the page instead of being cut off by better matches without it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from recall.dbtime import to_db_time, utc_now
from recall.rowkinds import (
    KIND_BY_CODE,
    KIND_CODES,
    TABLE_NAMES,
    TYPED_KINDS,
    RecordKind,
    index_rowid,
    split_rowid,
)


def tagged_rowids(
    conn: sqlite3.Connection, tags: Sequence[str], *, project: str | None, table: RecordKind | None
) -> set[int]:
    """Index rowids (``index_rowid``) of the typed records in scope that carry every tag."""
    kinds = [kind for kind in TYPED_KINDS if table is None or kind is table]
    found: set[int] = set()
    for kind in kinds:
        # instr() on the stored JSON text rules most rows out cheaply (the writer stores tags with
        # ensure_ascii=False, so a tag's JSON string appears as is); json_each then checks exactly.
        clauses = [
            "instr(tags, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.value = ?)"
            for _ in tags
        ]
        params: list[str] = [value for tag in tags for value in (json.dumps(tag, ensure_ascii=False), tag)]
        if project is not None:
            clauses.append("project = ?")
            params.append(project)
        rows = conn.execute(f"SELECT id FROM {TABLE_NAMES[kind]} WHERE {' AND '.join(clauses)}", params)
        found.update(index_rowid(KIND_CODES[kind], row_id) for (row_id,) in rows)
    return found


def json_ids(ids: Iterable[int]) -> str:
    """A JSON array of integer ids for ``json_each``: what ``json.dumps`` writes, without its
    encoder machinery (several calls per search)."""
    return "[" + ",".join(map(str, ids)) + "]"


def expired_among(conn: sqlite3.Connection, rowids: Iterable[int]) -> set[int]:
    """Those of ``rowids`` (index rowids) that are typed records whose ``valid_until`` has passed.

    Why before ranking: hybrid scores are stretched over the candidates, so an expired row left in
    would still set the scale (and push a live row to 0) before it is dropped. Only the candidates
    are looked up, by primary key: the cost follows the page, not the store.
    """
    wanted: dict[RecordKind, list[int]] = {}
    for rowid in rowids:
        code, row_id = split_rowid(rowid)
        kind = KIND_BY_CODE.get(code)
        if kind in TYPED_KINDS:
            wanted.setdefault(kind, []).append(row_id)
    now = to_db_time(utc_now())
    found: set[int] = set()
    for kind, ids in wanted.items():
        rows = conn.execute(
            f"SELECT id FROM {TABLE_NAMES[kind]} WHERE id IN (SELECT value FROM json_each(?)) "
            "AND valid_until IS NOT NULL AND valid_until <= ?",
            (json_ids(ids), now),
        )
        found.update(index_rowid(KIND_CODES[kind], row_id) for (row_id,) in rows)
    return found
