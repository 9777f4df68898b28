"""A one-project search whose candidates are every matching row counts its terms from them (adr/0036).

The counts must be the ones FTS5 gives (``term AND project``): the test compares every score with
the shortcut on and off, on queries and filters where taking it wrongly would change a count.
"""

from __future__ import annotations

import pytest

from recall.models import RecordKind
from recall.search import keyword
from recall.search.keyword import keyword_candidates, keyword_rowids
from recall.store import Store

QUERIES = [
    "glaze",
    "glaze kiln",
    "kiln cracked weather",
    '"glaze batch" kiln',
    "glaz* kiln",
    "cafe",
    "the glazing of the kiln",
    "glaze NOT kiln",
    "glaze AND kiln",
    "kiln OR weather",
    "kmessage glaze",  # a kind's scope token: FTS5 does not match it in the searched columns
]


def _without_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every term counted by FTS5, as before adr/0036."""
    rescored = keyword._rescored
    monkeypatch.setattr(
        keyword, "_rescored", lambda *args, **kw: rescored(*args, **{**kw, "complete": False})
    )


@pytest.mark.parametrize("table", [None, RecordKind.DECISION, RecordKind.LEARNING])
def test_scores_are_the_same_as_with_fts5s_counts(
    pottery: Store, monkeypatch: pytest.MonkeyPatch, table: RecordKind | None
) -> None:
    with pottery.reading() as conn:
        fast = {q: keyword_candidates(conn, q, project="pottery", table=table, depth=30) for q in QUERIES}
        near = {q: keyword_rowids(conn, q, project="pottery", table=table, depth=3) for q in QUERIES}
        only = set(list(keyword_candidates(conn, "glaze", project="pottery", table=None, depth=30))[:4])
        tagged = keyword_candidates(conn, "glaze kiln", project="pottery", table=None, depth=30, only=only)
        _without_shortcut(monkeypatch)
        for query in QUERIES:
            slow = keyword_candidates(conn, query, project="pottery", table=table, depth=30)
            assert fast[query] == slow, query  # the same rows, the same scores to the last bit
            assert near[query] == keyword_rowids(conn, query, project="pottery", table=table, depth=3)
        assert tagged == keyword_candidates(
            conn, "glaze kiln", project="pottery", table=None, depth=30, only=only
        )
    assert any(fast.values()) and tagged


def test_a_complete_candidate_set_asks_fts5_to_count_only_the_project(pottery: Store) -> None:
    statements: list[str] = []
    with pottery.reading() as conn:
        keyword_candidates(conn, "weather", project="pottery", table=None, depth=30)  # N, remembered
        conn.set_trace_callback(statements.append)
        try:
            found = keyword_candidates(conn, "glaze kiln", project="pottery", table=None, depth=30)
        finally:
            conn.set_trace_callback(None)
    assert found
    assert not [s for s in statements if "count(*)" in s]


def test_more_rows_than_asked_are_still_counted_by_fts5(
    pottery: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword, "RESCORE_DEPTH", 2)  # pottery holds more rows with glaze than that
    statements: list[str] = []
    with pottery.reading() as conn:
        conn.set_trace_callback(statements.append)
        try:
            found = keyword_candidates(conn, "glaze", project="pottery", table=None, depth=2)
        finally:
            conn.set_trace_callback(None)
    assert len(found) == 2
    assert [s for s in statements if "count(*)" in s]
