"""Markdown notes: written, read, edited (replace, append, prepend, exactly-once str_replace), listed and
deleted through the library API, the CLI and a real MCP client; scrubbed, searched with everything
else, and gone from disk when deleted."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from recall.cli import cli
from recall.errors import InvalidInput, NotFound
from recall.mcp_server import create_server
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.residue import leftovers, plain_canary

ARCH = "---\ntitle: Architecture\nowner: ana\n---\n# Overview\n\nOne core, thin edges: the CLI calls recall.Memory.\n"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_note_is_written_read_and_edited_in_every_mode(memory: Memory) -> None:
    written = memory.note_write("notes/architecture", ARCH, project="shop")
    assert written.ref.kind.value == "note" and written.data["path"] == "notes/architecture.md"
    assert written.data["frontmatter"] == {"title": "Architecture", "owner": "ana"}
    assert written.data["title"] == "Architecture" and written.trusted

    memory.note_edit("notes/architecture.md", "append", "## Storage\nSQLite.", project="shop")
    memory.note_edit("notes/architecture.md", "prepend", "<!-- kept by recall -->", project="shop")
    text = memory.note_read("./notes/architecture.md", project="shop").data["content"]
    assert text.startswith("---\ntitle: Architecture\nowner: ana\n---\n<!-- kept by recall -->\n# Overview")
    assert text.endswith("recall.Memory.\n## Storage\nSQLite.")

    edited = memory.note_edit(
        "notes/architecture.md", "str_replace", old="SQLite.", new="SQLite in WAL mode.", project="shop"
    )
    assert edited.data["content"].endswith("SQLite in WAL mode.") and edited.id == written.id
    with pytest.raises(InvalidInput, match="occurs 2 times"):  # the two headings
        memory.note_edit("notes/architecture.md", "str_replace", old="\n#", new="x", project="shop")
    with pytest.raises(InvalidInput, match="does not occur"):
        memory.note_edit("notes/architecture.md", "str_replace", old="Postgres", new="x", project="shop")
    with pytest.raises(NotFound):
        memory.note_edit("notes/missing.md", "str_replace", old="a", new="b", project="shop")
    assert memory.note_read("notes/architecture.md", project="shop").data["content"] == edited.data["content"]

    replaced = memory.note_edit("notes/architecture.md", "replace", "short", project="shop")
    assert replaced.data["content"] == "short" and replaced.id == written.id
    created = memory.note_edit("notes/new.md", "append", "first line", project="shop")
    assert created.data["content"] == "first line" and created.data["title"] == "new.md"


def test_paths_stay_inside_the_project(memory: Memory) -> None:
    for bad in (
        "/etc/passwd",
        "../up.md",
        "notes/../../x.md",
        "notes/.hidden.md",
        "",
        "a//b.md",
        "notes/\x00.md",
    ):
        with pytest.raises(InvalidInput):
            memory.note_write(bad, "x", project="shop")
    with pytest.raises(InvalidInput, match="secret"):
        memory.note_write(f"notes/{TOKEN}.md", "x", project="shop")


def test_notes_are_scrubbed_listed_by_folder_and_kept_per_project(memory: Memory) -> None:
    stored = memory.note_write("notes/deploy.md", f"# Deploy\nexport GITHUB_TOKEN={TOKEN}\n", project="shop")
    assert TOKEN not in stored.data["content"] and "[REDACTED:" in stored.data["content"]
    memory.note_write("notes/design/api.md", "# API\nREST.", project="shop")
    memory.note_write("runbooks/oncall.md", "# On call", project="shop")
    memory.note_write("notes/deploy.md", "# Their deploy", project="other")

    assert [r.data["path"] for r in memory.note_list(project="shop")] == [
        "notes/deploy.md", "notes/design/api.md", "runbooks/oncall.md",
    ]  # fmt: skip
    assert [r.data["path"] for r in memory.note_list("notes/design", project="shop")] == [
        "notes/design/api.md"
    ]
    assert [r.data["title"] for r in memory.note_list("notes", project="shop")] == ["Deploy", "API"]
    assert len(memory.note_list(project="*")) == 4
    assert "content" not in memory.note_list(project="shop")[0].data
    assert memory.note_read("notes/deploy.md", project="other").data["content"] == "# Their deploy"


def test_notes_are_searched_with_everything_else(memory: Memory) -> None:
    memory.add("decision", "Deploy with blue-green switches", project="shop")
    note = memory.note_write(
        "runbooks/rollback.md",
        "# Rollback\nTo roll back a blue-green deploy, flip the router.",
        project="shop",
    )
    for mode in ("keyword", "hybrid", "semantic"):
        refs = [
            hit.ref for hit in memory.search("roll back blue-green deploy", mode=mode, project="shop").hits
        ]  # type: ignore[arg-type]
        assert str(note.ref) in refs, mode
    only = memory.search("rollback", mode="keyword", project="shop", kind="note").hits
    assert [hit.ref for hit in only] == [str(note.ref)] and only[0].extra["path"] == "runbooks/rollback.md"
    assert [hit.ref for hit in memory.search("rollback.md", mode="keyword", project="shop").hits] == [
        str(note.ref)
    ]
    assert memory.stats().counts["note"] == 1


def test_a_deleted_note_leaves_no_byte_on_disk(memory: Memory, db_path: Path) -> None:
    canary = plain_canary()
    memory.note_write("notes/secret-plan.md", f"# Plan\nthe word is {canary}", project="shop")
    memory.embed()
    report = memory.note_delete("notes/secret-plan.md", project="shop")
    assert report.found and report.deleted["note"] == 1
    assert leftovers(db_path.parent, canary) == {}
    assert memory.search(canary, mode="keyword", project="shop").hits == ()
    with pytest.raises(NotFound):
        memory.note_read("notes/secret-plan.md", project="shop")


def run(db: Path, *args: str, input: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], input=input)
    assert result.exit_code == code, result.output
    return result.output


def test_the_note_command(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    assert run(db, "note", "write", "notes/arch", "--project", "shop", "--file", "-", input=ARCH).startswith(
        "wrote notes/arch.md (note#1"
    )
    run(db, "note", "edit", "notes/arch.md", "## More", "--project", "shop")
    run(
        db,
        "note",
        "edit",
        "notes/arch.md",
        "--old",
        "thin edges",
        "--new",
        "thin layers",
        "--project",
        "shop",
    )
    assert run(db, "note", "read", "notes/arch.md", "--project", "shop").endswith(
        "thin layers: the CLI calls recall.Memory.\n## More\n"
    )
    refused = CliRunner().invoke(
        cli, ["--db", str(db), "note", "edit", "notes/arch.md", "--old", "e", "--project", "shop"]
    )
    assert refused.exit_code != 0 and "occurs" in refused.output
    data = json.loads(run(db, "note", "read", "notes/arch.md", "--project", "shop", "--json"))
    assert data["ref"] == "note#1" and data["frontmatter"]["owner"] == "ana"
    assert "notes/arch.md  Architecture" in run(db, "note", "list", "notes", "--project", "shop")
    assert "note#1" in run(db, "search", "thin layers", "--project", "shop", "--mode", "keyword")
    assert "forgotten" in run(db, "note", "delete", "notes/arch.md", "--project", "shop")
    missing = CliRunner().invoke(cli, ["--db", str(db), "note", "read", "notes/arch.md", "--project", "shop"])
    assert missing.exit_code != 0 and "no note at notes/arch.md" in missing.output


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_notes_through_a_real_mcp_client(db_path: Path) -> None:
    with anyio.fail_after(60), Memory(db_path, project="shop", embedder=FakeEmbedder()) as memory:
        async with Client(create_server(memory)) as client:

            async def call(tool: str, **arguments: object) -> dict:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
                assert result.structured_content is not None
                return result.structured_content

            wrote = await call("note_write", path="notes/architecture.md", content=ARCH)
            assert wrote["note"]["ref"] == "note#1" and wrote["note"]["title"] == "Architecture"
            await call("note_edit", path="notes/architecture.md", mode="append", content="## Next")
            await call("note_edit", path="notes/architecture.md", mode="prepend", content="<!-- top -->")
            swapped = await call(
                "note_edit",
                path="notes/architecture.md",
                mode="str_replace",
                old="One core",
                new="A single core",
            )
            assert (
                "---\n<!-- top -->\n# Overview" in swapped["note"]["content"]
                and "A single core" in swapped["note"]["content"]
            )
            twice = await client.call_tool(
                "note_edit", {"path": "notes/architecture.md", "mode": "str_replace", "old": "-", "new": "+"}
            )
            assert twice.is_error and "occurs" in twice.content[0].text  # type: ignore[union-attr]
            mixed = await client.call_tool(
                "note_edit", {"path": "notes/architecture.md", "mode": "append", "old": "x"}
            )
            assert mixed.is_error
            read = await call("note_read", path="notes/architecture.md")
            assert read["found"] and read["note"]["frontmatter"] == {"title": "Architecture", "owner": "ana"}
            listed = await call("note_list", folder="notes")
            assert [n["path"] for n in listed["notes"]] == ["notes/architecture.md"] and listed["notes"][0][
                "content"
            ] is None
            found = await call("memory_search", query="single core thin edges")
            assert found["results"][0]["ref"] == "note#1"
            gone = await call("note_delete", path="notes/architecture.md")
            assert gone["found"] and gone["ref"] == "note#1"
            assert (await call("note_read", path="notes/architecture.md"))["found"] is False
            assert (await call("note_delete", path="notes/architecture.md"))["found"] is False


def test_a_subagent_brief_quotes_the_notes_that_bear_on_its_task(memory: Memory) -> None:
    memory.add("decision", "Deploy with blue-green switches", project="shop")
    note = memory.note_write(
        "runbooks/rollback",
        "# Rollback\nTo roll back a blue-green deploy, flip the router back.",
        project="shop",
    )
    brief = memory.context_for_agent("roll back the blue-green deploy", project="shop")
    assert "### From the project's notes" in brief.text and f"[{note.ref}," in brief.text
    assert brief.text.index("Decisions in force") < brief.text.index("From the project's notes")


def test_notes_are_counted_rescrubbed_and_purged_with_their_project(memory: Memory) -> None:
    memory.note_write("notes/deploy.md", f"export GITHUB_TOKEN={TOKEN}", project="shop")
    memory.note_write("notes/keep.md", "kept", project="other")
    assert memory.redactions().rows_by_kind.get("note") == 1
    assert memory.rescrub().checked["note"] == 2
    assert memory.list("note", project="shop").records[0].data["path"] == "notes/deploy.md"
    assert memory.get("note#1").data["path"] == "notes/deploy.md"
    dry = memory.purge(project="shop", dry_run=True)
    assert dry.counts["note"] == 1 and memory.note_list(project="shop")
    memory.purge(project="shop")
    assert memory.note_list(project="shop") == [] and len(memory.note_list(project="other")) == 1


def test_a_note_written_without_the_model_waits_for_the_next_meaning_search(db_path: Path) -> None:
    with Memory(db_path, project="shop", embedder=FakeEmbedder(), embed_on_write=False) as memory:
        note = memory.note_write("runbooks/rollback.md", "# Rollback\nflip the router back")
        due = memory.store.connection.execute("SELECT kind_code, row_id FROM vectors_due").fetchall()
        assert [tuple(row) for row in due] == [(6, note.id)]
        hits = memory.search("flip the router back", mode="semantic").hits
        assert [hit.ref for hit in hits] == [str(note.ref)]
        assert memory.store.connection.execute("SELECT count(*) FROM vectors_due").fetchone()[0] == 0
