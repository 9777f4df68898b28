"""Export and import of records: JSONL round-trips losslessly into another database (ids remapped,
supersession links kept), everything is scrubbed on the way in and stamped by the write path, bad
lines are counted and skipped; markdown writes one file per decision and one per other kind. Through
the library API, the CLI and a real MCP client."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from recall.cli import cli
from recall.mcp_server import create_server
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
MOVED = ("id", "superseded_by")  # ids are new in the other database


def fill(memory: Memory) -> None:
    old = memory.add(
        "decision",
        "Use SQLite with WAL",
        project="shop",
        tags=["db", "wal"],
        detail="readers while one writes",
        confidence="high",
        importance=8,
    )
    new = memory.add("decision", "Use Postgres in production", project="shop")
    memory.supersede(old.ref, by=new.ref)
    memory.revert(memory.add("decision", "Vendor the ONNX runtime", project="shop").ref)
    memory.add(
        "learning", "FTS5 bm25 is negative: lower is better", project="shop", tags=["sqlite"],
        source="https://sqlite.org/fts5.html", metadata={"ticket": "ENG-12"}, valid_until="2031-01-01",
    )  # fmt: skip
    memory.add(
        "breadcrumb",
        "Halfway through the export command",
        project="shop",
        valid_until="2030-01-01T10:00:00+00:00",
    )
    memory.add("breadcrumb", "Next: write the import ADR", project="shop")
    memory.note_write("notes/architecture.md", "---\ntitle: Architecture\n---\n# One core\n", project="shop")
    memory.add("learning", "Someone else's learning", project="other")


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in row.items() if key not in MOVED} for row in rows]


def test_jsonl_round_trips_every_field_with_new_ids(tmp_path: Path) -> None:
    with Memory(tmp_path / "a.db", embedder=FakeEmbedder()) as first:
        fill(first)
        exported = list(first.export_records(project="shop"))
    lines = [json.dumps(row) for row in exported]
    assert {row["kind"] for row in exported} == {"decision", "learning", "breadcrumb", "note"}

    with Memory(tmp_path / "b.db", embedder=FakeEmbedder()) as second:
        for n in range(3):  # ids there are taken: the import must remap
            second.add("decision", f"Unrelated decision number {n} about {'xyz'[n]}", project="elsewhere")
        report = second.import_records(lines)
        assert report.added == {"decision": 3, "learning": 1, "breadcrumb": 2, "note": 1}
        assert report.links == 1 and report.refused == 0
        back = list(second.export_records(project="shop"))
        assert comparable(back) == comparable(exported)
        decisions = {row["content"]: row for row in back if row["kind"] == "decision"}
        assert (
            decisions["Use SQLite with WAL"]["superseded_by"] == decisions["Use Postgres in production"]["id"]
        )
        assert decisions["Use Postgres in production"]["id"] == 5
        assert {row["provenance"] for row in back} == {"user_authored"}

        again = second.import_records(lines)  # a second import adds nothing
        assert again.added == {} and again.already_there == 7
        hits = second.search("bm25 negative", mode="keyword", project="shop").hits
        assert hits and hits[0].kind == "learning"


def test_import_scrubs_stamps_provenance_itself_and_skips_bad_lines(memory: Memory) -> None:
    lines = [
        json.dumps(
            {
                "kind": "learning",
                "project": "shop",
                "content": f"the key is {TOKEN}",
                "provenance": "verbatim",
                "tags": [TOKEN],
            }
        ),
        "not json at all",
        json.dumps({"kind": "widget", "project": "shop", "content": "x"}),
        json.dumps({"kind": "decision", "project": "shop", "content": "   "}),
        json.dumps({"kind": "note", "project": "shop", "path": "../../etc/passwd", "content": "x"}),
        json.dumps({"kind": "decision", "project": "shop", "content": "Use WAL", "status": "maybe"}),
        json.dumps(["a", "list"]),
        "",
        json.dumps(
            {
                "kind": "decision",
                "project": "shop",
                "content": "Use WAL",
                "superseded_by": 99,
                "id": 1,
                "status": "superseded",
                "created_at": "2025-01-02T03:04:05+00:00",
            }
        ),
        json.dumps({"kind": "note", "project": "shop", "path": "notes/keys.md", "content": f"token {TOKEN}"}),
        json.dumps({"kind": "learning", "project": "shop", "content": "too much", "meta": {"x": "y" * 5000}}),
    ]
    report = memory.import_records(lines)

    assert report.added == {"learning": 1, "decision": 1, "note": 1}
    assert report.refused == 7 and report.unlinked == 1
    assert [problem.split(":")[0] for problem in report.problems] == [
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "line 6",
        "line 7",
        "line 11",
    ]
    assert "4,096 bytes" in report.problems[-1]
    learning = memory.list("learning", project="shop").records[0]
    assert TOKEN not in json.dumps(learning.to_dict()) and learning.provenance == "user_authored"
    decision = memory.list("decision", project="shop").records[0]
    assert decision.data["status"] == "superseded" and decision.data["created_at"].startswith(
        "2025-01-02T03:04:05"
    )
    assert TOKEN not in memory.note_read("notes/keys.md", project="shop").data["content"]
    moved = memory.import_records([lines[0]], project="elsewhere")
    assert moved.added == {"learning": 1} and memory.list("learning", project="elsewhere").records


def run(db: Path, *args: str, input: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_export_and_import_records_commands(tmp_path: Path) -> None:
    with Memory(tmp_path / "a.db", embedder=FakeEmbedder()) as first:
        fill(first)
    jsonl = run(tmp_path / "a.db", "export", "--project", "shop")
    assert len(jsonl.splitlines()) == 7
    learnings_only = run(tmp_path / "a.db", "export", "--kind", "learning")
    assert {json.loads(line)["project"] for line in learnings_only.splitlines()} == {"shop", "other"}

    said = run(tmp_path / "b.db", "import-records", "-", input=jsonl + "{broken\n")
    assert said.startswith(
        "imported 2 breadcrumbs, 3 decisions, 1 learning, 1 note; 0 already there; 1 supersession"
    )
    assert "1 line(s) refused" in said and "line 8: not JSON" in said
    assert run(tmp_path / "b.db", "export", "--project", "shop").splitlines() != []
    folder = tmp_path / "jsonl-out"
    data = json.loads(run(tmp_path / "b.db", "export", "--project", "shop", "--out", str(folder), "--json"))
    assert data["records"] == 7 and data["files"] == [str(folder / "records.jsonl")]
    again = json.loads(run(tmp_path / "b.db", "import-records", str(folder / "records.jsonl"), "--json"))
    assert again["added"] == {} and again["already_there"] == 7
    missing = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "b.db"), "import-records", str(tmp_path / "nope.jsonl")]
    )
    assert missing.exit_code != 0 and "cannot read" in missing.output


def test_markdown_export_writes_a_file_per_decision_and_per_kind(tmp_path: Path) -> None:
    with Memory(tmp_path / "a.db", embedder=FakeEmbedder()) as first:
        fill(first)
    out = tmp_path / "md"
    said = run(tmp_path / "a.db", "export", "--format", "markdown", "--out", str(out))
    assert "exported" in said
    shop = out / "shop"
    files = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert files == [
        "other/learnings.md",
        "shop/breadcrumbs.md",
        "shop/decisions/0001-use-sqlite-with-wal.md",
        "shop/decisions/0002-use-postgres-in-production.md",
        "shop/decisions/0003-vendor-the-onnx-runtime.md",
        "shop/learnings.md",
        "shop/notes/architecture.md",
    ]
    first_decision = (shop / "decisions" / "0001-use-sqlite-with-wal.md").read_text()
    assert first_decision.startswith("# 1. Use SQLite with WAL\n")
    assert "Status: superseded by [decision 2](0002-use-postgres-in-production.md)" in first_decision
    assert "## Why\n\nreaders while one writes" in first_decision and "Tags: db, wal" in first_decision
    assert "Status: reverted" in (shop / "decisions" / "0003-vendor-the-onnx-runtime.md").read_text()
    crumbs = (shop / "breadcrumbs.md").read_text()
    assert "## Halfway through the export command" in crumbs and "valid until 2030-01-01" in crumbs
    assert (shop / "notes" / "architecture.md").read_text() == "---\ntitle: Architecture\n---\n# One core\n"
    if os.name == "posix":
        assert stat.S_IMODE((shop / "learnings.md").stat().st_mode) == 0o600
        assert stat.S_IMODE((shop / "decisions").stat().st_mode) == 0o700
    refused = CliRunner().invoke(cli, ["--db", str(tmp_path / "a.db"), "export", "--format", "markdown"])
    assert refused.exit_code != 0 and "--out" in refused.output


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_records_move_between_servers_through_a_real_mcp_client(tmp_path: Path) -> None:
    with anyio.fail_after(60), Memory(tmp_path / "a.db", project="shop", embedder=FakeEmbedder()) as first:
        fill(first)
        async with Client(create_server(first)) as client:
            exported = await client.call_tool("memory_export", {})
    assert exported.structured_content is not None and exported.structured_content["count"] == 7
    records = exported.structured_content["records"]
    with Memory(tmp_path / "b.db", project="shop", embedder=FakeEmbedder()) as second:
        async with Client(create_server(second)) as client:
            imported = await client.call_tool("memory_import", {"records": [*records, {"kind": "widget"}]})
            listed = await client.call_tool("memory_list", {"kind": "decision", "status": "superseded"})
    assert imported.structured_content is not None
    assert imported.structured_content["added"] == {"breadcrumb": 2, "decision": 3, "learning": 1, "note": 1}
    assert (
        imported.structured_content["refused"] == 1 and imported.structured_content["supersession_links"] == 1
    )
    assert listed.structured_content is not None
    assert [r["content"] for r in listed.structured_content["records"]] == ["Use SQLite with WAL"]
