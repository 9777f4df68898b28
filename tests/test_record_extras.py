"""The seeds' smaller promises on records: the answer to an add says what the scrubber redacted (the
Recall tool shape), and a record keeps the caller's optional `source` and small `metadata` object
(localmem, r3): free-form, scrubbed like every text, at most 4 KB."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.test_mcp_server import call, connected, refused

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
URL = "https://deploy:hunter2pass@ci.example.com/job/7"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def run(db_path: Path, runner: CliRunner):
    def invoke(*args: str):
        return runner.invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _raw(db_path: Path) -> bytes:
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db_path.read_bytes()


def test_add_says_what_was_redacted_and_keeps_source_and_metadata_scrubbed(run, db_path: Path) -> None:
    metadata = json.dumps({"ticket": "ENG-12", "auth": {"token": TOKEN}, "links": [URL]})
    added = run("add", "learning", f"CI pushes with {TOKEN}", "--project", "p", "--source", URL,
                "--metadata", metadata)  # fmt: skip
    assert added.exit_code == 0, added.output
    assert added.stdout.strip() == "learning#1"  # scripts still read the ref alone
    assert "redacted before storing:" in added.stderr
    assert "2 github-token" in added.stderr and "2 url-password" in added.stderr
    shown = json.loads(run("show", "learning#1", "--json").output)
    assert shown["source"] == "https://deploy:[REDACTED:url-password]@ci.example.com/job/7"
    assert shown["meta"]["ticket"] == "ENG-12"
    assert shown["meta"]["auth"]["token"] == "[REDACTED:github-token]"
    assert TOKEN.encode() not in _raw(db_path) and b"hunter2pass" not in _raw(db_path)

    as_json = json.loads(run("add", "decision", f"rotate {TOKEN}", "--project", "p", "--json").output)
    assert as_json["redacted"] == {"github-token": 1}
    clean = run("add", "decision", "nothing secret here", "--project", "p")
    assert clean.stderr == ""
    assert "redacted" not in json.loads(run("show", "decision#2", "--json").output)


def test_update_replaces_and_clears_source_and_metadata(run) -> None:
    run(
        "add",
        "decision",
        "Use uv for installs",
        "--project",
        "p",
        "--source",
        "ENG-1",
        "--metadata",
        '{"a": 1}',
    )
    changed = json.loads(run("update", "decision#1", "--metadata", '{"b": 2}', "--json").output)
    assert changed["meta"] == {"b": 2} and changed["source"] == "ENG-1"
    cleared = json.loads(run("update", "decision#1", "--source", "", "--json").output)
    assert cleared["source"] is None and cleared["content"] == "Use uv for installs"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--metadata", "{not json"), "metadata is not valid JSON"),
        (("--metadata", "[1, 2]"), "must be a JSON object"),
        (("--metadata", json.dumps({"blob": "x" * 5000})), "over 4,096 bytes"),
        (("--source", "s" * 5000), "source is over 4,096 bytes"),
    ],
)
def test_bad_source_or_metadata_is_one_line_that_says_what_to_do(
    run, args: tuple[str, ...], message: str
) -> None:
    result = run("add", "learning", "x", "--project", "p", *args)
    assert result.exit_code == 1
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert json.loads(run("list", "--project", "p", "--json").output)["records"] == []


def test_library_api_takes_a_metadata_mapping(memory: Memory) -> None:
    record = memory.add("breadcrumb", "halfway through the migration", project="p",
                        source="notes/plan.md", metadata={"step": 3, "of": 5})  # fmt: skip
    assert record.data["meta"] == {"step": 3, "of": 5} and record.data["source"] == "notes/plan.md"
    assert record.redacted == {}


@pytest.mark.anyio
async def test_memory_add_reports_redactions_and_keeps_extras_through_a_real_mcp_client(
    db_path: Path,
) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        result = await client.call_tool(
            "memory_add",
            {"kind": "learning", "content": f"deploy key is {TOKEN}", "source": URL,
             "metadata": {"ticket": "OPS-3", "token": TOKEN}},
        )  # fmt: skip
        assert not result.is_error
        added = result.structured_content
        assert added is not None
        assert added["redacted"] == {"github-token": 2, "url-password": 1}
        text = "\n".join(block.text for block in result.content if block.type == "text")
        assert "redacted before storing: 2 github-token, 1 url-password" in text
        record = added["record"]
        assert record["meta"] == {"ticket": "OPS-3", "token": "[REDACTED:github-token]"}
        assert "hunter2pass" not in record["source"]

        clean = await call(client, "memory_add", kind="decision", content="plain words")
        assert clean["redacted"] == {}
        updated = await call(
            client, "memory_update", id=added["ref"], metadata={"ticket": "OPS-4"}, source=""
        )
        assert updated["record"]["meta"] == {"ticket": "OPS-4"} and updated["record"]["source"] is None
        assert "4,096 bytes" in await refused(
            client, "memory_add", kind="learning", content="x", metadata={"blob": "x" * 5000}
        )
    assert TOKEN.encode() not in _raw(db_path)
