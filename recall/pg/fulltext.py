"""Keyword search on PostgreSQL: tsvector and GIN in place of FTS5 (adr/0024).

Each searchable row has two vectors in ``search_index`` (kept by triggers, recall.pg.schema):
``words``, English-stemmed with content, detail and tags weighted as FTS5's bm25 weights them,
and ``tokens``, code tokens kept whole (``snake_case``, ``os.path.join``, ``src/x.py``), which the
English parser would split. User text never reaches a tsquery parser as syntax: the terms are the
ones ``fts_query.match_terms`` picks for SQLite (letters and digits only), each turned into a
query by ``phraseto_tsquery``/``to_tsquery`` on a quoted lexeme, and code tokens are matched by
lexemes built here from a closed alphabet. So any query gives hits or none, never an error.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from recall.search.fts_query import _lex, _Term, match_terms

MAX_TERMS = 32
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.:/-]+[A-Za-z0-9_]+)+|[A-Za-z0-9]*_[A-Za-z0-9_]*")
CODE_WEIGHT = 2.0  # a whole code token is rarer, and more telling, than its stemmed parts
COMMON_SHARE = 0.01  # a term in more rows than this only ranks, when the query has rarer terms
CANDIDATE_CAP = 5000  # rows scored at most per query (bench/serve_load.py: p95 at a million messages)
STATS_TTL_S = 300.0


def code_tokens(query: str) -> list[str]:
    """The query's code tokens (with ``_ . : / -`` inside), lower-cased, as the index stores them."""
    found = [token.lower().strip("_") and token.lower() for token in _CODE_TOKEN.findall(query)]
    return list(dict.fromkeys(token for token in found if token and len(token) < 200))[:MAX_TERMS]


@dataclass(frozen=True, slots=True)
class WordsQuery:
    """The stemmed query: ``rank`` scores a row, ``find`` picks the rows to score (the same unless
    very common terms were left out of it), each a SQL expression with its parameters."""

    rank: tuple[str, list[str]]
    find: tuple[str, list[str]]


def words_query(query: str, conn: Any | None = None) -> WordsQuery | None:
    """The terms ORed as ``build_match`` does, or, when the query says AND, OR or NOT between terms,
    joined as it says. With ``conn``, terms in more than ``COMMON_SHARE`` of the rows are left out of
    ``find`` when rarer ones remain: they would match a large part of the table for a sliver of
    relevance (bm25 gives them almost none), and they still count in ``rank``."""
    items = _lex(query)
    if any(isinstance(item, str) for item in items):
        explicit = _with_operators(items)
        return None if explicit is None else WordsQuery(explicit, explicit)
    terms = [_Term(pieces, prefix) for pieces, prefix in match_terms(query)[:MAX_TERMS]]
    if not terms:
        return None
    ranked = _ored(terms)
    if conn is None or len(terms) < 2:
        return WordsQuery(ranked, ranked)
    shares = term_shares(conn, terms)
    rare = [term for term, share in zip(terms, shares, strict=True) if share < COMMON_SHARE]
    return WordsQuery(ranked, _ored(rare) if rare else ranked)


def _ored(terms: list[_Term]) -> tuple[str, list[str]]:
    parts = [_term_sql(term) for term in terms]
    return " || ".join(sql for sql, _ in parts), [param for _, param in parts]


def _with_operators(items: list[_Term | str]) -> tuple[str, list[str]] | None:
    sql: list[str] = []
    params: list[str] = []
    pending: str | None = None
    for item in items[: MAX_TERMS * 2]:
        if isinstance(item, str):
            pending = item if sql else None
            continue
        if sql:
            sql.append(_JOIN[pending or "AND"])
        pending = None
        term_sql, param = _term_sql(item)
        sql.append(term_sql)
        params.append(param)
    return (" ".join(sql), params) if sql else None


_JOIN = {"AND": "&&", "OR": "||", "NOT": "&& !!"}


def _term_sql(term: _Term) -> tuple[str, str]:
    """One term as a tsquery: a phrase of its pieces, or a prefix of its last one (quoted lexemes)."""
    if term.prefix:
        return "to_tsquery('english', %s)", " <-> ".join(f"'{piece}'" for piece in term.pieces) + ":*"
    return "phraseto_tsquery('english', %s)", " ".join(term.pieces)


def term_shares(conn: Any, terms: list[_Term]) -> list[float]:
    """For each term, the share of indexed rows holding it (a phrase: its rarest word), from the
    lexeme statistics ANALYZE keeps (``pg_stats.most_common_elems``); a word not listed there is rarer
    than every listed one, so 0."""
    frequencies = _lexeme_shares(conn)
    if not frequencies:
        return [0.0 for _ in terms]
    words = [" ".join(term.pieces) for term in terms]
    rows = conn.raw.execute(
        b"SELECT n, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) WITH ORDINALITY AS u(w, n)",
        (words,),
    ).fetchall()
    lexemes = {int(n): list(found or []) for n, found in rows}
    return [
        min((frequencies.get(lexeme, 0.0) for lexeme in lexemes.get(index, [])), default=0.0)
        for index in range(1, len(terms) + 1)
    ]


_SHARES: dict[str, tuple[float, dict[str, float]]] = {}
_SHARES_LOCK = threading.Lock()


def _lexeme_shares(conn: Any) -> dict[str, float]:
    """lexeme → share of rows, refreshed every ``STATS_TTL_S`` per database."""
    with _SHARES_LOCK:
        cached = _SHARES.get(conn.url)
        if cached is not None and time.monotonic() - cached[0] < STATS_TTL_S:
            return cached[1]
        row = conn.raw.execute(
            b"SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            b"WHERE schemaname = current_schema() AND tablename = 'search_index' AND attname = 'words'"
        ).fetchone()
        shares = dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}
        _SHARES[conn.url] = (time.monotonic(), shares)
        return shares


def candidates(
    conn: Any, query: str, *, kind: str | None, project: str | None, depth: int, only: set[int] | None = None
) -> dict[int, float]:
    """Index rowid → relevance (higher is better) for the best ``depth`` matches of ``query``.

    The rows to score are found first (GIN) and at most ``CANDIDATE_CAP`` of them scored: a query
    of only very common words ranks among the first rows that match, not the whole table."""
    words = words_query(query, conn)
    tokens = code_tokens(query)
    if words is None and not tokens or depth <= 0:
        return {}
    (rank_sql, rank_params), (find_sql, find_params) = (
        (words.rank, words.find) if words is not None else (("''::tsquery", []), ("''::tsquery", []))
    )
    token_query = " | ".join(f"'{token}'" for token in tokens)
    found = ["s.words @@ q.f"] if words is not None else []
    if tokens:
        found.append("s.tokens @@ q.t")
    where = [f"({' OR '.join(found)})"]
    scope: list[Any] = []
    if project is not None:
        where.append("s.project = %s")
        scope.append(project)
    if kind is not None:
        where.append("s.kind = %s")
        scope.append(kind)
    if only is not None:
        where.append("s.rowid = ANY(%s)")
        scope.append(sorted(only))
    code_rank = f" + {CODE_WEIGHT} * ts_rank(c.tokens, q.t)" if tokens else ""
    sql = (
        f"WITH q AS (SELECT ({rank_sql}) AS w, ({find_sql}) AS f, %s::tsquery AS t), "
        "c AS MATERIALIZED (SELECT s.rowid, s.words, s.tokens FROM search_index s, q "
        f"WHERE {' AND '.join(where)} LIMIT %s) "
        f"SELECT c.rowid, ts_rank('{{0.1, 0.8, 0.5, 1.0}}', c.words, q.w){code_rank} AS score "
        "FROM c, q ORDER BY score DESC, c.rowid LIMIT %s"
    )
    params = (*rank_params, *find_params, token_query or "", *scope, CANDIDATE_CAP, depth)
    rows = conn.raw.execute(sql.encode(), params).fetchall()
    return {int(rowid): float(score) for rowid, score in rows}
