"""Keyword search reads rows only for the hits it returns (adr/0031): the same hits, in the same
order, as ranking every candidate read in full, on real transcripts with records whose lifecycle
changes their rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall.memory import Memory
from recall.rowkinds import RecordKind
from recall.search.keyword import keyword_candidates, keyword_search, materialise, rank

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
QUERIES = ["test", "the file", "error", "sqlite database", "run pytest", "spotter", "fix the bug"]


def every_candidate_ranked(memory: Memory, query: str, bias: RecordKind | None, limit: int) -> list:
    """What keyword search returned before: every candidate read in full, then ranked."""
    depth = max(limit * 3, 30)
    with memory.store.reading() as conn:
        scored = keyword_candidates(conn, query, project=None, table=None, depth=depth)
        if bias is not None:
            for rowid, score in keyword_candidates(
                conn, query, project=None, table=bias, depth=depth
            ).items():
                scored.setdefault(rowid, score)
        return rank(materialise(conn, scored), bias=bias, limit=limit)


@pytest.mark.parametrize("bias", [None, RecordKind.DECISION, RecordKind.BREADCRUMB])
@pytest.mark.parametrize("limit", [1, 3, 10])
def test_the_hits_returned_are_those_ranking_every_candidate_gives(
    memory: Memory, bias: RecordKind | None, limit: int
) -> None:
    memory.import_transcripts(["claude"], paths=[SPOTTER], embed_budget_seconds=0)
    for n, query in enumerate(QUERIES):
        old = memory.add("decision", f"For {query} use the first way", project="spotter")
        new = memory.add("decision", f"Later, {query} moved onto another tool entirely", project="spotter")
        if n % 2:
            memory.supersede(old.ref, by=new.ref)
        memory.add("breadcrumb", f"halfway through {query}", project="spotter",
                   valid_until="2000-01-01" if n % 2 else "2999-01-01")  # fmt: skip
    compared = 0
    for query in QUERIES:
        with memory.store.reading() as conn:
            got = keyword_search(conn, query, bias=bias, limit=limit)
        want = every_candidate_ranked(memory, query, bias, limit)
        assert [(h.ref, round(h.score, 9)) for h in got] == [(h.ref, round(h.score, 9)) for h in want]
        compared += len(got)
        assert not any(h.kind == "breadcrumb" and h.extra.get("valid_until", "3") < "2001" for h in got)
    assert compared >= len(QUERIES) * limit // 2


@pytest.mark.parametrize("bias", [None, RecordKind.DECISION])
def test_hybrid_returns_what_ranking_every_candidate_gives(
    memory: Memory, bias: RecordKind | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall.search import keyword

    memory.import_transcripts(["claude"], paths=[SPOTTER], embed_budget_seconds=0)
    memory.embed()
    for n, query in enumerate(QUERIES):
        old = memory.add("decision", f"For {query} use the first way", project="spotter")
        if n % 2:
            memory.supersede(old.ref)
    got = {q: memory.search(q, mode="hybrid", bias=bias, limit=5, project="*").hits for q in QUERIES}
    monkeypatch.setattr(keyword, "best_rowids", lambda conn, fused, **options: list(fused))
    for query in QUERIES:
        want = memory.search(query, mode="hybrid", bias=bias, limit=5, project="*").hits
        assert [(h.ref, round(h.score, 9)) for h in got[query]] == [(h.ref, round(h.score, 9)) for h in want]
        assert len(want) == 5


def test_a_brief_embeds_its_task_once(memory: Memory) -> None:
    calls: list[str] = []
    embed_query = memory.embedder.embed_query

    def counted(text: str):  # type: ignore[no-untyped-def]
        calls.append(text)
        return embed_query(text)

    memory.embedder.embed_query = counted  # type: ignore[method-assign]
    memory.add("decision", "Use SQLite with WAL for the test database", project="p")
    brief = memory.context_for_agent("fix the flaky sqlite test", project="p")
    assert "SQLite" in brief.text
    assert len(calls) == 1


@pytest.mark.parametrize(
    "text", ["plain ascii", "café ünïcode", "日本語のテキスト", "lone \udc80 surrogate", ""]
)
def test_the_token_estimate_counts_each_non_ascii_character_whole(text: str) -> None:
    import math

    from recall.brief import CHARS_PER_TOKEN, estimate_tokens

    other = sum(1 for char in text if ord(char) > 127)
    assert estimate_tokens(text) == math.ceil((len(text) - other) / CHARS_PER_TOKEN + other)


@pytest.mark.parametrize("depth", [2, 8])
def test_keyword_rowids_are_the_rowids_keyword_candidates_returns(memory: Memory, depth: int) -> None:
    """A near-duplicate check reads the candidates' ids only: with no more than ``depth`` matches
    re-scoring is skipped, with more the project's statistics pick them as before."""
    from recall.search.keyword import keyword_rowids

    memory.import_transcripts(["claude"], paths=[SPOTTER], embed_budget_seconds=0)
    for n, query in enumerate(QUERIES):
        memory.add("decision", f"For {query} use way number {n}", project="spotter")
        memory.add("learning", f"Running {query} twice in a row found {n} problems", project="spotter")
    sizes = set()
    with memory.store.reading() as conn:
        for query in QUERIES:
            for kind in (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB):
                for project in ("spotter", "elsewhere", None):
                    got = keyword_rowids(conn, query, project=project, table=kind, depth=depth)
                    want = keyword_candidates(conn, query, project=project, table=kind, depth=depth)
                    assert sorted(got) == sorted(want), (query, kind, project)
                    sizes.add(len(got))
    assert 0 in sizes and depth in sizes and len(sizes) > 2  # none, some, and more than depth found
