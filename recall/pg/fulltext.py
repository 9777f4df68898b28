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
from typing import Any

from recall.search.fts_query import _lex, _Term, match_terms

MAX_TERMS = 32
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.:/-]+[A-Za-z0-9_]+)+|[A-Za-z0-9]*_[A-Za-z0-9_]*")
CODE_WEIGHT = 2.0  # a whole code token is rarer, and more telling, than its stemmed parts


def code_tokens(query: str) -> list[str]:
    """The query's code tokens (with ``_ . : / -`` inside), lower-cased, as the index stores them."""
    found = [token.lower().strip("_") and token.lower() for token in _CODE_TOKEN.findall(query)]
    return list(dict.fromkeys(token for token in found if token and len(token) < 200))[:MAX_TERMS]


def words_query(query: str) -> tuple[str, list[str]] | None:
    """A SQL expression for the stemmed query and its parameters: the terms ORed as ``build_match``
    does, or, when the query says AND, OR or NOT between terms, joined as it says."""
    items = _lex(query)
    if not any(isinstance(item, str) for item in items):
        terms = [_Term(pieces, prefix) for pieces, prefix in match_terms(query)[:MAX_TERMS]]
        if not terms:
            return None
        parts = [_term_sql(term) for term in terms]
        return " || ".join(sql for sql, _ in parts), [param for _, param in parts]
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


def candidates(
    conn: Any, query: str, *, kind: str | None, project: str | None, depth: int, only: set[int] | None = None
) -> dict[int, float]:
    """Index rowid → relevance (higher is better) for the best ``depth`` matches of ``query``."""
    words = words_query(query)
    tokens = code_tokens(query)
    if words is None and not tokens or depth <= 0:
        return {}
    words_sql, params = words if words is not None else ("''::tsquery", [])
    token_query = " | ".join(f"'{token}'" for token in tokens)
    found = ["s.words @@ q.w"] if words is not None else []
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
    code_rank = f" + {CODE_WEIGHT} * ts_rank(s.tokens, q.t)" if tokens else ""
    sql = (
        f"WITH q AS (SELECT ({words_sql}) AS w, %s::tsquery AS t) "
        f"SELECT s.rowid, ts_rank('{{0.1, 0.8, 0.5, 1.0}}', s.words, q.w){code_rank} AS score "
        f"FROM search_index s, q WHERE {' AND '.join(where)} ORDER BY score DESC, s.rowid LIMIT %s"
    )
    rows = conn.raw.execute(sql.encode(), (*params, token_query or "", *scope, depth)).fetchall()
    return {int(rowid): float(score) for rowid, score in rows}
