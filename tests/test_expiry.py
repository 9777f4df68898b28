"""Expiry on every typed kind (TinyMem's valid_until): decisions, learnings and breadcrumbs take it on
add and update and lose it with `none` (MCP: null); an expired row leaves search, the
start-of-session brief, memory_recall and context_for_agent, stays in the file, and goes with
`recall purge --expired`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.test_mcp_server import call, connected

PAST = "2001-01-01"


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _found(run, words: str) -> list[str]:
    result = run("search", words, "--mode", "keyword", "--project", "p", "--json")
    assert result.exit_code == 0, result.output
    return [hit["ref"] for hit in json.loads(result.output)["results"]]


@pytest.mark.parametrize("kind", ["decision", "learning", "breadcrumb"])
def test_every_kind_expires_clears_and_is_purged_from_the_command_line(run, kind: str) -> None:
    added = run(
        "add",
        kind,
        "Deploys freeze during the audit window",
        "--project",
        "p",
        "--valid-until",
        "3d",
        "--importance",
        "9",
    )
    assert added.exit_code == 0, added.output
    ref = added.output.strip()
    assert json.loads(run("show", ref, "--json").output)["valid_until"] is not None
    assert _found(run, "audit window") == [ref]
    assert "audit window" in run("context", "--project", "p").output

    assert run("update", ref, "--valid-until", PAST).exit_code == 0
    assert _found(run, "audit window") == []
    assert "audit window" not in run("context", "--project", "p").output
    assert json.loads(run("show", ref, "--json").output)["content"].startswith("Deploys")  # still stored
    expired = json.loads(run("list", kind, "--status", "expired", "--project", "p", "--json").output)
    assert [row["ref"] for row in expired["records"]] == [ref]

    cleared = run("update", ref, "--valid-until", "none", "--json")
    assert json.loads(cleared.output)["valid_until"] is None
    assert _found(run, "audit window") == [ref]

    run("update", ref, "--valid-until", PAST)
    dry = json.loads(run("purge", "--expired", "--dry-run", "--json").output)
    assert dry["counts"][kind] == 1
    assert run("purge", "--expired").exit_code == 0
    assert run("show", ref).exit_code == 1


def test_an_unreadable_expiry_says_how_to_write_one(run) -> None:
    result = run("add", "decision", "x", "--project", "p", "--valid-until", "next tuesday")
    assert result.exit_code == 1
    assert "2026-12-31" in result.output and "3d" in result.output


def test_an_expired_decision_leaves_the_agent_brief_but_a_live_one_stays(memory: Memory) -> None:
    memory.add("decision", "Pin numpy below 2 for the wheels build", project="p", valid_until=PAST)
    memory.add("decision", "Pin onnxruntime to 1.20 for the wheels build", project="p")
    brief = memory.context_for_agent("fix the wheels build pins", project="p")
    assert "onnxruntime" in brief.text and "numpy" not in brief.text
    recalled = memory.catch_up("p")
    assert [item.content for item in recalled.decisions] == ["Pin onnxruntime to 1.20 for the wheels build"]


@pytest.mark.anyio
async def test_expiry_through_a_real_mcp_client(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        added = await call(client, "memory_add", kind="learning", content="The staging cert rotates on Fridays",
                           importance=9, valid_until="1w")  # fmt: skip
        ref = added["ref"]
        assert added["record"]["valid_until"] is not None
        hits = await call(client, "memory_search", query="staging cert")
        assert [hit["ref"] for hit in hits["results"]] == [ref]

        await call(client, "memory_update", id=ref, valid_until=PAST)
        hits = await call(client, "memory_search", query="staging cert")
        assert all(hit["ref"] != ref for hit in hits["results"])
        recalled = await call(client, "memory_recall")
        assert recalled["learnings"] == []
        brief = await call(client, "context_for_agent", agent_task="renew the staging cert")
        assert "Fridays" not in brief["text"]
        got = await call(client, "memory_get", id=ref)
        assert got["found"] and got["record"]["valid_until"].startswith("2001-01-01")

        kept = await call(client, "memory_update", id=ref, importance=8)  # leaving valid_until out keeps it
        assert kept["record"]["valid_until"].startswith("2001-01-01")
        cleared = await call(client, "memory_update", id=ref, valid_until=None)
        assert cleared["record"]["valid_until"] is None
        recalled = await call(client, "memory_recall")
        assert [item["ref"] for item in recalled["learnings"]] == [ref]
