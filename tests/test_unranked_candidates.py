"""A one-project search whose candidates are every matching row finds them without bm25() (adr/0044).

FTS5's order and scores do not decide anything there: every matching row is re-scored with the
project's statistics. They are read only when a kept row scores nothing again (its terms are in
more than half of the project's rows), so that row keeps its trace of FTS5's order. The tests
compare every result with the ranked path, on queries and filters where the two could part.
"""

from __future__ import annotations

import pytest

from recall.models import RecordKind
from recall.search import keyword
from recall.search.fts_query import build_match
from recall.search.keyword import _ranked_rowids, keyword_candidates, keyword_search
from recall.store import Store

QUERIES = [
    "glaze",  # in more than half of pottery's rows: FTS5's floor weight
    "glaze weather",
    "glaze kiln",
    "kiln cracked weather",
    '"glaze batch" kiln',
    "glaz* kiln",
    "cafe",
    "glaze NOT kiln",
    "kiln OR weather",
    "absent",
]


def _ranked_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """As before adr/0044: FTS5 ranks the candidates whatever their number."""
    monkeypatch.setattr(
        keyword, "_matching_rowids", lambda conn, match, project, limit: dict.fromkeys(range(limit))
    )


def _statements(store: Store, query: str, depth: int = 30) -> tuple[dict[int, float], list[str]]:
    statements: list[str] = []
    with store.reading() as conn:
        conn.set_trace_callback(statements.append)
        try:
            found = keyword_candidates(conn, query, project="pottery", table=None, depth=depth)
        finally:
            conn.set_trace_callback(None)
    return found, statements


def test_a_complete_candidate_set_is_found_without_bm25(pottery: Store) -> None:
    found, statements = _statements(pottery, "kiln cracked weather")
    assert len(found) == 11  # nine cracked batches, the kiln breadcrumb, the damp weather
    assert not [s for s in statements if "bm25(" in s]
    assert len([s for s in statements if "search_index_docsize" in s]) == 1  # sizes come with the rows


def test_a_row_that_scores_nothing_keeps_fts5s_order(pottery: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the project's statistics give a matched row nothing (no weighted stem found again in
    it), the row keeps a billionth of its FTS5 score, read from FTS5 for that purpose only."""
    scores = keyword.project_scores
    with pottery.reading() as conn:
        nothing = min(_ranked_rowids(conn, build_match("glaze weather") or "", None, "pottery", 100))

    def one_scores_nothing(*args: object, **kwargs: object) -> dict[int, float]:
        return {rowid: 0.0 if rowid == nothing else score for rowid, score in scores(*args, **kwargs).items()}  # type: ignore[arg-type]

    monkeypatch.setattr(keyword, "project_scores", one_scores_nothing)
    found, statements = _statements(pottery, "glaze weather")
    with pottery.reading() as conn:
        fts5 = _ranked_rowids(conn, build_match("glaze weather") or "", None, "pottery", 100)
        _ranked_always(monkeypatch)
        assert found == keyword_candidates(conn, "glaze weather", project="pottery", table=None, depth=30)
    assert found[nothing] == fts5[nothing] * 1e-9 != 0
    assert [s for s in statements if "bm25(" in s]


def test_more_rows_than_asked_are_ranked_by_fts5(pottery: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword, "RESCORE_DEPTH", 2)
    found, statements = _statements(pottery, "glaze kiln", depth=2)
    assert len(found) == 2
    assert [s for s in statements if "bm25(" in s]


@pytest.mark.parametrize("depth", [3, 30, 150])
def test_results_are_the_same_as_when_fts5_ranks_them(
    pottery: Store, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    with pottery.reading() as conn:
        fast = {q: keyword_candidates(conn, q, project="pottery", table=None, depth=depth) for q in QUERIES}
        hits = {
            q: keyword_search(conn, q, project="pottery", bias=RecordKind.DECISION, limit=5) for q in QUERIES
        }
        _ranked_always(monkeypatch)
        for query in QUERIES:
            slow = keyword_candidates(conn, query, project="pottery", table=None, depth=depth)
            assert fast[query] == slow and list(fast[query]) == list(slow), query  # rows, order, last bit
            again = keyword_search(conn, query, project="pottery", bias=RecordKind.DECISION, limit=5)
            assert [(h.kind, h.id, h.score) for h in hits[query]] == [(h.kind, h.id, h.score) for h in again]
    assert sum(1 for found in fast.values() if found) >= 8


def test_a_term_counted_in_more_rows_than_asked_skips_the_unranked_match(
    pottery: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5 counted ``glaze`` in 10 pottery rows for the first search; asked for 3, the second
    search knows its query matches more and goes straight to FTS5's ranking."""
    monkeypatch.setattr(keyword, "RESCORE_DEPTH", 3)
    _, first = _statements(pottery, "glaze", depth=3)
    found, second = _statements(pottery, "glaze weather", depth=3)
    assert [s for s in first if "LEFT JOIN" in s]  # nothing was known: the unranked MATCH ran
    assert not [s for s in second if "LEFT JOIN" in s]
    assert len(found) == 3 and [s for s in second if "bm25(" in s]
