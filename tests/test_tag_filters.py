"""Tag filters (localmem's and agentage's `tags`): every tag given must be on a row, in search, in
listing and in bulk forgetting, through the command line and through a real MCP client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.errors import InvalidInput
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.test_mcp_server import call, connected


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _refs(output: str) -> list[str]:
    return [hit["ref"] for hit in json.loads(output)["results"]]


def test_search_keeps_rows_carrying_every_tag(run) -> None:
    run("add", "learning", "sqlite locks the whole file on write", "--project", "p", "--tags", "db,gotcha")
    run("add", "learning", "sqlite WAL lets readers in while one writes", "--project", "p", "--tags", "db")
    run("add", "learning", "sqlite vacuum needs twice the space", "--project", "p", "--tags", "gotcha")
    run("add", "decision", "sqlite for the local store", "--project", "q", "--tags", "db,gotcha")
    both = run(
        "search", "sqlite", "--mode", "keyword", "--project", "p", "--tag", "DB", "--tag", "gotcha", "--json"
    )
    assert both.exit_code == 0, both.output
    assert _refs(both.output) == ["learning#1"]
    one = _refs(
        run("search", "sqlite", "--mode", "keyword", "--project", "p", "--tag", "db", "--json").output
    )
    assert sorted(one) == ["learning#1", "learning#2"]
    anywhere = run(
        "search", "sqlite", "--mode", "keyword", "--all-projects", "--tag", "db", "--tag", "gotcha", "--json"
    )
    assert sorted(_refs(anywhere.output)) == ["decision#1", "learning#1"]
    nothing = run("search", "sqlite", "--mode", "keyword", "--project", "p", "--tag", "nosuch")
    assert nothing.exit_code == 0 and "no results" in nothing.output
    listed = json.loads(run("list", "--project", "p", "--tag", "gotcha", "--tag", "db", "--json").output)
    assert [row["ref"] for row in listed["records"]] == ["learning#1"]


def test_a_tag_filters_before_ranking_so_a_rare_tag_still_fills_the_page(memory: Memory) -> None:
    """Forty better keyword matches without the tag must not push the one tagged row off the page."""
    for n in range(40):
        memory.add("learning", f"flaky test flaky test flaky retry number {n}", project="p")
    tagged = memory.add("learning", "a flaky test in the payment suite", project="p", tags=["payments"])
    found = memory.search("flaky test", mode="keyword", project="p", limit=5, tags=["payments"])
    assert [hit.ref for hit in found.hits] == [str(tagged.ref)]
    untagged = memory.search("flaky test", mode="keyword", project="p", limit=5)
    assert str(tagged.ref) not in [hit.ref for hit in untagged.hits]
    odd = memory.add(
        "learning", "a flaky test on the release branch", project="p", tags=["Déploiement", 'say "hi"']
    )
    found = memory.search("flaky", mode="keyword", project="p", tags=["déploiement", 'say "hi"'])
    assert [hit.ref for hit in found.hits] == [str(odd.ref)]
    assert memory.search("flaky", mode="keyword", project="p", tags=["deploiement"]).hits == ()
    with pytest.raises(InvalidInput, match="tags belong to decisions, learnings and breadcrumbs"):
        memory.search("flaky", mode="keyword", project="p", kind="message", tags=["payments"])


@pytest.mark.slow
def test_meaning_search_with_tags_ranks_only_tagged_rows(real_memory: Memory) -> None:
    """By meaning, the tagged row that shares no word with the question is found; closer untagged ones are not."""
    real_memory.add("decision", "Retry HTTP calls to the billing API three times with backoff", project="p",
                    tags=["billing", "http"])  # fmt: skip
    real_memory.add("decision", "How we handle retries: exponential backoff for every network request",
                    project="p", tags=["http"])  # fmt: skip
    real_memory.add("learning", "The billing provider rate-limits at 100 requests a minute", project="p",
                    tags=["billing"])  # fmt: skip
    for mode in ("semantic", "hybrid"):
        found = real_memory.search(
            "how do we handle retries?",
            mode=mode,
            project="p",
            tags=["billing", "http"],  # type: ignore[arg-type]
        )
        assert [hit.ref for hit in found.hits] == ["decision#1"], mode
        assert found.hits[0].cosine is not None and found.hits[0].cosine > 0.2
    wider = real_memory.search("how do we handle retries?", mode="semantic", project="p", tags=["http"])
    assert {hit.ref for hit in wider.hits} == {"decision#1", "decision#2"}


@pytest.mark.anyio
async def test_tags_through_a_real_mcp_client(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        await call(
            client, "memory_add", kind="learning", content="pytest fixtures leak state", tags=["ci", "flaky"]
        )
        await call(
            client, "memory_add", kind="learning", content="pytest runs in parallel on CI", tags=["ci"]
        )
        await call(
            client, "memory_add", kind="breadcrumb", content="pytest flaky suite half fixed", tags=["flaky"]
        )
        found = await call(client, "memory_search", query="pytest", tags=["ci", "flaky"])
        assert [hit["ref"] for hit in found["results"]] == ["learning#1"]
        assert found["results"][0]["extra"]["tags"] == ["ci", "flaky"]
        hybrid = await call(client, "memory_hybrid_search", query="pytest", tags=["flaky"])
        assert {hit["ref"] for hit in hybrid["results"]} == {"learning#1", "breadcrumb#1"}
        listed = await call(client, "memory_list", tags=["flaky", "ci"])
        assert [row["ref"] for row in listed["records"]] == ["learning#1"]
        counted = await call(client, "memory_forget_many", tags=["ci", "flaky"])
        assert counted["matched"] == 1 and not counted["confirmed"]
        done = await call(client, "memory_forget_many", tags=["ci", "flaky"], confirm=1)
        assert done["confirmed"] and sum(done["deleted"].values()) == 1
        left = await call(client, "memory_list", kind=["learning", "breadcrumb"])
        assert sorted(row["ref"] for row in left["records"]) == ["breadcrumb#1", "learning#2"]


def test_forget_by_tags_from_the_command_line_needs_every_tag(run) -> None:
    run("add", "learning", "scratch one", "--project", "p", "--tags", "scratch,tmp")
    run("add", "learning", "scratch two", "--project", "p", "--tags", "scratch")
    counted = run("forget", "--tag", "scratch", "--tag", "tmp", "--project", "p", "--json")
    assert json.loads(counted.output)["matched"] == 1
