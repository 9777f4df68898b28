"""A project's profile (TinyMem's get_profile/set_profile): a small page per project, set and shown
through `recall profile` and MCP profile_get/profile_set, scrubbed, and shown first in the
start-of-session brief, memory_recall and context_for_agent without breaking their token budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.brief import estimate_tokens
from recall.cli import cli
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.test_bound_server import bound
from tests.test_mcp_server import call, connected, refused

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_profile_is_set_shown_in_order_and_unset_from_the_command_line(run) -> None:
    assert "no profile for p yet" in run("profile", "--project", "p").output
    assert run("profile", "set", "test", "pytest -q", "--project", "p").exit_code == 0
    run("profile", "set", "deploy", "fly deploy", "--project", "p")
    run("profile", "set", "Stack", "Python 3.11, SQLite", "--project", "p")
    shown = run("profile", "show", "--project", "p").output.splitlines()
    assert shown == ["## Profile of p", "stack: Python 3.11, SQLite", "test: pytest -q", "deploy: fly deploy"]
    data = json.loads(run("profile", "--project", "p", "--json").output)
    assert data["profile"] == {"stack": "Python 3.11, SQLite", "test": "pytest -q", "deploy": "fly deploy"}
    run("profile", "set", "test", "pytest -q -x", "--project", "p")  # a key is set, not added twice
    assert json.loads(run("profile", "--project", "p", "--json").output)["profile"]["test"] == "pytest -q -x"
    assert run("profile", "unset", "deploy", "--project", "p").exit_code == 0
    assert "deploy" not in json.loads(run("profile", "--project", "p", "--json").output)["profile"]
    assert json.loads(run("profile", "--project", "q", "--json").output)["profile"] == {}

    missing = run("profile", "unset", "deploy", "--project", "p")
    assert missing.exit_code == 1 and "has no deploy" in missing.output
    bad = run("profile", "set", "what is this?", "x", "--project", "p")
    assert bad.exit_code == 1 and "stack, conventions" in bad.output
    long = run("profile", "set", "notes", "x" * 2001, "--project", "p")
    assert long.exit_code == 1 and "at most 2,000 characters" in long.output


def test_a_profile_value_is_scrubbed_and_unset_leaves_the_file(run, db_path: Path) -> None:
    result = run("profile", "set", "build", f"GITHUB_TOKEN={TOKEN} make dist", "--project", "p")
    assert result.exit_code == 0
    assert "redacted before storing: 1" in result.stderr
    stored = json.loads(run("profile", "--project", "p", "--json").output)["profile"]["build"]
    assert TOKEN not in stored and "[REDACTED:" in stored and stored.endswith("make dist")
    run("profile", "set", "owners", "zanzibar-owner owns billing", "--project", "p")
    run("profile", "unset", "owners", "--project", "p")
    assert b"zanzibar-owner" not in db_path.read_bytes()
    assert not Path(f"{db_path}-wal").exists() or b"zanzibar-owner" not in Path(f"{db_path}-wal").read_bytes()


def test_the_session_brief_starts_with_the_profile_even_with_nothing_else(run) -> None:
    assert "holds no decisions" in run("context", "--project", "p").output
    run("profile", "set", "test", "pytest -q", "--project", "p")
    lines = run("context", "--project", "p").output.splitlines()
    assert lines[:4] == ["## recall: what p remembers", "", "### Project profile", "- test: pytest -q"]
    run("add", "decision", "Use WAL mode", "--project", "p")
    text = run("context", "--project", "p").output
    assert text.index("### Project profile") < text.index("### Decisions in force")


def test_a_full_profile_keeps_within_the_budget_and_leaves_room_for_decisions(memory: Memory) -> None:
    for n in range(20):
        memory.set_profile(f"key{n:02d}", f"value {n} " + "word " * 390, project="p")
    memory.add("decision", "Use WAL journal mode for the store", project="p")
    for budget in (150, 400, 1200):
        brief = memory.session_brief("p", max_tokens=budget)
        assert estimate_tokens(brief) <= budget
        assert "### Project profile" in brief
        assert "Use WAL journal mode" in brief, budget
        agent = memory.context_for_agent("switch the store journal mode", project="p", max_tokens=budget)
        assert agent.tokens <= budget and "### Project profile" in agent.text
        assert "Use WAL journal mode" in agent.text, budget


def test_purging_a_project_takes_its_profile(memory: Memory) -> None:
    memory.set_profile("stack", "Go", project="old")
    memory.set_profile("stack", "Rust", project="kept")
    report = memory.purge(project="old")
    assert report.counts["profile"] == 1
    assert memory.profile("old").entries == () and memory.profile("kept").get("stack") == "Rust"


@pytest.mark.anyio
async def test_profile_through_a_real_mcp_client(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        empty = await call(client, "profile_get")
        assert empty == {"project": "shop", "profile": {}, "updated_at": None, "redacted": {}}
        done = await call(client, "profile_set", key="lint", value="ruff check . && mypy")
        assert done["profile"] == {"lint": "ruff check . && mypy"} and done["updated_at"]
        secret = await client.call_tool("profile_set", {"key": "notes", "value": f"CI token {TOKEN}"})
        assert secret.structured_content is not None
        assert secret.structured_content["redacted"] == {"github-token": 1}
        assert "redacted before storing" in secret.content[0].text  # type: ignore[union-attr]
        await call(client, "profile_set", key="stack", value="Python 3.11, FastAPI")
        got = await call(client, "profile_get")
        assert list(got["profile"]) == ["stack", "lint", "notes"]

        recalled = await call(client, "memory_recall")
        assert recalled["profile"]["stack"] == "Python 3.11, FastAPI"
        brief = await call(client, "context_for_agent", agent_task="add an endpoint", max_tokens=300)
        assert brief["text"].splitlines()[2:4] == ["### Project profile", "- stack: Python 3.11, FastAPI"]
        assert brief["tokens"] <= 300

        removed = await call(client, "profile_set", key="notes", value=None)
        assert "notes" not in removed["profile"]
        assert "has no notes" in await refused(client, "profile_set", key="notes", value=None)
        other = await call(client, "profile_get", project="blog")
        assert other["profile"] == {}


@pytest.mark.anyio
async def test_a_bound_server_keeps_to_its_own_profile(db_path: Path) -> None:
    async with bound(db_path) as client:
        assert (await call(client, "profile_set", key="test", value="make test"))["project"] == "shop"
        assert "bound to project shop" in await refused(
            client, "profile_set", key="test", value="npm test", project="blog"
        )
        assert (await call(client, "profile_get", project="blog"))["profile"] == {}
