"""The one search entry point every interface uses: keyword, semantic or hybrid (adr/0007).

Hybrid takes the best keyword and the best vector candidates, gives every candidate both parts
(bm25 relevance normalised by the best keyword score of the query, and its cosine to the query,
looked up for keyword-only rows too) and ranks by a weighted sum. On LoCoMo a weighted sum of
normalised scores beat both single modes while reciprocal rank fusion fell below BM25 at k=5, so
the weight is calibrated there (bench/locomo.py, 5-fold cross-validation over conversations).
Scores of semantic and hybrid results lie in [0, 1], so ``min_score`` means the same everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from recall.errors import InvalidInput
from recall.models import RecordKind

if TYPE_CHECKING:
    from recall.search.embedder import Embedder
    from recall.search.keyword import Hit
    from recall.store import Store

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")

KEYWORD_WEIGHT = 0.5  # calibrated on LoCoMo; see adr/0007 and bench/locomo.py
MIN_DEPTH = 50
BIAS_CAP = 1.0


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
) -> list[Hit]:
    """Ranked hits with their parts (keyword rank and score, cosine) filled in."""
    if mode not in MODES:
        raise InvalidInput(f"unknown search mode {mode!r}; use keyword, semantic or hybrid")
    if not 0.0 <= min_score <= 1.0:
        raise InvalidInput("min_score must lie between 0 and 1")
    if mode == "keyword":
        return store.search(query, project=project, table=table, bias=bias, limit=limit)
    if not query.strip() or limit <= 0:
        return []
    from recall.search.keyword import keyword_candidates, materialise, rank
    from recall.search.semantic import semantic_candidates

    embedder = embedder or store.embedder
    weight = KEYWORD_WEIGHT if keyword_weight is None else keyword_weight
    depth = max(MIN_DEPTH, limit * 3)
    with store.reading() as conn:
        cosines, query_vector, index = semantic_candidates(
            store, embedder, query, project=project, table=table, depth=depth
        )
        keyword: dict[int, float] = {}
        if mode == "hybrid":
            keyword = keyword_candidates(conn, query, project=project, table=table, depth=depth)
            missing = [(rowid % 8, rowid // 8) for rowid in keyword if rowid not in cosines]
            for (code, row_id), cosine in index.cosines_for(query_vector, missing).items():
                cosines[row_id * 8 + code] = cosine
        best_keyword = max(keyword.values(), default=0.0)
        keyword_order = {rowid: n for n, rowid in enumerate(sorted(keyword, key=keyword.__getitem__, reverse=True), 1)}
        fused: dict[int, float] = {}
        for rowid in cosines.keys() | keyword.keys():
            cosine = max(0.0, cosines.get(rowid, 0.0))
            lexical = keyword.get(rowid, 0.0) / best_keyword if best_keyword > 0 else 0.0
            fused[rowid] = cosine if mode == "semantic" else weight * lexical + (1 - weight) * cosine
        hits = materialise(conn, fused)
    for hit in hits:
        rowid = hit.id * 8 + _code(hit.kind)
        hit.cosine = cosines.get(rowid)
        hit.keyword_score = keyword.get(rowid)
        hit.keyword_rank = keyword_order.get(rowid)
    ranked = rank(hits, bias=bias, limit=len(hits), cap=BIAS_CAP)
    return [hit for hit in ranked if hit.score >= min_score][:limit]


def _code(kind: str) -> int:
    from recall.models import KIND_CODES

    return KIND_CODES[RecordKind(kind)]
