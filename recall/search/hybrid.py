"""The one search entry point every interface uses: keyword, semantic or hybrid (adr/0007).

Hybrid takes the best ``CANDIDATE_DEPTH`` keyword and vector candidates, gives every candidate both
parts (its bm25 relevance and its cosine to the query, looked up for keyword-only rows too) and
ranks by a weighted sum of the two parts, each min-max normalised over the candidates. The turns
right after a keyword match inherit part of its bm25 score (``CARRY``), the lexical mirror of
mixing a message's vector with the turns around it. Last, every candidate is lifted by the best
fused score of its session (``SESSION_WEIGHT``, adr/0011): a turn in the conversation that is
about the query beats an equally scored stray one. On LoCoMo this beat both single modes and every
reciprocal rank fusion tried; the weight, depth, carry and session lift were chosen by 5-fold
cross-validation over conversations (bench/locomo.py --cv).

The lexical half is plain keyword search over the Porter-stemmed index (adr/0010): the query is
built by ``fts_query.build_match`` exactly as in keyword mode.

Scores of semantic and hybrid results lie in [0, 1], so ``min_score`` means the same everywhere.
In hybrid mode a score is relative to the query's candidates (the best keyword and best vector
match each get full credit for their part); the raw parts travel with every hit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from recall.errors import InvalidInput
from recall.rowkinds import KIND_CODES, RecordKind, index_rowid, split_rowid
from recall.search.folding import fold_summaries
from recall.search.query import clean_query

if TYPE_CHECKING:
    from recall.results import Hit
    from recall.search.embedder import Embedder
    from recall.store import Store

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")

# Chosen by 5-fold cross-validation on LoCoMo: bench/locomo.py --cv, adr/0007.
KEYWORD_WEIGHT = 0.5
CANDIDATE_DEPTH = 50  # per side; a larger ``limit`` raises it, so the top 10 never depend on ``limit``
CARRY = 0.7  # share of a keyword match's score the next turn inherits (CARRY**2 the one after)
CARRY_TURNS = 2  # as far back as neighbours.MIX_WEIGHTS reaches
SESSION_WEIGHT = 0.3  # share of the session's best fused score each of its messages gains
BIAS_CAP = 1.0
FOLD_SPARE = 10  # keyword mode asks for this many more, to fill the places folded summaries free

_MESSAGE_CODE = KIND_CODES[RecordKind.MESSAGE]
# One worker: hybrid searches from several threads take turns on the store's second connection.
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-keyword")


def search(
    store: Store,
    query: str,
    *,
    mode: Mode = "hybrid",
    project: str | None = None,
    table: RecordKind | None = None,
    bias: RecordKind | None = None,
    limit: int = 10,
    min_score: float = 0.0,
    embedder: Embedder | None = None,
    keyword_weight: float | None = None,
    session_weight: float | None = None,
    leave_out: Collection[int] = (),
    tags: Sequence[str] = (),
) -> list[Hit]:
    """Ranked hits with their parts (keyword rank and score, cosine) filled in; any query is valid.

    ``leave_out`` (index rowids) are searched as if they were not stored: ``recall eval`` asks with a
    row's own words and must not find that row, nor let it lift its neighbours. ``tags`` keeps to the
    decisions, learnings and breadcrumbs carrying every one of them.
    """
    query = clean_query(query)
    _check(mode, min_score)
    from recall.search import keyword as lexical_search
    from recall.search.filters import tagged_rowids
    from recall.search.keyword import materialise, rank

    only: set[int] | None = None
    if tags:
        with store.reading() as conn:
            only = tagged_rowids(conn, tags, project=project, table=table)
        if not only:
            return []
    if mode == "keyword":
        return _keyword_mode(store, query, (project, table, bias), limit, only, leave_out)
    if not query.strip() or limit <= 0:
        return []
    from recall.search.semantic import semantic_candidates

    if embedder is None:
        raise InvalidInput(f"{mode} search needs an embedding model; use keyword mode without one")
    depth = max(CANDIDATE_DEPTH, limit)
    side = store.side_reader() if mode == "hybrid" else None
    leg = (query, project, table, depth, only)
    lexical = _POOL.submit(_keyword_half, side, leg) if side is not None else None
    with store.reading() as conn:
        cosines, query_vector, index = semantic_candidates(
            store, embedder, query, project=project, table=table, depth=depth, only=only
        )
        keyword: dict[int, float] = {}
        if lexical is not None:
            keyword = lexical.result()
        elif mode == "hybrid":
            keyword = _keyword_half(conn, leg)
        cosines, keyword = _without(conn, cosines, keyword, leave_out)
        if mode == "hybrid":
            fused = _hybrid_scores(
                conn,
                keyword,
                cosines,
                (keyword_weight, session_weight),
                lambda missing: index.cosines_for(query_vector, missing),
                leave_out,
            )
        else:
            fused = {rowid: max(0.0, cosine) for rowid, cosine in cosines.items()}
        # Only the hits returned are read in full (adr/0031), with spares for the summaries that fold.
        best = lexical_search.best_rowids(conn, fused, bias=bias, limit=limit + FOLD_SPARE, cap=BIAS_CAP)
        hits = materialise(conn, {rowid: fused[rowid] for rowid in best})
    _fill_parts(hits, cosines, keyword)
    ranked = rank(hits, bias=bias, limit=len(hits), cap=BIAS_CAP)
    # A score of 0 is the weakest candidate on both sides, or a vector pointing away from the query:
    # it is not a match, and listing it would only pad the results.
    return fold_summaries((hit for hit in ranked if hit.score > 0 and hit.score >= min_score), limit)


def _keyword_half(
    conn: sqlite3.Connection,
    leg: tuple[str, str | None, RecordKind | None, int, set[int] | None],
) -> dict[int, float]:
    """Hybrid search's keyword candidates. It runs on the store's second connection in a worker
    thread while the vector half runs in this one (adr/0041): SQLite and numpy both let go of the
    GIL while they work, so the two halves overlap instead of adding up."""
    from recall.search.keyword import keyword_candidates

    query, project, table, depth, only = leg
    return keyword_candidates(conn, query, project=project, table=table, depth=depth, only=only)


def _keyword_mode(
    store: Store,
    query: str,
    scope: tuple[str | None, RecordKind | None, RecordKind | None],
    limit: int,
    only: set[int] | None,
    leave_out: Collection[int],
) -> list[Hit]:
    """Keyword search alone; ``scope`` is (project, kind, bias)."""
    from recall.search.keyword import keyword_hits

    project, table, bias = scope
    with store.reading() as conn:
        found = keyword_hits(
            conn,
            query,
            project=project,
            table=table,
            bias=bias,
            limit=limit + FOLD_SPARE + len(leave_out),
            only=only,
            batch=limit + len(leave_out),  # the spares are read only when summaries fold
        )
        return fold_summaries((hit for hit in found if _rowid_of(hit) not in leave_out), limit)


def _hybrid_scores(
    conn: sqlite3.Connection,
    keyword: dict[int, float],
    cosines: dict[int, float],
    weights: tuple[float | None, float | None],
    cosines_for: Callable[[list[tuple[int, int]]], dict[tuple[int, int], float]],
    leave_out: Collection[int] = (),
) -> dict[int, float]:
    """Fused and session-lifted scores; ``cosines`` gains the cosine of every keyword candidate the
    vector side missed. ``weights`` (keyword, session) default to the cross-validated ones. A row
    left out stays out even as the successor of a keyword match (``carry_forward``)."""
    keyword_weight, session_weight = weights
    lexical = carry_forward(keyword, following_turns(conn, keyword), CARRY)
    for rowid in leave_out:
        lexical.pop(rowid, None)
    missing = [split_rowid(rowid) for rowid in lexical if rowid not in cosines]
    for (code, row_id), cosine in cosines_for(missing).items():
        cosines[index_rowid(code, row_id)] = cosine
    fused = fuse(lexical, cosines, KEYWORD_WEIGHT if keyword_weight is None else keyword_weight)
    lift = SESSION_WEIGHT if session_weight is None else session_weight
    return lift_by_session(fused, sessions_of(conn, fused), lift)


def _check(mode: str, min_score: float) -> None:
    if mode not in MODES:
        raise InvalidInput(f"unknown search mode {mode!r}; use keyword, semantic or hybrid")
    if not 0.0 <= min_score <= 1.0:
        raise InvalidInput("min_score must lie between 0 and 1")


def _rowid_of(hit: Hit) -> int:
    return index_rowid(KIND_CODES[RecordKind(hit.kind)], hit.id)


def _without(
    conn: sqlite3.Connection, cosines: dict[int, float], keyword: dict[int, float], leave_out: Collection[int]
) -> tuple[dict[int, float], dict[int, float]]:
    """Both candidate sets less the rows left out and the expired ones, before scores are stretched."""
    from recall.search.filters import expired_among

    gone = expired_among(conn, keyword.keys() | cosines.keys()) | set(leave_out)
    return (
        {rowid: cosine for rowid, cosine in cosines.items() if rowid not in gone},
        {rowid: score for rowid, score in keyword.items() if rowid not in gone},
    )


def _fill_parts(hits: list[Hit], cosines: dict[int, float], keyword: dict[int, float]) -> None:
    """Each hit carries its cosine, its keyword score and its place among the keyword candidates."""
    keyword_order = {
        rowid: n for n, rowid in enumerate(sorted(keyword, key=keyword.__getitem__, reverse=True), 1)
    }
    for hit in hits:
        rowid = _rowid_of(hit)
        hit.cosine = cosines.get(rowid)
        hit.keyword_score = keyword.get(rowid)
        hit.keyword_rank = keyword_order.get(rowid)


def fuse(keyword: dict[int, float], cosines: dict[int, float], weight: float) -> dict[int, float]:
    """rowid → ``weight · lexical + (1 - weight) · meaning``, each part min-max scaled to [0, 1].

    bm25 has no fixed range and MiniLM cosines crowd into 0.1-0.6, so raw values would let one
    side dominate; stretching both over this query's candidates makes ``weight`` mean the same for
    every query. A row the keyword side did not return gets 0 for that part.
    """
    lexical = _stretch(keyword)
    meaning = _stretch(cosines)
    return {
        rowid: weight * lexical.get(rowid, 0.0) + (1 - weight) * meaning.get(rowid, 0.0)
        for rowid in keyword.keys() | cosines.keys()
    }


def sessions_of(conn: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, int]:
    """Index rowid of a message → its session id (other kinds have none)."""
    ids = _message_ids(rowids)
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT id, session_id FROM messages WHERE id IN ({', '.join('?' for _ in ids)})", ids
    )
    return {index_rowid(_MESSAGE_CODE, row_id): session for row_id, session in rows}


def lift_by_session(fused: dict[int, float], sessions: dict[int, int], weight: float) -> dict[int, float]:
    """``(score + weight · best score of its session, min-max scaled) / (1 + weight)``, still in [0, 1].

    A record (or a message whose session is unknown) is its own group, so it is lifted by its own
    score and competes with messages on equal terms.
    """
    if weight <= 0 or not fused:
        return fused
    group = {rowid: ("session", sessions[rowid]) if rowid in sessions else ("row", rowid) for rowid in fused}
    best: dict[tuple[str, int], float] = {}
    for rowid, score in fused.items():
        key = group[rowid]
        if key not in best or score > best[key]:
            best[key] = score
    lift = _stretch(best)
    return {rowid: (score + weight * lift[group[rowid]]) / (1 + weight) for rowid, score in fused.items()}


def following_turns(conn: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, list[int]]:
    """Index rowid of a message → rowids of the next ``CARRY_TURNS`` text turns of its session."""
    ids = _message_ids(rowids)
    if not ids:
        return {}
    rows = conn.execute(
        f"""SELECT m.id, n.id FROM messages m JOIN messages n ON n.id IN (
                SELECT p.id FROM messages p
                WHERE p.session_id = m.session_id AND p.ordinal > m.ordinal AND p.kind = 'text'
                  AND p.origin IN ('human', 'agent')
                ORDER BY p.ordinal LIMIT {int(CARRY_TURNS)})
            WHERE m.id IN ({", ".join("?" for _ in ids)})
            ORDER BY m.id, n.ordinal""",
        ids,
    ).fetchall()
    out: dict[int, list[int]] = {}
    for source, target in rows:
        out.setdefault(index_rowid(_MESSAGE_CODE, source), []).append(index_rowid(_MESSAGE_CODE, target))
    return out


def carry_forward(
    keyword: dict[int, float], following: dict[int, list[int]], carry: float
) -> dict[int, float]:
    """Keyword scores where the turns after a match inherit ``carry**n`` of its score.

    The lexical counterpart of mixing a turn's vector with the turns before it: an answer often
    names nothing of the question, while the turn just before it (the question it answers) does.
    A row keeps its own score when that is higher.
    """
    out = dict(keyword)
    for rowid, score in keyword.items():
        for step, target in enumerate(following.get(rowid, ()), 1):
            inherited = score * carry**step
            if inherited > out.get(target, 0.0):
                out[target] = inherited
    return out


def _message_ids(rowids: Iterable[int]) -> list[int]:
    return [row_id for code, row_id in map(split_rowid, rowids) if code == _MESSAGE_CODE]


def _stretch(values: dict[Any, float]) -> dict[Any, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    return {rowid: (value - low) / span if span > 0 else 1.0 for rowid, value in values.items()}
