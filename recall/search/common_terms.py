"""Hybrid search's keyword half leaves out the words that are everywhere (adr/0041).

FTS5 computes bm25 for every row a query matches (about 5 µs a row), and ``build_match`` joins a
query's words with OR, so one word found in 20,000 rows costs 100 ms before any rarer word counts.
At 1,000,000 messages such words made the keyword half most of hybrid search's tail (issue 16:
p95 at most 40 ms). They also say least about which rows matter: a word in one row of a hundred has
an idf of at most ln(99) ≈ 4.6, against 9-14 for the words that pick out a handful of rows.

So, as ``build_match`` already drops stop words beside content words, hybrid search drops a word
found in at least ``COMMON_SHARE`` of the index's rows (and at least ``COMMON_MIN_ROWS`` rows)
when the other words of the query still match ``depth`` rows, the number of keyword candidates
it wants. A query of common words only, or one whose rarer words match too few rows, is searched
as it is. The meaning half is untouched, and keyword mode searches every word.

Only the plain form ``build_match`` writes (words joined by OR) is thinned: a query with
operators, phrases or prefixes says exactly what it wants and is searched as written.
"""

from __future__ import annotations

import math
import sqlite3

from recall.search.fts_query import build_match, match_terms, render_term

COMMON_SHARE = 0.01
COMMON_MIN_ROWS = 5_000  # smaller stores search every word: all of their words cost little
_COLUMNS = "{content detail tags}"  # the columns keyword search matches (recall.search.keyword)


def keyword_query(conn: sqlite3.Connection, query: str, depth: int) -> str:
    """``query`` as hybrid search's keyword half asks it: without its common words, when the rest
    still match ``depth`` rows; otherwise ``query`` itself."""
    if getattr(conn, "dialect", "sqlite") != "sqlite":
        return query
    match = build_match(query)
    terms = match_terms(query)
    if match is None or len(terms) < 2 or any(prefix or len(pieces) > 1 for pieces, prefix in terms):
        return query
    rendered = [render_term(pieces, prefix) for pieces, prefix in terms]
    if " OR ".join(rendered) != match:  # operators: the query is searched as written
        return query
    rows = index_rows(conn)
    if rows is None or rows * COMMON_SHARE < COMMON_MIN_ROWS:
        return query
    limit = max(COMMON_MIN_ROWS, math.ceil(rows * COMMON_SHARE))
    counts = [_rows_with(conn, term, limit) for term in rendered]
    kept = [term for term, count in zip(rendered, counts, strict=True) if count < limit]
    if len(kept) == len(rendered) or sum(count for count in counts if count < limit) < depth:
        return query
    return " ".join(kept)


def _rows_with(conn: sqlite3.Connection, term: str, limit: int) -> int:
    """Rows holding ``term``, counted up to ``limit`` (walking a doclist costs a twentieth of scoring it)."""
    return int(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM search_index WHERE search_index MATCH ? LIMIT ?)",
            (f"{_COLUMNS} : {term}", limit),
        ).fetchone()[0]
    )


def index_rows(conn: sqlite3.Connection) -> int | None:
    """The index's row count as FTS5 keeps it: the first varint of its averages record."""
    row = conn.execute("SELECT block FROM search_index_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return None
    value, block = 0, bytes(row[0])
    for at in range(min(9, len(block))):
        byte = block[at]
        if at == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return None
