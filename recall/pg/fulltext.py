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

import hashlib
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall.search.fts_query import _lex, _Term, match_terms

MAX_TERMS = 32
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.:/-]+[A-Za-z0-9_]+)+|[A-Za-z0-9]*_[A-Za-z0-9_]*")
CODE_WEIGHT = 2.0  # a whole code token is rarer, and more telling, than its stemmed parts
WEIGHTS = "'{0.1, 0.8, 0.5, 1.0}'"  # ts_rank weights of D, C (tags), B (detail), A (content): bm25's
SMALL_INDEX_ROWS = 50_000  # below, every match is found and scored, as FTS5 does
COMMON_ROWS = 10_000  # above SMALL_INDEX_ROWS, a term in more rows only ranks when rarer ones remain
COUNT_CAP = COMMON_ROWS + 1
CANDIDATE_CAP = 2000  # rows scored at most per query on a large index (bench/serve_load.py)
STATS_TTL_S = 300.0


_STOP_CACHE: dict[str, bool] = {}
_STOP_CACHE_MAX = 10_000
_LEXEME = re.compile(r"[a-z0-9_]+")


def stop_lexemes(conn: Any, query: str) -> list[str]:
    """The query's words that English stemming drops as stop words (``the``, ``and``, ``of``), as
    ``tokens`` lexemes: a query of such words would otherwise be an empty tsquery and find
    nothing, where FTS5, which keeps them, finds the rows holding them. ``tokens`` keeps every
    ASCII word whole and unstemmed, so they are matched there (the ``simple`` reading). Which
    words are stop words is PostgreSQL's own list, asked once per word and kept."""
    items = _lex(query)
    if any(isinstance(item, str) for item in items):
        pieces = [piece for item in items if isinstance(item, _Term) for piece in item.pieces]
    else:
        pieces = [piece for found, _ in match_terms(query) for piece in found]
    words = list(dict.fromkeys(p for p in pieces if len(p) < 200 and _LEXEME.fullmatch(p)))[:MAX_TERMS]
    unknown = [word for word in words if word not in _STOP_CACHE]
    if unknown:
        rows = conn.raw.execute(
            b"SELECT w, numnode(phraseto_tsquery('english', w)) = 0 FROM unnest(%s::text[]) AS u(w)",
            (unknown,),
        ).fetchall()
        with _STATS_LOCK:
            if len(_STOP_CACHE) > _STOP_CACHE_MAX:
                _STOP_CACHE.clear()
            _STOP_CACHE.update({str(word): bool(stop) for word, stop in rows})
    return [word for word in words if _STOP_CACHE.get(word)]


def code_tokens(query: str) -> list[str]:
    """The query's code tokens (with ``_ . : / -`` inside), lower-cased, as the index stores them."""
    found = [token.lower().strip("_") and token.lower() for token in _CODE_TOKEN.findall(query)]
    return list(dict.fromkeys(token for token in found if token and len(token) < 200))[:MAX_TERMS]


@dataclass(frozen=True, slots=True)
class WordsQuery:
    """The stemmed query: ``find`` picks the rows to score, ``rank`` scores one (``c.words``), each a
    SQL expression with its parameters."""

    find: tuple[str, list[str]]
    rank: tuple[str, list[str]]


def words_query(query: str, conn: Any | None = None) -> WordsQuery | None:
    """The terms ORed as ``build_match`` does, or, when the query says AND, OR or NOT between terms,
    joined as it says. With ``conn`` each term's score is weighted by its bm25 idf, and on a large
    index a term in more than ``COMMON_ROWS`` rows is left out of ``find`` when rarer ones remain
    (only common ones: the rarest finds): it would match a large part of the table for a sliver of
    relevance, and it still counts in ``rank``."""
    items = _lex(query)
    if any(isinstance(item, str) for item in items):
        explicit = _with_operators(items)
        if explicit is None:
            return None
        return WordsQuery(explicit, (f"ts_rank({WEIGHTS}, c.words, ({explicit[0]}))", explicit[1]))
    terms = [_Term(pieces, prefix) for pieces, prefix in match_terms(query)[:MAX_TERMS]]
    if not terms:
        return None
    found = [_term_sql(term) for term in terms]
    if conn is None:
        return WordsQuery(_ored(terms), _weighted(found, [1.0] * len(found)))
    counts, total = term_counts(conn, found)
    weights = [math.log(1 + (total - n + 0.5) / (n + 0.5)) for n in counts]
    rare = list(range(len(terms)))
    if total > SMALL_INDEX_ROWS:
        rare = [i for i, n in enumerate(counts) if n <= COMMON_ROWS] or [min(rare, key=counts.__getitem__)]
    return WordsQuery(_ored([terms[i] for i in rare]), _weighted(found, weights))


def _weighted(found: list[tuple[str, str]], weights: list[float]) -> tuple[str, list[str]]:
    parts = [
        f"{weight:.4f} * ts_rank({WEIGHTS}, c.words, {sql})"
        for (sql, _), weight in zip(found, weights, strict=True)
    ]
    return " + ".join(parts), [param for _, param in found]


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


def term_counts(conn: Any, found: list[tuple[str, str]]) -> tuple[list[int], int]:
    """How many rows hold each term, and how many rows the index holds. A term whose words are all
    among the lexemes ANALYZE lists as most common (``pg_stats``) is counted from their share; any
    other is counted in the index, at most ``COUNT_CAP`` rows (beyond, only "common" matters)."""
    total = max(_index_rows(conn), 1)
    shares = _lexeme_shares(conn)
    listed: dict[int, int] = {}
    if shares:
        words = [param.replace("'", " ").replace(":*", " ").replace("<->", " ") for _, param in found]
        rows = conn.raw.execute(
            b"SELECT n, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) "
            b"WITH ORDINALITY AS u(w, n)",
            (words,),
        ).fetchall()
        for n, lexemes in rows:
            if lexemes and all(lexeme in shares for lexeme in lexemes):
                listed[int(n) - 1] = int(min(shares[lexeme] for lexeme in lexemes) * total)
    unlisted = [i for i in range(len(found)) if i not in listed]
    counted: dict[int, int] = {}
    if unlisted:
        counts = ", ".join(
            f"(SELECT count(*) FROM (SELECT 1 FROM search_index WHERE words @@ {found[i][0]} LIMIT {COUNT_CAP}) x)"
            for i in unlisted
        )
        row = conn.raw.execute(f"SELECT {counts}".encode(), [found[i][1] for i in unlisted]).fetchone()
        counted = dict(zip(unlisted, (int(n) for n in row), strict=True))
    return [listed[i] if i in listed else counted[i] for i in range(len(found))], total


_STATS: dict[tuple[str, str], tuple[float, Any]] = {}
_STATS_LOCK = threading.Lock()


def _statistic(conn: Any, name: str, read: Callable[[Any], Any]) -> Any:
    """``read(conn)``, kept per database for ``STATS_TTL_S``: planner statistics change slowly, and
    reading them on every search would cost a round trip each."""
    key = (conn.url, name)
    with _STATS_LOCK:
        cached = _STATS.get(key)
        if cached is not None and time.monotonic() - cached[0] < STATS_TTL_S:
            return cached[1]
        value = read(conn)
        _STATS[key] = (time.monotonic(), value)
        return value


def _lexeme_shares(conn: Any) -> dict[str, float]:
    """lexeme → share of rows, for the most common lexemes ANALYZE keeps."""

    def read(conn: Any) -> dict[str, float]:
        row = conn.raw.execute(
            b"SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            b"WHERE schemaname = current_schema() AND tablename = 'search_index' AND attname = 'words'"
        ).fetchone()
        return dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}

    shares: dict[str, float] = _statistic(conn, "shares", read)
    return shares


def _index_rows(conn: Any) -> int:
    """Rows in ``search_index``: the planner's estimate (exact count while the table is small or
    never analysed)."""

    def read(conn: Any) -> int:
        row = conn.raw.execute(
            b"SELECT reltuples::bigint FROM pg_class WHERE oid = 'search_index'::regclass"
        ).fetchone()
        estimate = int(row[0]) if row and row[0] is not None else -1
        if estimate < SMALL_INDEX_ROWS:
            estimate = int(conn.raw.execute(b"SELECT count(*) FROM search_index").fetchone()[0])
        return estimate

    rows: int = _statistic(conn, "rows", read)
    return rows


def _words_of(query: str) -> set[str]:
    """Every word piece of the query's terms (the words ``words_query`` turns into lexemes)."""
    return {piece for item in _lex(query) if isinstance(item, _Term) for piece in item.pieces}


def scope_query(kind: str | None, project: str | None) -> str:
    """The kind and project lexemes a row must hold (``recall_scope`` in recall.pg.schema)."""
    terms = [f"'~p:{hashlib.md5(project.encode('utf-8', 'surrogatepass')).hexdigest()}'"] if project else []
    if kind:
        terms.append(f"'~k:{re.sub(r'[^a-z_]', '', kind)}'")
    return " & ".join(terms)


def candidates(
    conn: Any, query: str, *, kind: str | None, project: str | None, depth: int, only: set[int] | None = None
) -> dict[int, float]:
    """Index rowid → relevance (higher is better) for the best ``depth`` matches of ``query``.

    The rows to score are found first (GIN) and at most ``CANDIDATE_CAP`` of them scored: a query
    of only very common words ranks among the first rows that match, not the whole table."""
    if depth <= 0:
        return {}
    words = words_query(query, conn)
    stops = stop_lexemes(conn, query)
    only_stops = bool(stops) and set(stops) >= _words_of(query)
    tokens = list(dict.fromkeys([*code_tokens(query), *(stops if only_stops else [])]))
    if only_stops:
        words = None  # an empty tsquery on ``words`` finds nothing; ``tokens`` holds the words whole
    if words is None and not tokens:
        return {}
    (rank_sql, rank_params), (find_sql, find_params) = (
        (words.rank, words.find) if words is not None else (("0", []), ("''::tsquery", []))
    )
    token_query = " | ".join(f"'{token}'" for token in tokens)
    # The queries are written into the statement (not joined from a CTE) so the planner sees them
    # and picks the GIN index; kind and project are lexemes of ``words`` (recall_scope), so one GIN
    # scan intersects them with the words instead of a second index scan over the whole project.
    scope = scope_query(kind, project)
    found: list[str] = []
    params: list[Any] = []
    if words is not None:
        # numnode: a query of stop words only is empty, and empty && scope would match the whole scope
        found.append(
            f"(s.words @@ (({find_sql}) && %s::tsquery) AND numnode({find_sql}) > 0)"
            if scope
            else f"s.words @@ ({find_sql})"
        )
        params.extend([*find_params, scope, *find_params] if scope else find_params)
    if tokens:
        found.append(
            "(s.tokens @@ %s::tsquery AND s.words @@ %s::tsquery)" if scope else "s.tokens @@ %s::tsquery"
        )
        params.extend([token_query, *([scope] if scope else [])])
    where = [f"({' OR '.join(found)})"]
    if only is not None:
        where.append("s.rowid = ANY(%s)")
        params.append(sorted(only))
    code_rank = f" + {CODE_WEIGHT} * ts_rank(c.tokens, %s::tsquery)" if tokens else ""
    capped = _index_rows(conn) > SMALL_INDEX_ROWS  # a small index scores every match
    sql = (
        "WITH c AS MATERIALIZED (SELECT s.rowid, s.words, s.tokens FROM search_index s "
        f"WHERE {' AND '.join(where)}{' LIMIT %s' if capped else ''}) "
        f"SELECT c.rowid, ({rank_sql}){code_rank} AS score FROM c ORDER BY score DESC, c.rowid LIMIT %s"
    )
    params.extend(
        [*([CANDIDATE_CAP] if capped else []), *rank_params, *([token_query] if tokens else []), depth]
    )
    rows = conn.raw.execute(sql.encode(), params).fetchall()
    return {int(rowid): float(score) for rowid, score in rows}
