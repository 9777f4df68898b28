"""Keyword relevance of a one-project search uses that project's statistics (adr/0021)."""

from __future__ import annotations

import math

import pytest

from recall.models import RecordKind
from recall.search import keyword as keyword_module
from recall.search.fts_query import build_match
from recall.search.keyword import _ranked_rowids, keyword_search
from recall.search.project_bm25 import project_scores, stem
from recall.store import NewRecord, Store


def add(store: Store, project: str, text: str, **extra: object) -> None:
    store.add(NewRecord(RecordKind.LEARNING, text, project, **extra))  # type: ignore[arg-type]


@pytest.fixture
def two_projects(store: Store) -> Store:
    """``alice`` is said in most of pottery's rows but nowhere else; ``kiln`` is all over ceramics."""
    for n in range(8):
        add(store, "pottery", f"alice mentions glaze batch {n} and the weather")
    add(store, "pottery", "alice alice asked alice about the glaze")
    add(store, "pottery", "the kiln cracked overnight")
    for n in range(40):
        add(store, "ceramics", f"kiln schedule {n}: fire the kiln at cone six")
    return store


def test_a_project_search_ranks_by_that_projects_rare_words(two_projects: Store) -> None:
    with two_projects.reading() as conn:
        hits = keyword_search(conn, "alice kiln", project="pottery", limit=3)
    # In the whole database alice is rare and kiln common; in pottery it is the other way round.
    assert hits[0].content == "the kiln cracked overnight"


def test_the_database_statistics_would_have_ranked_otherwise(
    two_projects: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_module, "PROJECT_STATISTICS", False)
    with two_projects.reading() as conn:
        hits = keyword_search(conn, "alice kiln", project="pottery", limit=3)
    assert hits[0].content == "alice alice asked alice about the glaze"


def test_an_all_projects_search_keeps_fts5s_own_bm25(two_projects: Store) -> None:
    with two_projects.reading() as conn:
        hits = keyword_search(conn, "alice kiln", limit=5)
        expected = _ranked_rowids(conn, build_match("alice kiln") or "", None, None, 5)
    assert [h.keyword_score for h in hits] == pytest.approx(sorted(expected.values(), reverse=True))


QUERIES = [
    "glaze",
    "alice glaze",
    "kiln cracked",
    '"glaze batch"',
    "glaz*",
    "alice's glaze",
    "weather OR kiln",
]


@pytest.mark.parametrize("query", QUERIES)
def test_one_project_alone_scores_exactly_as_fts5(store: Store, query: str) -> None:
    """With one project the project's statistics are the database's: the formula must be FTS5's."""
    for n in range(6):
        add(
            store,
            "pottery",
            f"alice mentions glaze batch {n}",
            detail="glaze notes " * (n % 3),
            tags=("glaze",),
        )
    add(store, "pottery", "alice's glaze cracked in the kiln; glazes glazed", detail="weather was damp")
    add(store, "pottery", "the kiln cracked overnight and the weather turned")
    for n in range(12):  # so that no term is in half the rows, where FTS5 clamps its weight
        add(store, "pottery", f"unrelated note number {n}")
    match = build_match(query)
    assert match is not None
    with store.reading() as conn:
        fts5 = _ranked_rowids(conn, match, None, "pottery", 50)
        ours = project_scores(conn, query, fts5, "pottery")
    assert fts5
    for rowid, score in fts5.items():
        assert math.isclose(ours[rowid], score, rel_tol=1e-6, abs_tol=1e-9), (rowid, ours[rowid], score)


def test_stems_are_the_index_tokenizers() -> None:
    assert stem("painting") == "paint"
    assert stem("families") == "famili"
    assert stem("Deployment") == "deploy"


def test_a_project_with_no_such_rows_finds_nothing(two_projects: Store) -> None:
    with two_projects.reading() as conn:
        assert keyword_search(conn, "kiln", project="nobody", limit=5) == []
