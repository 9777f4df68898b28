"""Connections end to end: real transcripts imported into a real database, then asked about.

The real Claude Code sessions (spotter: an Elixir project worked on in a worktree and in the main
checkout) and two real pi sessions rewritten as Claude Code lines (pi-mono: TypeScript, npm, git;
tests/fixtures/connections/PROVENANCE.txt) carry every entity type. Codex's real rollouts are
redacted, so its apply_patch and exec_command lines are written here in the documented shape.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters import get_adapter
from recall.connections import find_connections, knowledge_graph, row_entities
from recall.dump import dump_session
from recall.ingest import run_import
from recall.memory import Memory
from recall.models import RecordKind
from recall.store import NewRecord, RecordChanges, Store
from recall.store.entities import connect_pending
from recall.store.views import load_row
from recall.transcript import MessageKind, Origin, Role, ToolCall, Transcript, TranscriptMessage

FIXTURES = Path(__file__).parent / "fixtures"
SPOTTER = FIXTURES / "transcripts" / "claude-code" / "real" / "spotter"
PI = FIXTURES / "connections" / "pi-reshaped"
CURSOR = FIXTURES / "transcripts" / "cursor" / "built-examples"
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
SECRET = "ghp_" + "Zq8" * 12  # built at run time: the repository holds no literal token


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Spotter and pi-mono imported once; the tests below only read it."""
    with Store(tmp_path_factory.mktemp("real") / "recall.db") as store:
        summary = run_import(store, [get_adapter("claude")], paths=[SPOTTER, PI], embed_budget_seconds=0)
        assert summary.files_failed == 0 and summary.links > 0
        yield store


def links(store: Store, where: str = "1", *args: object) -> list[sqlite3.Row]:
    return store.connection.execute(
        "SELECT e.project, e.type, e.name, l.relation, l.session_id, l.message_id, l.detail, v.name AS via "
        "FROM entity_links l JOIN entities e ON e.id = l.entity_id LEFT JOIN entities v ON v.id = l.via_id "
        f"WHERE {where}",
        args,
    ).fetchall()


def count(store: Store, sql: str, *args: object) -> int:
    return int(store.connection.execute(sql, args).fetchone()[0])


def edit_calls(folder: Path) -> Iterator[tuple[str, str, str]]:
    """(tool_use id, file path, cwd) of every edit tool call in the raw transcript lines."""
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            content = (record.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block["name"] in EDIT_TOOLS
                ):
                    target = block["input"].get("file_path") or block["input"].get("notebook_path")
                    yield block["id"], target, record["cwd"]


# -- real transcripts -------------------------------------------------------------------------------


def test_every_file_a_session_edited_through_a_tool_call_is_connected_to_that_session(real: Store) -> None:
    calls = [*edit_calls(SPOTTER), *edit_calls(PI)]
    assert len(calls) == 177  # 40 spotter edits and writes, 137 pi-mono ones
    missing = []
    for tool_id, target, cwd in calls:
        expected = os.path.relpath(target, cwd) if target.startswith(cwd + "/") else target
        found = links(
            real,
            "e.type = 'file' AND l.relation = 'edited' AND e.name = ? AND l.session_id = "
            "(SELECT session_id FROM messages WHERE external_id = ?)",
            expected,
            f"call:{tool_id}",
        )
        if not found:
            missing.append((tool_id, expected))
    assert missing == []


def test_a_file_has_one_name_in_the_worktree_and_the_main_checkout(real: Store) -> None:
    # Real: the worktree session (spotter-worktrees/spotter-dov) edits assets/js/app.js, and a session
    # in /home/marco/projects/spotter reads it.
    rows = links(real, "e.type = 'file' AND e.name = 'assets/js/app.js'")
    cwds = {
        real.connection.execute("SELECT cwd FROM sessions WHERE id = ?", (row["session_id"],)).fetchone()[0]
        for row in rows
    }
    assert cwds == {"/home/USER/projects/spotter-worktrees/spotter-dov", "/home/marco/projects/spotter"}
    assert {row["relation"] for row in rows} >= {"edited", "read"}
    assert count(real, "SELECT count(*) FROM entities WHERE name LIKE '%app.js'") == 1


def test_each_entity_type_is_read_from_real_transcripts(real: Store) -> None:
    found = {(r["type"], r["name"], r["relation"], r["via"]) for r in links(real)}
    expected = {
        # spotter: an Elixir module the session wrote, the command that failed and why, a page it fetched
        (
            "symbol",
            "SpotterWeb.Live.TranscriptComputers",
            "edited",
            "lib/spotter_web/live/transcript_computers.ex",
        ),
        ("command", "git push", "ran", None),
        ("command", "git push", "failed_on", None),
        ("error", "fatal: The current branch spotter-dov has no upstream branch.", "failed_on", "git push"),
        ("url", "https://github.com/xtermjs/xterm.js/issues/1343", "read", None),
        ("host", "github.com", "read", None),
        # pi-mono: a TypeScript function the session added, a package its edit imports, a type error
        ("symbol", "highlightCode", "edited", "packages/coding-agent/src/core/export-html.ts"),
        ("package", "highlight.js", "imported", "packages/coding-agent/src/core/export-html.ts"),
        ("command", "npm run check", "ran", None),
        ("error", "error TS2322: Type '…' is not assignable to type '…'.", "failed_on", "npm run check"),
        ("file", "packages/coding-agent/README.md", "edited", None),
        ("file", "mix.exs", "read", None),
    }
    assert expected <= found
    types = {r["type"] for r in links(real)}
    assert types == {"file", "symbol", "package", "command", "error", "host", "url"}


def test_messages_mention_files_in_their_text_but_injected_context_does_not_count(real: Store) -> None:
    # Messages only: an extracted record's mentions are the record's, not a message's.
    mentioned = links(real, "l.relation = 'mentions' AND e.type = 'file' AND l.message_id IS NOT NULL")
    assert mentioned
    origins = {
        real.connection.execute("SELECT origin FROM messages WHERE id = ?", (row["message_id"],)).fetchone()[
            0
        ]
        for row in mentioned
    }
    assert origins <= {"human", "agent"}


def test_a_command_keeps_its_full_text_on_the_link(real: Store) -> None:
    (row,) = links(real, "e.name = 'git push' AND l.relation = 'failed_on' AND e.project = 'spotter'")
    assert row["detail"] == "exit 128: git push 2>&1"


# -- find_connections, the graph, a row's entities --------------------------------------------------


def test_connections_of_a_file_name_its_sessions_and_what_was_seen_with_it(real: Store) -> None:
    found = find_connections(real, "session_live.ex", "spotter")
    assert [e.name for e in found.entities] == ["lib/spotter_web/live/session_live.ex"]
    assert found.sessions and found.sessions[0].did.get("edited", 0) > 0
    last = [s.last_at for s in found.sessions]
    assert last == sorted(last, reverse=True)
    hows = {(r.how, r.entity.name) for r in found.related}
    assert ("defines", "handle_event") in hows
    assert ("edited_with", "lib/spotter_web/live/subagent_live.ex") in hows
    # A path from another machine or checkout names the same file.
    absolute = "/home/someone/code/spotter/lib/spotter_web/live/session_live.ex"
    assert find_connections(real, absolute, None).entities == found.entities
    assert find_connections(real, "session_live.ex", "pi-mono").entities == ()


def test_connections_of_a_command_and_an_error(real: Store) -> None:
    push = find_connections(real, "git", "spotter")  # a program names all of its commands
    assert "git push" in {e.name for e in push.entities}
    error = find_connections(real, "fatal", "spotter")
    assert [r.entity.name for r in error.related if r.how == "from_command"] == ["git push"]


def test_the_graph_pages_through_a_projects_entities(real: Store) -> None:
    first = knowledge_graph(real, "spotter", limit=10)
    assert first.total_entities > 10 and first.next_offset == 10
    second = knowledge_graph(real, "spotter", limit=10, offset=10)
    ids = {n["id"] for n in first.nodes if n["kind"] == "entity"}
    assert ids.isdisjoint(n["id"] for n in second.nodes if n["kind"] == "entity")
    nodes = {n["id"] for n in first.nodes}
    assert all(e["source"] in nodes and e["target"] in nodes for e in first.edges)
    capped = knowledge_graph(real, "spotter", limit=50, max_edges=5)
    assert len(capped.edges) == 5 and capped.truncated_edges
    files = knowledge_graph(real, "spotter", limit=500, types=["file"])
    assert {n["type"] for n in files.nodes if n["kind"] == "entity"} == {"file"} and files.next_offset is None


def test_a_sessions_view_lists_its_entities(real: Store) -> None:
    session_id = real.connection.execute(
        "SELECT id FROM sessions WHERE cwd = '/home/USER/projects/spotter-worktrees/spotter-dov' "
        "AND parent_id IS NULL"
    ).fetchone()[0]
    row = load_row(real, "session", session_id)
    assert {"type": "command", "name": "git push", "relation": "failed_on"}.items() <= next(
        e for e in row["entities"] if e["name"] == "git push" and e["relation"] == "failed_on"
    ).items()
    summary_id = real.connection.execute(
        "SELECT id FROM session_summaries WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    assert row_entities(real, "session_summary", summary_id) == row["entities"]


def test_stats_count_entities_per_type(real: Store) -> None:
    counted = real.stats()["entities"]
    assert set(counted) == {"file", "symbol", "package", "command", "error", "host", "url"}
    assert counted["file"] == count(real, "SELECT count(*) FROM entities WHERE type = 'file'") > 0


# -- other hosts ------------------------------------------------------------------------------------


def codex_rollout(folder: Path, cwd: str) -> Path:
    """A Codex rollout in the envelope shape (transcript-formats.md §4): a patch, a read, a failed test."""
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@ def handler(request):\n-    return 1\n"
        "+    return helper()\n+def helper():\n+    import httpx\n*** End Patch"
    )
    items = [
        ("session_meta", {"id": "0195a1b2-0000-7000-8000-0000000000c1", "timestamp": "2026-03-01T10:00:00Z",
                          "cwd": cwd, "originator": "codex_cli_rs"}),
        ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": patch}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}),
        ("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c2",
                           "arguments": json.dumps({"cmd": "sed -n '1,40p' app.py", "workdir": f"{cwd}/src"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c2", "output": "def handler(..."}),
        ("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c3",
                           "arguments": json.dumps({"cmd": "uv run pytest -q tests/test_app.py"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c3", "output": (
            "Chunk ID: 9\nWall time: 1.2s\nProcess exited with code 1\nOutput:\nTraceback (most recent call last):"
            "\n  File \"src/app.py\", line 3\nModuleNotFoundError: No module named 'httpx'\n")}),
    ]  # fmt: skip
    path = folder / "rollout-2026-03-01T10-00-00-0195a1b2-0000-7000-8000-0000000000c1.jsonl"
    lines = [
        {"timestamp": f"2026-03-01T10:00:0{i}Z", "type": kind, "payload": p}
        for i, (kind, p) in enumerate(items)
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_codex_patches_reads_and_failures_are_connected(store: Store, tmp_path: Path) -> None:
    run_import(
        store, [get_adapter("codex")], paths=[codex_rollout(tmp_path, "/home/a/shop")], embed_budget_seconds=0
    )
    found = {(r["type"], r["name"], r["relation"], r["via"]) for r in links(store)}
    assert {
        ("file", "src/app.py", "edited", None),
        ("symbol", "handler", "edited", "src/app.py"),  # the hunk header
        ("symbol", "helper", "edited", "src/app.py"),  # a definition the patch added
        ("package", "httpx", "imported", "src/app.py"),
        ("file", "src/app.py", "read", "sed"),  # sed -n in the call's own workdir
        ("command", "pytest", "failed_on", None),
        ("error", "ModuleNotFoundError: No module named '…'", "failed_on", "pytest"),
    } <= found


def test_cursor_tool_calls_are_connected(store: Store) -> None:
    run_import(store, [get_adapter("cursor")], paths=[CURSOR], embed_budget_seconds=0)
    assert ("demo-api", "command", "npm ls", "ran") in {
        (r["project"], r["type"], r["name"], r["relation"]) for r in links(store)
    }


# -- incremental, idempotent, dry runs, dumps ------------------------------------------------------


def test_import_is_incremental_and_idempotent(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "spotter"
    folder.mkdir(parents=True)
    source = SPOTTER / "short.jsonl"
    copy = folder / source.name
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    copy.write_text("".join(lines[:half]), encoding="utf-8")
    claude = [get_adapter("claude")]
    run_import(store, claude, paths=[folder], embed_budget_seconds=0)
    first = count(store, "SELECT count(*) FROM entity_links")
    mark = count(store, "SELECT max(message_id) FROM entity_scans")
    again = run_import(store, claude, paths=[folder], force=True, embed_budget_seconds=0)
    assert again.links == 0 and count(store, "SELECT count(*) FROM entity_links") == first
    copy.write_text("".join(lines), encoding="utf-8")  # the session grew
    grown = run_import(store, claude, paths=[folder], embed_budget_seconds=0)
    assert grown.messages_added > 0 and grown.links > 0
    assert count(store, "SELECT count(*) FROM entity_links") == first + grown.links
    assert count(store, "SELECT count(*) FROM entity_links WHERE message_id <= ?", mark) == first
    fresh = tmp_path / "fresh.db"
    with Store(fresh) as whole:  # the same file read at once: the same links
        run_import(whole, claude, paths=[folder], embed_budget_seconds=0)
        assert count(whole, "SELECT count(*) FROM entity_links") == first + grown.links


def test_a_dry_run_connects_nothing(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], dry_run=True)
    assert count(store, "SELECT count(*) FROM entity_links") == 0
    assert count(store, "SELECT count(*) FROM entities") == 0


def test_a_dump_connects_its_messages(store: Store) -> None:
    messages = [
        {"role": "user", "content": "Why does src/billing/invoice.py fail with this?\nKeyError: 'total'"},
        {"role": "assistant", "content": "See https://docs.python.org/3/library/exceptions.html#KeyError."},
    ]
    done = dump_session(
        store, title="billing", source="mcp", project="shop", messages=messages, cwd="/w/shop"
    )
    found = {(r["type"], r["name"]) for r in links(store, "l.session_id = ?", done.session_id)}
    assert {
        ("file", "src/billing/invoice.py"),
        ("error", "KeyError: '…'"),
        ("url", "https://docs.python.org/3/library/exceptions.html"),
        ("host", "docs.python.org"),
    } <= found


def test_sessions_stored_before_connections_are_connected_from_their_stored_text(
    real: Store, tmp_path: Path
) -> None:
    copy = tmp_path / "old.db"
    shutil.copy(real.path, copy)
    with Store(copy) as old:
        expected = {(r["type"], r["name"]) for r in links(old, "l.relation = 'edited' AND e.type = 'file'")}
        with old.transaction():  # as if the database predated migration 6
            old.connection.execute("DELETE FROM entity_links")
            old.connection.execute("DELETE FROM entity_scans")
        assert old.stats()["sessions_unconnected"] > 0
        assert connect_pending(old) > 0
        assert old.stats()["sessions_unconnected"] == 0
        # The one-line gist of each stored call still names the file it edited.
        assert {
            (r["type"], r["name"]) for r in links(old, "l.relation = 'edited' AND e.type = 'file'")
        } == expected


# -- records ----------------------------------------------------------------------------------------


def test_a_record_is_connected_to_what_it_names_and_reconnected_when_corrected(
    real: Store, tmp_path: Path
) -> None:
    shutil.copy(real.path, tmp_path / "r.db")
    with Store(tmp_path / "r.db") as store:
        decision = store.add(
            NewRecord(
                RecordKind.DECISION,
                "Keep transcript rendering in session_live.ex thin; `handle_event` only dispatches",
                "spotter",
                detail="See https://hexdocs.pm/phoenix_live_view for the callbacks.",
            )
        )
        found = {(r["type"], r["name"]) for r in links(store, "l.decision_id = ?", decision)}
        assert {
            ("file", "lib/spotter_web/live/session_live.ex"),  # the base name resolved to the one file
            ("symbol", "handle_event"),  # a known symbol written as code
            ("host", "hexdocs.pm"),
        } <= found
        connections = find_connections(store, "lib/spotter_web/live/session_live.ex", "spotter")
        assert [d.id for d in connections.decisions] == [decision]
        store.update(
            RecordKind.DECISION, decision, RecordChanges(content="Render in transcript_components.ex")
        )
        assert {r["name"] for r in links(store, "l.decision_id = ? AND e.type = 'file'", decision)} == {
            "lib/spotter_web/components/transcript_components.ex"
        }


# -- forgetting -------------------------------------------------------------------------------------


def test_forgetting_a_record_removes_its_links_and_entities_left_alone(memory: Memory, store: Store) -> None:
    learning = store.add(NewRecord(RecordKind.LEARNING, "docs/onboarding.md is out of date", "shop"))
    assert count(store, "SELECT count(*) FROM entities WHERE name = 'docs/onboarding.md'") == 1
    memory.forget(f"learning#{learning}")
    assert count(store, "SELECT count(*) FROM entity_links") == 0
    assert count(store, "SELECT count(*) FROM entities") == 0


def test_deleting_a_session_or_a_message_removes_their_links(real: Store, tmp_path: Path) -> None:
    shutil.copy(real.path, tmp_path / "f.db")
    with Store(tmp_path / "f.db") as store:
        session_id = store.connection.execute(
            "SELECT session_id FROM entity_links l JOIN entities e ON e.id = l.entity_id "
            "WHERE e.name = 'git push' AND e.project = 'spotter' LIMIT 1"
        ).fetchone()[0]
        message_id = store.connection.execute(
            "SELECT message_id FROM entity_links WHERE session_id != ? LIMIT 1", (session_id,)
        ).fetchone()[0]
        with store.transaction():  # any forget path: the rows go, their links follow by foreign key
            store.connection.execute("DELETE FROM messages WHERE id = ?", (message_id,))
            store.connection.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        assert count(store, "SELECT count(*) FROM entity_links WHERE session_id = ?", session_id) == 0
        assert count(store, "SELECT count(*) FROM entity_links WHERE message_id = ?", message_id) == 0
        assert count(store, "SELECT count(*) FROM entity_scans WHERE session_id = ?", session_id) == 0
        # Only the worktree session ran git push in spotter: the command went with it.
        assert (
            count(store, "SELECT count(*) FROM entities WHERE name = 'git push' AND project = 'spotter'") == 0
        )
        orphans = "SELECT count(*) FROM entities WHERE id NOT IN (SELECT entity_id FROM entity_links)"
        assert count(store, orphans) == 0


# -- the write path ---------------------------------------------------------------------------------


def test_entity_names_and_link_details_are_scrubbed(store: Store, db_path: Path) -> None:
    # A tool call's arguments reach the connect stage as the host wrote them, before any scrubbing.
    command = f"curl -H 'Authorization: token {SECRET}' https://api.example.com/v1/items/{SECRET}/list"
    calls = [ToolCall("Bash", {"command": command}), ToolCall("WebFetch", {"url": f"https://x.io/{SECRET}"})]
    messages = tuple(
        TranscriptMessage(f"call:{n}", Role.ASSISTANT, f"{call.name}: …", kind=MessageKind.TOOL_CALL,
                          origin=Origin.AGENT, tool_name=call.name, tool_calls=(call,))
        for n, call in enumerate(calls)
    )  # fmt: skip
    store.import_transcripts([Transcript("claude", "s-1", messages, cwd="/w/shop")])
    conn = sqlite3.connect(db_path)
    dumped = [
        repr(row) for table in ("entities", "entity_links") for row in conn.execute(f"SELECT * FROM {table}")
    ]
    conn.close()
    assert dumped and SECRET not in "\n".join(dumped)
    assert count(store, "SELECT count(*) FROM entity_links WHERE detail LIKE '%[REDACTED:%'") == 1
    assert count(store, "SELECT count(*) FROM entities WHERE type = 'url' AND name LIKE '%[REDACTED:%'") == 1
    assert count(store, "SELECT count(*) FROM entities WHERE type = 'command' AND name = 'curl'") == 1
