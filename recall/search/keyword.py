"""Keyword search over every kind at once, on one bm25 scale (adr/0003).

One FTS5 index holds decisions, learnings, breadcrumbs, session summaries and messages, so bm25
statistics are shared and scores are comparable across kinds. Kind (hard ``table`` filter) and
project filters run inside the FTS query through the ``scope`` column. Afterwards a few rules apply
that the index cannot know: expired decisions, learnings and breadcrumbs leave the results, superseded and reverted decisions
rank lower, and a ``bias`` kind gets a soft boost.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from recall.dbtime import to_db_time, utc_now
from recall.results import Hit
from recall.rowkinds import KIND_BY_CODE, KIND_CODES, TABLE_NAMES, TYPED_KINDS, RecordKind, split_rowid
from recall.search.filters import expired_among, json_ids
from recall.search.fts_query import build_match, scope_filter
from recall.search.project_bm25 import RESCORE_DEPTH, counted_at_least, project_scores, row_length

# bm25 column weights: content, detail, tags, scope (scope holds filter tokens, never ranks).
_WEIGHTS = (1.0, 0.5, 0.8, 0.0)
BIAS_BOOST = 2.0
INACTIVE_DECISION_FACTOR = 0.5
PREVIEW_CHARS = 240
_KIND_NAMES = {code: kind.value for code, kind in KIND_BY_CODE.items()}
_DECISION = KIND_CODES[RecordKind.DECISION]
PROJECT_STATISTICS = True  # bm25 with the searched project's N and n (adr/0021); False: the database's

_COLUMNS: dict[RecordKind, str] = {
    RecordKind.DECISION: "id, project, created_at, provenance, content, detail, importance, status, "
    "valid_until, tags",
    RecordKind.LEARNING: "id, project, created_at, provenance, content, detail, importance, valid_until, tags",
    RecordKind.BREADCRUMB: "id, project, created_at, provenance, content, detail, importance, valid_until, tags",
    RecordKind.SESSION_SUMMARY: "id, project, created_at, provenance, content, title, importance, session_id",
    RecordKind.MESSAGE: "id, project, coalesce(timestamp, created_at) AS created_at, provenance, content, "
    "role, origin, session_id, tool_name",
    RecordKind.NOTE: "id, project, updated_at AS created_at, provenance, content, path",
}


def keyword_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    project: str | None = None,
    table: RecordKind | None = None,
    bias: RecordKind | None = None,
    limit: int = 10,
    only: set[int] | None = None,
) -> list[Hit]:
    """Rank rows matching ``query``; any text is a valid query and returns hits or none.

    ``only`` keeps to those index rowids (a tag filter, recall.search.tagged)."""
    return list(keyword_hits(conn, query, project=project, table=table, bias=bias, limit=limit, only=only))


def keyword_hits(
    conn: sqlite3.Connection,
    query: str,
    *,
    project: str | None = None,
    table: RecordKind | None = None,
    bias: RecordKind | None = None,
    limit: int = 10,
    only: set[int] | None = None,
    batch: int | None = None,
) -> Iterator[Hit]:
    """``keyword_search``'s hits, in its order with its scores and ranks, read ``batch`` rows at a
    time as the caller asks for more: keyword mode asks for spares in case summaries fold into
    their sessions' messages (``FOLD_SPARE``), and most queries never need them (issue 16)."""
    if limit <= 0 or (only is not None and not only):
        return
    depth = max(limit * 3, 30)
    scored = keyword_candidates(conn, query, project=project, table=table, depth=depth, only=only)
    if bias is not None and table is None:
        biased = keyword_candidates(conn, query, project=project, table=bias, depth=depth, only=only)
        for rowid, score in biased.items():
            scored.setdefault(rowid, score)
    best = best_rowids(conn, scored, bias=bias, limit=limit)
    size = max(1, batch or len(best))
    position = 0
    for start in range(0, len(best), size):
        hits = materialise(conn, {rowid: scored[rowid] for rowid in best[start : start + size]})
        for hit in hits:
            hit.keyword_score = hit.score
        # ``best`` is already in ``rank``'s order, so ranking each batch keeps the order of all.
        for hit in rank(hits, bias=bias, limit=len(hits)):
            position += 1
            hit.keyword_rank = position
            yield hit


def keyword_candidates(
    conn: sqlite3.Connection,
    query: str,
    *,
    project: str | None,
    table: RecordKind | None,
    depth: int,
    only: set[int] | None = None,
) -> dict[int, float]:
    """Index rowid (``index_rowid``) → bm25 relevance (higher is better) for the best ``depth``.

    Scoped to one project, relevance uses that project's statistics (adr/0021): FTS5 finds the
    candidates, ``project_bm25`` scores them again; across all projects FTS5's own bm25 stands.
    """
    match = build_match(query)
    if match is None or (only is not None and not only):
        return {}
    kind = table.value if table else None
    if _on_postgres(conn):
        from recall.pg.fulltext import candidates

        return candidates(conn, query, kind=kind, project=project, depth=depth, only=only)
    if project is None or not PROJECT_STATISTICS:
        return _ranked_rowids(conn, match, kind, project, depth, only)
    asked = max(depth, RESCORE_DEPTH)
    # A term the project is known to hold ``asked`` times: FTS5 must rank, so it is not asked twice.
    if kind is None and only is None and not counted_at_least(conn, query, project, asked):
        matching = _matching_rowids(conn, match, project, asked)
        if len(matching) < asked:  # every row of the project that matches: FTS5's order is not needed
            ranked = lambda: _ranked_rowids(conn, match, None, project, asked)
            lengths = {rowid: row_length(blob) for rowid, blob in matching.items() if blob is not None}
            return _rescored(
                conn, query, matching, project, depth, complete=True, fts5=ranked, lengths=lengths
            )
    found = _ranked_rowids(conn, match, kind, project, asked, only)
    # Fewer rows than asked for, with no kind or tag filter: every matching row is a candidate.
    complete = len(found) < asked and kind is None and only is None
    return _rescored(conn, query, found, project, depth, complete=complete, fts5=lambda: found)


def keyword_rowids(
    conn: sqlite3.Connection, query: str, *, project: str | None, table: RecordKind | None, depth: int
) -> list[int]:
    """The rowids ``keyword_candidates`` returns, for a caller that reads them but not their scores
    (a near-duplicate check): when FTS5 finds no more than ``depth`` rows they are all returned
    whatever their scores, so the project's statistics (counts over the whole project) are not read.
    """
    match = build_match(query)
    if match is None:
        return []
    kind = table.value if table else None
    if _on_postgres(conn):
        return list(keyword_candidates(conn, query, project=project, table=table, depth=depth))
    if project is None or not PROJECT_STATISTICS:
        return list(_ranked_rowids(conn, match, kind, project, depth))
    asked = max(depth, RESCORE_DEPTH)
    found = _ranked_rowids(conn, match, kind, project, asked)
    if len(found) <= depth:
        return list(found)
    complete = len(found) < asked and kind is None
    return list(_rescored(conn, query, found, project, depth, complete=complete, fts5=lambda: found))


def _on_postgres(conn: sqlite3.Connection) -> bool:
    """A team server's store: keyword search is tsvector and GIN there (recall.pg.fulltext)."""
    return getattr(conn, "dialect", "sqlite") == "postgresql"


def _rescored(
    conn: sqlite3.Connection,
    query: str,
    candidates: Collection[int],
    project: str,
    depth: int,
    *,
    complete: bool,
    fts5: Callable[[], dict[int, float]],
    lengths: dict[int, int] | None = None,
) -> dict[int, float]:
    """The candidates scored again with the project's statistics, the best ``depth`` kept;
    ``complete``: they are all the rows of the project that match (``project_scores``). ``fts5``
    gives FTS5's scores of the candidates, asked for only should a kept row score nothing here;
    ``lengths``: the candidates' sizes, when read with them."""
    scores = project_scores(conn, query, candidates, project, complete=complete, lengths=lengths)
    best = sorted(scores, key=lambda rowid: (-scores[rowid], rowid))[:depth]
    if all(scores[rowid] for rowid in best):
        return {rowid: scores[rowid] for rowid in best}
    found = fts5()
    # A row FTS5 matched keeps a trace of its FTS5 order should no stem of it be found again.
    return {rowid: scores[rowid] or found[rowid] * 1e-9 for rowid in best}


def _matching_rowids(
    conn: sqlite3.Connection, match: str, project: str, limit: int
) -> dict[int, bytes | None]:
    """Up to ``limit`` rows of the project that match, in no order, with their docsize records.
    Without ``bm25()`` FTS5 neither scores each row nor counts each phrase's rows in the whole
    database (adr/0044); the sizes come in the same statement, by primary key."""
    expression = f"{{content detail tags}} : ({match}) AND {scope_filter(None, project)}"
    sql = (
        "SELECT s.rowid, d.sz FROM search_index AS s LEFT JOIN search_index_docsize AS d ON d.id = s.rowid "
        "WHERE search_index MATCH ? LIMIT ?"
    )
    return dict(conn.execute(sql, (expression, limit)).fetchall())


def rank(hits: list[Hit], *, bias: RecordKind | None, limit: int, cap: float | None = None) -> list[Hit]:
    """Apply what the index cannot know (lifecycle, bias), then order and cut."""
    for hit in hits:
        if bias is not None and hit.kind == bias.value:
            hit.score *= BIAS_BOOST
        if hit.kind == RecordKind.DECISION.value and hit.extra.get("status") != "active":
            hit.score *= INACTIVE_DECISION_FACTOR
        if cap is not None:
            hit.score = min(cap, hit.score)
    hits.sort(key=lambda h: (-h.score, h.kind, h.id))
    return hits[:limit]


def best_rowids(
    conn: sqlite3.Connection,
    scored: dict[int, float],
    *,
    bias: RecordKind | None,
    limit: int,
    cap: float | None = None,
) -> list[int]:
    """The ``limit`` rowids ``rank`` would keep, best first, found before any row is read in full:
    only a decision's status and a record's expiry change a score, so only they are looked up, and
    ``materialise`` reads (and previews) just the hits returned (adr/0031)."""
    decisions = [row_id for code, row_id in map(split_rowid, scored) if code == _DECISION]
    inactive = _ids(conn, "decisions", "status != 'active'", decisions)
    expired = expired_among(conn, scored)
    keys: dict[int, tuple[float, str, int]] = {}
    for rowid, score in scored.items():
        code, row_id = split_rowid(rowid)
        name = _KIND_NAMES.get(code)
        if name is None or rowid in expired:
            continue
        if bias is not None and name == bias.value:
            score *= BIAS_BOOST
        if code == _DECISION and row_id in inactive:
            score *= INACTIVE_DECISION_FACTOR
        if cap is not None:
            score = min(cap, score)
        keys[rowid] = (-score, name, row_id)
    return sorted(keys, key=keys.__getitem__)[:limit]


def _ids(conn: sqlite3.Connection, table: str, condition: str, ids: list[int]) -> set[int]:
    if not ids:
        return set()
    sql = f"SELECT id FROM {table} WHERE id IN (SELECT value FROM json_each(?)) AND {condition}"
    return {row[0] for row in conn.execute(sql, (json_ids(ids),))}


def _ranked_rowids(
    conn: sqlite3.Connection,
    match: str,
    kind: str | None,
    project: str | None,
    depth: int,
    only: set[int] | None = None,
) -> dict[int, float]:
    expression = f"{{content detail tags}} : ({match})"
    scope = scope_filter(kind, project)
    if scope:
        expression = f"{expression} AND {scope}"
    weights = ", ".join(str(w) for w in _WEIGHTS)
    if only is None:
        rows = conn.execute(
            f"SELECT rowid, bm25(search_index, {weights}) FROM search_index "
            "WHERE search_index MATCH ? ORDER BY 2 LIMIT ?",
            (expression, depth),
        ).fetchall()
    else:
        rows = _ranked_within(conn, expression, kind, weights, only, depth)
    # bm25() is negative, more negative = better; flip it so higher is better everywhere.
    return {rowid: -rank for rowid, rank in rows}


def _ranked_within(
    conn: sqlite3.Connection, expression: str, kind: str | None, weights: str, only: set[int], depth: int
) -> list[Any]:
    """The best ``depth`` matches among ``only`` (a tag filter's records).

    Every match among the typed records is ranked first, then kept if it is in ``only``: given
    ``rowid IN (...)`` directly, FTS5 runs the whole query once per rowid (2.5 s instead of
    milliseconds for 1,000 tagged rows, bench/filters_bench.py). ``MATERIALIZED`` stops SQLite
    from pushing the rowid test back into the FTS scan.
    """
    if kind is None:
        typed = " OR ".join(f'"k{typed_kind.value}"' for typed_kind in TYPED_KINDS)
        expression = f"{expression} AND scope : ({typed})"
    return conn.execute(
        f"WITH matched AS MATERIALIZED (SELECT rowid AS id, bm25(search_index, {weights}) AS rank "
        "FROM search_index WHERE search_index MATCH ?) "
        "SELECT id, rank FROM matched WHERE id IN (SELECT value FROM json_each(?)) ORDER BY rank LIMIT ?",
        (expression, json.dumps(sorted(only)), depth),
    ).fetchall()


def materialise(conn: sqlite3.Connection, scored: dict[int, float]) -> list[Hit]:
    by_kind: dict[RecordKind, dict[int, float]] = {}
    for rowid, score in scored.items():
        code, row_id = split_rowid(rowid)
        kind = KIND_BY_CODE.get(code)
        if kind is not None:
            by_kind.setdefault(kind, {})[row_id] = score
    now = to_db_time(utc_now())
    hits: list[Hit] = []
    for kind, ids in by_kind.items():
        for row in _fetch(conn, kind, ids):
            data = dict(row)
            if kind in TYPED_KINDS and data["valid_until"] and data["valid_until"] <= now:
                continue  # expired (adr/0026): stays in the file until purged, never found
            hits.append(_hit(kind, data, ids[data["id"]]))
    return hits


def _fetch(conn: sqlite3.Connection, kind: RecordKind, ids: Iterable[int]) -> list[sqlite3.Row]:
    id_list = list(ids)
    marks = ", ".join("?" for _ in id_list)
    return conn.execute(
        f"SELECT {_COLUMNS[kind]} FROM {TABLE_NAMES[kind]} WHERE id IN ({marks})", id_list
    ).fetchall()


def _hit(kind: RecordKind, data: dict[str, Any], score: float) -> Hit:
    content = data.pop("content")
    if isinstance(data.get("tags"), str):
        data["tags"] = json.loads(data["tags"])
    base = {key: data.pop(key) for key in ("id", "project", "created_at", "provenance")}
    return Hit(
        kind=kind.value,
        preview=preview(content),
        content=content,
        score=score,
        extra={key: value for key, value in data.items() if value is not None},
        **base,
    )


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    # The whitespace-collapsed head of any prefix is a prefix of the whole text's, so when a head
    # of 4 × limit characters already runs past ``limit`` the cut is the same; a long message
    # (a tool's output) is then not split into words in full for 240 characters.
    head = " ".join(text[: 4 * limit].split())
    flat = head if len(head) > limit else " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
