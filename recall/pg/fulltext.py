"""Keyword search on PostgreSQL: tsvector and GIN in place of FTS5 (adr/0024).

Each searchable row has two vectors in ``search_index`` (kept by triggers, recall.pg.schema):
``words``, English-stemmed with content, detail and tags weighted as FTS5's bm25 weights them,
and ``tokens``, code tokens kept whole (``snake_case``, ``os.path.join``, ``src/x.py``), which the
English parser would split. User text never reaches a tsquery parser as syntax: the terms are the
ones ``fts_query.match_terms`` picks for SQLite (letters and digits only), each turned into a
query by ``phraseto_tsquery``/``to_tsquery`` on a quoted lexeme, and code tokens are matched by
lexemes built here from a closed alphabet. So any query gives hits or none, never an error.

Rows rank as SQLite ranks them (adr/0040): FTS5's bm25 (``project_bm25.idf`` and ``term_score``)
over the same terms, with the searched project's row count and document frequencies, each row's
column-weighted term counts and its length read from its ``words`` vector, for the best
``RESCORE_DEPTH`` matches by an idf-weighted ``ts_rank``. Up to 50,000 rows the statistics are
exact; above, they are the whole index's and only the first ``CANDIDATE_CAP`` matches compete.
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
from recall.search.project_bm25 import COLUMN_WEIGHTS, RESCORE_DEPTH, idf, term_score

MAX_TERMS = 32
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.:/-]+[A-Za-z0-9_]+)+|[A-Za-z0-9]*_[A-Za-z0-9_]*")
CODE_WEIGHT = 2.0  # a whole code token is rarer, and more telling, than its stemmed parts
WEIGHTS = "'{0.1, 0.8, 0.5, 1.0}'"  # ts_rank weights of D, C (tags), B (detail), A (content): bm25's
_LABELS = {"A": "content", "B": "detail", "C": "tags"}  # recall_words' weight label of each column
SCOPE_TOKENS = 2  # FTS5 counts its scope column's two tokens in every row's length
SMALL_INDEX_ROWS = 50_000  # below, every match is found and scored, as FTS5 does
COMMON_ROWS = 10_000  # above SMALL_INDEX_ROWS, a term in more rows only ranks when rarer ones remain
COUNT_CAP = COMMON_ROWS + 1
RARE_COUNT_CAP = 500  # a word ANALYZE does not list as common is counted up to this many rows
FUZZY_LIMIT = 10_000  # a query of only common words samples about this many postings per word
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
class PgTerm:
    """One query term as ``match_terms`` picks it for SQLite: the tsquery that matches it (SQL and
    parameter), and the PostgreSQL lexemes of its pieces in order (the last a prefix for ``word*``)."""

    sql: str
    param: str
    lexemes: tuple[str, ...]
    prefix: bool

    def frequency(self, found: dict[str, float]) -> float:
        """Column-weighted occurrences in a row, from the row's query lexemes (``found``): a phrase
        counts as often as its rarest lexeme (the row is known to hold the phrase)."""
        exact = self.lexemes[:-1] if self.prefix else self.lexemes
        counts = [found.get(lexeme, 0.0) for lexeme in exact]
        if self.prefix:
            counts.append(sum(n for lexeme, n in found.items() if lexeme.startswith(self.lexemes[-1])))
        return min(counts, default=0.0)


def pg_terms(conn: Any, query: str) -> list[PgTerm]:
    """The query's terms as SQLite scores them (``match_terms``), each with its PostgreSQL lexemes;
    a term the English configuration drops entirely (a stop word there) cannot match and is left out."""
    terms = [_Term(pieces, prefix) for pieces, prefix in match_terms(query)[:MAX_TERMS]]
    stems = _lexemes(conn, {piece for term in terms for piece in term.pieces})
    out = []
    for term in terms:
        lexemes = tuple(lexeme for piece in term.pieces for lexeme in stems.get(piece, ()))
        if lexemes:
            sql, param = _term_sql(term)
            out.append(PgTerm(sql, param, lexemes, term.prefix))
    return out


_LEXEMES: dict[str, tuple[str, ...]] = {}


def _lexemes(conn: Any, pieces: set[str]) -> dict[str, tuple[str, ...]]:
    """Each piece's lexemes under the English configuration (remembered: stemming never changes)."""
    missing = sorted(piece for piece in pieces if piece not in _LEXEMES)
    if missing:
        rows = conn.raw.execute(
            b"SELECT w, tsvector_to_array(to_tsvector('english', w)) FROM unnest(%s::text[]) AS u(w)",
            (missing,),
        ).fetchall()
        if len(_LEXEMES) > 50_000:
            _LEXEMES.clear()
        _LEXEMES.update((piece, tuple(lexemes or ())) for piece, lexemes in rows)
    return {piece: _LEXEMES.get(piece, ()) for piece in pieces}


def _explicit(query: str) -> bool:
    """Whether the query says AND, OR or NOT between its terms (then it is matched as it says)."""
    return any(isinstance(item, str) for item in _lex(query))


def find_query(
    query: str, terms: list[PgTerm], counts: list[int], common: set[int]
) -> tuple[str, list[str]] | None:
    """The tsquery that picks the rows to score: the query's own AND, OR and NOT when it says them,
    else its terms ORed as ``build_match`` does, less the ``common`` ones (only on a large index;
    when every term is common, the rarest of them finds)."""
    if _explicit(query):
        return _with_operators(_lex(query))
    chosen = [term for n, term in enumerate(terms) if n not in common]
    if not chosen and terms:
        chosen = [terms[min(range(len(terms)), key=counts.__getitem__)]]
    if not chosen:
        return None
    return " || ".join(term.sql for term in chosen), [term.param for term in chosen]


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


def term_counts(conn: Any, terms: list[PgTerm], scope: str) -> tuple[list[int], int]:
    """How many rows hold each term, and how many rows there are: exactly and within ``scope`` (the
    project) on a small index, as SQLite counts them (project_bm25); on a large one across the
    whole index, a term whose lexemes ANALYZE lists as most common (``pg_stats``) from their
    share and any other by a count of at most ``COUNT_CAP`` rows (beyond, only "common" matters)."""
    total = max(_index_rows(conn), 1)
    if total <= SMALL_INDEX_ROWS:
        rows = (
            "(SELECT count(*) FROM search_index WHERE words @@ %s::tsquery)"
            if scope
            else "(SELECT count(*) FROM search_index)"
        )
        within = " && %s::tsquery" if scope else ""
        counts = [
            f"(SELECT count(*) FROM search_index WHERE words @@ ({term.sql}{within}))" for term in terms
        ]
        params = [
            *([scope] if scope else []),
            *(p for term in terms for p in ([term.param, scope] if scope else [term.param])),
        ]
        row = conn.raw.execute(f"SELECT {', '.join([rows, *counts])}".encode(), params).fetchone()
        return [int(n) for n in row[1:]], max(int(row[0]), 1)
    shares = _lexeme_shares(conn)
    listed = {
        n: int(min(shares[lexeme] for lexeme in term.lexemes) * total)
        for n, term in enumerate(terms)
        if all(lexeme in shares for lexeme in term.lexemes)
    }
    unlisted = [n for n in range(len(terms)) if n not in listed]
    if unlisted:
        # ANALYZE lists every lexeme in more than about ``ceiling`` rows, so an unlisted one is rarer:
        # counted up to ``RARE_COUNT_CAP`` rows (each counted row is a heap visit), and beyond that
        # taken halfway (geometrically) to the ceiling. Without a list, counted up to ``COUNT_CAP``.
        ceiling = min(shares.values(), default=0.0) * total
        cap = RARE_COUNT_CAP if ceiling > RARE_COUNT_CAP else COUNT_CAP
        capped = ", ".join(
            f"(SELECT count(*) FROM (SELECT 1 FROM search_index WHERE words @@ {terms[n].sql} LIMIT {cap}) x)"
            for n in unlisted
        )
        row = conn.raw.execute(f"SELECT {capped}".encode(), [terms[n].param for n in unlisted]).fetchone()
        estimate = int(math.sqrt(cap * ceiling)) if cap == RARE_COUNT_CAP else cap
        listed.update(zip(unlisted, (int(n) if n < cap else estimate for n in row), strict=True))
    return [listed[n] for n in range(len(terms))], total


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
    """Every word piece of the query's terms (the words ``pg_terms`` looks up as lexemes)."""
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

    Relevance is SQLite's (recall.search.project_bm25): FTS5's bm25 formula over the same query
    terms, with the project's row count and document frequencies when one project is searched,
    each row's length in tokens and the mean over the index. The rows to score are found first
    (GIN); on a large index at most ``CANDIDATE_CAP`` of them are scored, the statistics are the
    whole index's, and a query of only very common words ranks among the first rows that match.
    A query of only English stop words keeps no term; its words are matched whole in ``tokens``."""
    if depth <= 0:
        return {}
    tokens = code_tokens(query)
    terms = pg_terms(conn, query)
    if not terms:
        stops = stop_lexemes(conn, query)
        if stops and set(stops) >= _words_of(query):
            tokens = list(dict.fromkeys([*tokens, *stops]))
    if not terms and not tokens:
        return {}
    counts, total = term_counts(conn, terms, scope_query(None, project)) if terms else ([], 1)
    large = _index_rows(conn) > SMALL_INDEX_ROWS
    common = {n for n, count in enumerate(counts) if count > COMMON_ROWS} if large else set()
    find = find_query(query, terms, counts, common) if terms else None
    weights = [idf(total, count) if count else 0.0 for count in counts]
    mean = _mean_length(conn)
    scores: dict[int, float] = {}
    # Only very common words: any rows holding them rank alike, so the GIN scan samples them
    # (gin_fuzzy_search_limit) instead of reading every posting of the word and the project.
    sampled = bool(terms) and not tokens and len(common) == len(terms) and not _explicit(query)
    matches = _matches(conn, find, terms, tokens, (kind, project, only), (large, weights, depth, sampled))
    for rowid, size, found, phrases, code in matches:
        frequencies = {k: float(v) for k, _, v in (item.rpartition("=") for item in found if item)}
        flags = iter(phrases)
        score = CODE_WEIGHT * float(code)
        for term, weight in zip(terms, weights, strict=True):
            held = next(flags) if len(term.lexemes) > 1 else True
            freq = term.frequency(frequencies) if held and weight else 0.0
            if freq:
                score += term_score(weight, freq, size + SCOPE_TOKENS, mean)
        scores[int(rowid)] = score
    best = sorted(scores, key=lambda rowid: (-scores[rowid], rowid))[:depth]
    return {rowid: scores[rowid] for rowid in best}


_FREQUENCY = (
    "(SELECT sum(CASE w "
    + " ".join(f"WHEN '{label}' THEN {COLUMN_WEIGHTS[column]}" for label, column in _LABELS.items())
    + " ELSE 0 END) FROM unnest(u.weights) AS w)"
)


def _matches(conn: Any, find: tuple[str, list[str]] | None, terms: list[PgTerm], tokens: list[str],
             where: tuple[str | None, str | None, set[int] | None], plan: tuple[bool, list[float], int, bool]) -> list[Any]:  # fmt: skip
    """The matching rows with what bm25 needs of each: its length (its last token position), its
    query lexemes with their column-weighted counts, whether it holds each phrase, and the code
    tokens' rank. ``where`` is (kind, project, only); ``plan`` is (large, term weights, depth,
    sampled). The matches (on a large index the first ``CANDIDATE_CAP``) are pre-ranked by
    ``ts_rank`` weighted by each term's idf, and only the best ``max(depth, RESCORE_DEPTH)`` are
    read for bm25, as SQLite re-scores FTS5's best 100: unnesting a row's vector costs 0.1 ms
    (300 ms for 2,000 candidates at 1M rows, 10-30 ms for a common word in one LoCoMo project)."""
    large, weights, depth, sampled = plan
    token_query = " | ".join(f"'{token}'" for token in tokens)
    found, params = _found(find, tokens, token_query, *where)
    if not found:
        return []
    exact = sorted({lexeme for t in terms for lexeme in (t.lexemes[:-1] if t.prefix else t.lexemes)})
    prefixes = sorted({_like_prefix(t.lexemes[-1]) for t in terms if t.prefix})
    phrases = [term for term in terms if len(term.lexemes) > 1]
    code = f"{CODE_WEIGHT} * ts_rank(c.tokens, %s::tsquery)" if tokens else "0"
    prerank = [
        f"{weight:.6f} * ts_rank({WEIGHTS}, c.words, {term.sql})"
        for term, weight in zip(terms, weights, strict=True)
    ]
    rows = f"(SELECT c.* FROM c ORDER BY {' + '.join([*prerank, code])} DESC, c.rowid LIMIT %s) AS c"
    sql = (
        "WITH c AS MATERIALIZED (SELECT s.rowid, s.words, s.tokens FROM search_index s "
        f"WHERE {found}{' LIMIT %s' if large else ''}) "
        "SELECT c.rowid, (SELECT coalesce(max(p), 0) FROM unnest(c.words) AS u, unnest(u.positions) AS p), "
        f"ARRAY(SELECT u.lexeme || '=' || {_FREQUENCY} FROM unnest(c.words) AS u "
        "WHERE u.lexeme = ANY(%s::text[]) OR u.lexeme LIKE ANY(%s::text[])), "
        f"ARRAY[{', '.join(f'c.words @@ {term.sql}' for term in phrases)}]::boolean[], {code} FROM {rows}"
    )
    # in the order the placeholders stand: the find, its cap, the select list, then the pre-rank
    params.extend([*([CANDIDATE_CAP] if large else []), exact, prefixes, *(t.param for t in phrases)])
    params.extend([token_query] if tokens else [])
    params.extend([*(term.param for term in terms), *([token_query] if tokens else [])])
    params.append(max(depth, RESCORE_DEPTH))
    return _run(conn.raw, sql.encode(), params, sampled)


def _run(raw: Any, sql: bytes, params: list[Any], sampled: bool) -> list[Any]:
    """The statement's rows; ``sampled``, between setting and resetting ``gin_fuzzy_search_limit``,
    the three sent at once (a pipeline: one round trip instead of three)."""
    if not sampled:
        return list(raw.execute(sql, params).fetchall())
    try:
        with raw.pipeline():
            raw.execute(f"SET gin_fuzzy_search_limit = {FUZZY_LIMIT}".encode())
            cursor = raw.execute(sql, params)
            raw.execute(b"RESET gin_fuzzy_search_limit")
        return list(cursor.fetchall())
    except Exception:
        raw.execute(b"RESET gin_fuzzy_search_limit")  # a failed statement skipped the reset
        raise


def _found(
    find: tuple[str, list[str]] | None,
    tokens: list[str],
    token_query: str,
    kind: str | None,
    project: str | None,
    only: set[int] | None,
) -> tuple[str, list[Any]]:
    """The WHERE clause that finds the rows to score. The tsqueries are written into the statement
    (not joined from a CTE) so the planner sees them and picks the GIN index; kind and project are
    lexemes of ``words`` (recall_scope), so one GIN scan intersects them with the words."""
    scope = scope_query(kind, project)
    found: list[str] = []
    params: list[Any] = []
    if find is not None:
        # numnode: a query of stop words only is empty, and empty && scope would match the whole scope
        found.append(
            f"(s.words @@ (({find[0]}) && %s::tsquery) AND numnode({find[0]}) > 0)"
            if scope
            else f"s.words @@ ({find[0]})"
        )
        params.extend([*find[1], scope, *find[1]] if scope else find[1])
    if tokens:
        found.append(
            "(s.tokens @@ %s::tsquery AND s.words @@ %s::tsquery)" if scope else "s.tokens @@ %s::tsquery"
        )
        params.extend([token_query, *([scope] if scope else [])])
    if not found:
        return "", []
    where = [f"({' OR '.join(found)})"]
    if only is not None:
        where.append("s.rowid = ANY(%s)")
        params.append(sorted(only))
    return " AND ".join(where), params


def _like_prefix(stem: str) -> str:
    return stem.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _mean_length(conn: Any) -> float:
    """Tokens per row over the whole index, as FTS5 keeps it (its two scope tokens included): every
    row's last token position, read once per ``STATS_TTL_S`` (a sample of ~20,000 rows when large)."""

    rows = _index_rows(conn)  # before: ``_statistic`` holds its lock while it reads

    def read(conn: Any) -> float:
        sample = f" TABLESAMPLE SYSTEM ({min(100.0, 2e6 / rows):.4f})" if rows > SMALL_INDEX_ROWS else ""
        row = conn.raw.execute(
            "SELECT avg((SELECT coalesce(max(p), 0) FROM unnest(words) AS u, unnest(u.positions) AS p)) "
            f"FROM search_index{sample}".encode()
        ).fetchone()
        return float(row[0]) + SCOPE_TOKENS if row and row[0] is not None else 1.0

    mean: float = _statistic(conn, "mean_length", read)
    return max(mean, 1.0)
