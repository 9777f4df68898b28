"""Hybrid search's keyword half leaves out a word found in a large share of the index's rows when the
query's other words still find enough rows (adr/0041); every other query is searched as written."""

from __future__ import annotations

import pytest

from recall.memory import Memory
from recall.rowkinds import KIND_CODES, RecordKind, index_rowid
from recall.search import common_terms
from recall.search.common_terms import index_rows, keyword_query
from recall.search.keyword import keyword_candidates


@pytest.fixture
def filled(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> Memory:
    """120 learnings: "widget" in all of them, "gearbox" in 60, "flange" in 1."""
    monkeypatch.setattr(common_terms, "COMMON_MIN_ROWS", 10)
    monkeypatch.setattr(common_terms, "COMMON_SHARE", 0.9)
    for n in range(120):
        extra = " gearbox" if n % 2 == 0 else ""
        extra += " flange" if n == 3 else ""
        memory.add("learning", f"widget note number {n}{extra}", project="p")
    return memory


def test_the_index_row_count_is_read_from_fts5s_own_record(filled: Memory) -> None:
    with filled.store.reading() as conn:
        assert index_rows(conn) == conn.execute("SELECT count(*) FROM search_index").fetchone()[0] == 120


def test_a_common_word_is_left_out_when_the_rarer_ones_find_enough_rows(filled: Memory) -> None:
    with filled.store.reading() as conn:
        assert keyword_query(conn, "widget gearbox flange", depth=61) == '"gearbox" "flange"'
        assert (
            keyword_query(conn, "widget gearbox flange", depth=62) == "widget gearbox flange"
        )  # 60 + 1 < 62
        assert keyword_query(conn, "widget", depth=1) == "widget"  # nothing rarer beside it
        assert keyword_query(conn, "widget AND gearbox", depth=1) == "widget AND gearbox"  # written as wanted
        assert keyword_query(conn, "widget gear*", depth=1) == "widget gear*"


def test_a_small_index_searches_every_word(filled: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common_terms, "COMMON_MIN_ROWS", 5_000)
    with filled.store.reading() as conn:
        assert keyword_query(conn, "widget gearbox flange", depth=1) == "widget gearbox flange"


def test_hybrid_search_ranks_without_the_common_word(filled: Memory) -> None:
    hits = filled.search("widget gearbox", mode="hybrid", project="p", limit=50).hits
    with filled.store.reading() as conn:
        alone = keyword_candidates(conn, "gearbox", project="p", table=None, depth=50)
    scored = {index_rowid(KIND_CODES[RecordKind.LEARNING], hit.id): hit.keyword_score for hit in hits}
    found = {rowid: score for rowid, score in scored.items() if score is not None}
    assert len(found) == 50 and found == alone  # bm25 of "gearbox" alone: widget added nothing
