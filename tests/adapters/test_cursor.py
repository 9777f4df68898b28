"""The Cursor adapter against the recorded fixtures (all SYNTHETIC, see PROVENANCE.txt) and small
databases built here for the cases no fixture has: garbage values, locks, WAL files, big tool output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import adapters._sqlite as cursor_sqlite
from adapters import get_adapter
from adapters.base import ReadOptions
from adapters.cursor import ADAPTER, ROOTS_ENV
from recall.store.caps import scrub_then_cap
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "cursor"
BUILT = FIXTURES / "built-examples"
GLOBAL_DB = BUILT / "globalStorage" / "state.vscdb"
WORKSPACE_DB = BUILT / "workspaceStorage" / "9f3c0d1e2b7a4c55a1b2c3d4e5f60718" / "state.vscdb"
DOT_CURSOR = BUILT / "dot-cursor"
STORE_DB = (
    DOT_CURSOR
    / "chats"
    / "6dbbb30f665e606855d9d9bbd99b649a"
    / "d5c2d589-0000-4000-8000-000000000003"
    / "store.db"
)
SPLIT_ID = "5e6f7a8b-0000-4000-8000-000000000002"
INLINE_ID = "c0ffee00-0000-4000-8000-000000000001"
KEY_VALUES = json.loads((BUILT / "state-vscdb-key-values.json").read_text(encoding="utf-8"))
TXT_EXAMPLE = KEY_VALUES["ERA_D_cursor_3x_store_stack (~/.cursor)"][
    "older flat .txt transcript (agent-transcripts/<uuid>.txt)"
]


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def by_id(transcripts: list[Transcript]) -> dict[str, Transcript]:
    return {t.external_id: t for t in transcripts}


def utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def make_vscdb(
    path: Path, item: dict[str, object] | None = None, disk: dict[str, object] | None = None
) -> Path:
    """A state.vscdb with Cursor's real schema; dicts and lists are stored as JSON, None as NULL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        for table, rows in (("ItemTable", item or {}), ("cursorDiskKV", disk or {})):
            conn.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
            conn.executemany(
                f"INSERT INTO {table} VALUES (?, ?)",
                [(k, v if v is None or isinstance(v, str) else json.dumps(v)) for k, v in rows.items()],
            )
    conn.close()
    return path


def composer(
    composer_id: str, bubbles: dict[str, object], order: list[str] | None = None
) -> dict[str, object]:
    """cursorDiskKV rows of one split (era C) composer: its headers (``order``, default all) and bubbles."""
    headers = [{"bubbleId": bubble_id} for bubble_id in (order or bubbles)]
    rows: dict[str, object] = {
        f"composerData:{composer_id}": {"_v": 10, "fullConversationHeadersOnly": headers}
    }
    rows.update({f"bubbleId:{composer_id}:{bubble_id}": value for bubble_id, value in bubbles.items()})
    return rows


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``folder`` with its content hash and mtime: a new -wal or -journal shows too."""
    return {
        p.relative_to(folder).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# Era C: split composers in the global database.


def test_split_composer_follows_headers_and_keeps_host_facts() -> None:
    transcripts, report = read(GLOBAL_DB)

    assert [t.external_id for t in transcripts] == [SPLIT_ID, INLINE_ID]
    assert report.skipped == {}
    split = by_id(transcripts)[SPLIT_ID]
    assert [m.key for m in split.messages] == [
        "11111111-aaaa-4000-8000-000000000001",
        "22222222-bbbb-4000-8000-000000000002",
        "33333333-cccc-4000-8000-000000000003",
    ]
    assert [m.role for m in split.messages] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT]
    assert [m.kind for m in split.messages] == [MessageKind.TEXT, MessageKind.TOOL_CALL, MessageKind.TEXT]
    assert split.messages[0].text == "Add rate limiting to the API"
    assert split.messages[0].origin is Origin.HUMAN
    assert split.messages[0].timestamp == datetime(2025, 12, 15, 0, 54, 37, 300000, UTC)
    tool = split.messages[1]
    assert tool.tool_name == "run_terminal_cmd"
    assert tool.text == "run_terminal_cmd: npm ls express\n\nexpress@4.19.2"
    assert tool.meta["tool_call_id"] == "toolu_01ABC"
    assert tool.meta["server_bubble_id"] == "s-22222222"
    assert "framework" not in tool.text  # thinking is left out unless asked for
    assert split.messages[2].meta["output_tokens"] == 412
    assert split.host == "cursor"
    assert split.title == "Add rate limiting"
    assert split.cwd == "/Users/alice/code/demo-api"  # workspaceIdentifier.uri.fsPath
    assert split.model == "claude-4-sonnet"
    assert (split.started_at, split.ended_at) == (utc(1765760077237), utc(1765760433648))
    assert split.meta["summary"] == "User asked for rate limiting; agent added middleware."
    assert split.source_path == str(GLOBAL_DB)


def test_thinking_is_kept_only_when_asked_for() -> None:
    transcripts, _ = read(GLOBAL_DB, include_thinking=True)

    tool = by_id(transcripts)[SPLIT_ID].messages[1]
    assert tool.text.startswith("[thinking] Need to check which framework is used...\n\n")
    assert tool.kind is MessageKind.TOOL_CALL


def test_cursor_history_composer_matches_rows_by_inner_id_and_keys_empty_ids_by_index() -> None:
    transcripts, report = read(FIXTURES / "cursor-history" / "composer-global-state.vscdb")

    (session,) = transcripts
    assert session.external_id == "00000000-0016-4016-8016-000000000016"
    assert [m.key for m in session.messages] == [
        "native-user-016",
        "store:v1:transcript:70b01b53440d21e54871cbf4e978a2f9a7b50954d233c0cd9fa748a35c2beb3e:1",
        "fallback-assistant-016",
        "native-tool-read-016",
        "native-tool-search-016",
        "msg:6",
    ]
    assert [m.role.value for m in session.messages] == [
        "user",
        "assistant",
        "assistant",
        "assistant",
        "assistant",
        "user",
    ]
    assert session.messages[1].text == "Composer owns the synthetic collision identity."
    assert session.messages[3].tool_name == "read_file"
    assert session.messages[3].text.endswith("synthetic read result")
    assert report.skipped == {"null_value": 1}  # the header pointing at a NULL row
    assert session.cwd == "/fixture/v016/project"
    assert session.title == "Synthetic v0.16 Composer session"
    assert all(m.timestamp and m.timestamp.tzinfo is UTC for m in session.messages)


# Era B: the conversation inline in the composer record.


def test_inline_composer_takes_cwd_from_the_workspace_that_lists_it() -> None:
    session = by_id(read(GLOBAL_DB)[0])[INLINE_ID]

    assert [(m.key, m.role) for m in session.messages] == [("u-0001", Role.USER), ("a-0001", Role.ASSISTANT)]
    assert session.messages[0].text == "Split auth.ts into two modules"
    assert session.title == "Refactor auth"
    assert session.cwd == "/Users/alice/code/demo-app"  # from workspace.json, not the composer
    assert (session.started_at, session.ended_at) == (utc(1730000000000), utc(1730000600000))


def test_inline_composer_in_the_workspace_list_is_read(tmp_path: Path) -> None:
    conversation = [{"type": 1, "bubbleId": "", "text": "hello"}, {"type": 2, "text": "hi there"}]
    heads = {
        "allComposers": [
            {"composerId": "c1", "name": "Old", "conversation": conversation},
            {"composerId": "c2"},
        ]
    }
    db = make_vscdb(tmp_path / "ws" / "state.vscdb", item={"composer.composerData": heads})
    (db.parent / "workspace.json").write_text('{"folder": "file:///home/bo/my%20app"}')

    (session,), report = read(db)

    assert session.external_id == "c1"
    assert [m.key for m in session.messages] == ["msg:0", "msg:1"]
    assert session.cwd == "/home/bo/my app"
    assert report.skipped == {}


# Era A: the chat panel in a workspace database.


def test_legacy_chat_tab() -> None:
    (tab,), report = read(WORKSPACE_DB)

    assert report.skipped == {}
    assert tab.external_id == "7c1d2e3f-0000-4000-8000-00000000a001"
    assert tab.title == "Fix login bug"
    assert tab.cwd == "/Users/alice/code/demo-app"
    assert [(m.key, m.role) for m in tab.messages] == [("b-0001", Role.USER), ("b-0002", Role.ASSISTANT)]
    assert tab.messages[0].text == "Why does login fail on refresh?\n\n[image]"  # image path replaced
    assert tab.model == "gpt-4"
    assert tab.ended_at == utc(1712000000000)


def test_legacy_messages_variant_keys_missing_ids_by_index(tmp_path: Path) -> None:
    container = json.loads(
        (FIXTURES / "cursor-history" / "workspace-fallback.json").read_text(encoding="utf-8")
    )
    db = make_vscdb(tmp_path / "state.vscdb", item={"workbench.panel.aichat.view.aichat.chatdata": container})

    (tab,), report = read(db)

    assert report.skipped == {}
    assert tab.external_id == "00000000-0016-4016-8016-000000000016"
    assert tab.title == "Synthetic workspace fallback"
    assert [m.key for m in tab.messages] == ["workspace-native-016", "msg:1", "msg:2"]
    assert [m.role for m in tab.messages] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT]
    assert tab.messages[2].text == "Synthetic workspace empty-ID answer."
    assert [m.timestamp for m in tab.messages] == [utc(1705363201000), utc(1705363202000), utc(1705363203000)]
    assert (tab.started_at, tab.ended_at) == (utc(1705363200000), utc(1705363260000))
    assert tab.cwd is None  # no workspace.json beside it


# The Store stack and agent transcripts (~/.cursor).


def test_store_db_follows_the_blob_tree() -> None:
    (session,), report = read(STORE_DB)

    assert report.skipped == {}
    assert session.external_id == "d5c2d589-0000-4000-8000-000000000003"
    assert [m.role for m in session.messages] == [Role.USER, Role.ASSISTANT]
    assert session.messages[0].text == "Add rate limiting"  # <user_query> wrapper removed
    assert session.messages[1].text == "Added middleware.\n\nShell: npm test"
    assert session.messages[1].key == "529732feab6f430f0e8960eb29eb0a21079c2fb086fa83c669e2c7b835a148f0"
    assert (session.title, session.model, session.cwd) == (
        "Add rate limiting",
        "claude-4-sonnet",
        "/Users/alice/code/demo-api",
    )
    assert (session.started_at, session.ended_at) == (utc(1783737832293), utc(1783737833338))


def test_store_db_with_a_dangling_root_is_reported_empty() -> None:
    transcripts, report = read(FIXTURES / "agent-sessions" / "test-store.db")

    assert transcripts == []
    assert report.skipped == {"missing_blob": 1, "empty_session": 1}


TRANSCRIPTS = {  # file -> (roles in order, what was skipped)
    "agent-sessions/agent-transcripts/test-session.jsonl": ("uaauaa", {}),
    "agent-sessions/agent-transcripts/subagent-session.jsonl": ("uaa", {}),
    "agent-sessions/stage0/large.jsonl": ("uatauataua", {}),
    "agent-sessions/stage0/small.jsonl": ("uaua", {}),
    "agent-sessions/stage0/schema_drift.jsonl": ("uata", {}),
    "cursor-history/transcripts/with-tools.jsonl": ("ua", {}),
    "cursor-history/transcripts/user-only.jsonl": ("u", {}),
    "cursor-history/transcripts/multi-parts.jsonl": ("a", {}),
    "cursor-history/transcripts/error-line.jsonl": ("ua", {"host_error": 1}),
    "cursor-history/transcripts/error-only.jsonl": ("", {"host_error": 1, "empty_session": 1}),
    "cursor-history/transcripts/empty.jsonl": ("", {"empty_file": 1, "empty_session": 1}),
}


@pytest.mark.parametrize("name", TRANSCRIPTS, ids=lambda n: n.rsplit("/", 1)[-1])
def test_agent_transcript_counts_and_roles(name: str) -> None:
    roles, skipped = TRANSCRIPTS[name]

    transcripts, report = read(FIXTURES / name)

    assert "".join(m.role.value[0] for t in transcripts for m in t.messages) == roles
    assert report.skipped == skipped
    assert all(t.external_id == Path(name).stem for t in transcripts)


def test_agent_transcript_messages() -> None:
    (session,), _ = read(FIXTURES / "agent-sessions" / "agent-transcripts" / "test-session.jsonl")

    assert session.messages[0].text == "run ls command"
    assert session.messages[1].text == "Running the ls command for you.\n\nShell: ls -la /tmp"
    assert session.messages[1].tool_name == "Shell"
    assert [m.key.split(":")[0] for m in session.messages] == ["1", "2", "3", "4", "5", "6"]
    assert session.ended_at is not None and session.ended_at.tzinfo is UTC  # the file's mtime


def test_schema_drift_keeps_unknown_blocks_with_text_and_tool_results() -> None:
    (session,), report = read(FIXTURES / "agent-sessions" / "stage0" / "schema_drift.jsonl")

    assert (
        session.messages[1].text == "Cursor added an unknown block with visible text.\n\nread_file: build.log"
    )
    assert session.messages[2].kind is MessageKind.TOOL_RESULT
    assert session.messages[2].text == "Compile failed in Example.swift:42"
    assert session.model == "cursor-auto"
    assert report.skipped == {}


def test_transcript_takes_cwd_and_title_from_the_store_session() -> None:
    transcript = next(DOT_CURSOR.glob("projects/*/agent-transcripts/*/*.jsonl"))
    (session,), report = read(transcript)

    assert session.external_id == "d5c2d589-0000-4000-8000-000000000003"
    assert (session.cwd, session.title, session.model) == (
        "/Users/alice/code/demo-api",
        "Add rate limiting",
        "claude-4-sonnet",
    )
    assert [m.text for m in session.messages] == [
        "Add rate limiting",
        "Adding middleware.\n\nStrReplace: src/app.ts",
    ]
    assert report.skipped == {"host_error": 1}

    store_root = FIXTURES / "cursor-history" / "store-root" / "projects"
    (with_meta,), _ = read(next(store_root.glob("d-1-*/agent-transcripts/*/*.jsonl")))
    (without,), _ = read(next(store_root.glob("empty-window/agent-transcripts/*/*.jsonl")))
    assert with_meta.cwd == "/mnt/d/1_yuyu_proj/cursor-history"  # meta.json, never the folder name
    assert without.cwd is None


def test_subagent_transcript_is_linked_to_its_parent(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "p" / "agent-transcripts" / "parent-1" / "subagents" / "sub-9.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "agent-sessions" / "agent-transcripts" / "subagent-session.jsonl", path)

    (session,), _ = read(path)

    assert (session.external_id, session.parent_external_id, session.agent_id) == (
        "parent-1#agent-sub-9",
        "parent-1",
        "sub-9",
    )


def test_user_turn_made_only_of_host_context_is_injected(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {
            "role": "user",
            "message": {"content": [{"type": "text", "text": "<user_info>\nOS: linux\n</user_info>"}]},
        },
        {"role": "user", "message": {"content": "<rules>x</rules>\n<user_query>\nfix it\n</user_query>"}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    (session,), _ = read(path)

    assert [(m.text, m.origin) for m in session.messages] == [
        ("<user_info>\nOS: linux\n</user_info>", Origin.INJECTED),
        ("fix it", Origin.HUMAN),
    ]


def test_txt_transcript_blocks(tmp_path: Path) -> None:
    path = tmp_path / "agent-transcripts" / "t1.txt"
    path.parent.mkdir()
    path.write_text(TXT_EXAMPLE)

    (session,), report = read(path)
    (thinking_session,), _ = read(path, include_thinking=True)

    assert session.external_id == "t1"
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        (Role.USER, MessageKind.TEXT, "Add rate limiting"),
        (Role.ASSISTANT, MessageKind.TOOL_CALL, "Shell: npm ls express"),
        (Role.TOOL, MessageKind.TOOL_RESULT, "express@4.19.2"),
        (Role.ASSISTANT, MessageKind.TEXT, "Added middleware."),
    ]
    assert [m.key for m in session.messages] == ["2", "9", "11", "13"]  # first line of each block
    assert report.skipped == {"thinking_omitted": 1}
    assert thinking_session.messages[1].kind is MessageKind.THINKING
    assert thinking_session.messages[1].text == "check framework\n..."


# What every message is cut to.


def test_tool_output_is_cut_to_the_cap_with_a_marker(tmp_path: Path) -> None:
    output = "x" * 5000
    tool = {
        "name": "read_file",
        "params": json.dumps({"target_file": "a.py"}),
        "result": json.dumps({"contents": output}),
    }
    image = "data:image/png;base64," + "A" * 400
    bubbles = {"b1": {"type": 1, "text": f"look {image}"}, "b2": {"type": 2, "toolFormerData": tool}}
    db = make_vscdb(tmp_path / "state.vscdb", disk=composer("c1", bubbles))

    (session,), _ = read(db)
    (small,), _ = read(db, tool_text_cap=10)

    user, call = session.messages
    assert user.text == "look [image]"
    call_line = 'read_file: {"target_file": "a.py"}'
    assert call.text == f"{call_line}\n\n{'x' * 5000}"  # whole until the store has scrubbed it
    assert (
        scrub_then_cap(call.text, call.cuts).text
        == f"{call_line}\n\n{'x' * 2000}\n[… 3,000 more characters cut]"
    )
    cut = small.messages[1]
    assert (
        scrub_then_cap(cut.text, cut.cuts).text
        == f"{call_line[:10]}\n[… {len(call_line) - 10} more characters cut]\n\n{'x' * 10}\n[… 4,990 more characters cut]"
    )


# Bad input is counted, never raised.


def test_garbage_values_are_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    rows = {
        "composerData:null": None,
        "composerData:text": "not json {",
        "composerData:list": [1, 2],
        "composerData:future": {"_v": 99, "fullConversationHeadersOnly": "compressed"},
        "composerData:unused": {"_v": 10, "fullConversationHeadersOnly": []},
        **composer(
            "good",
            {
                "ok": {"type": 1, "text": "still here"},
                "nul": None,
                "bad": "{oops",
                "odd": {"type": 9, "text": "?"},
                "orphan": {"type": 2, "text": "an edit no header points at"},
            },
            order=["ok", "nul", "bad", "odd", "gone", "ok"],
        ),
    }
    db = make_vscdb(tmp_path / "state.vscdb", disk=rows)

    transcripts, report = read(db)

    assert [(t.external_id, [m.text for m in t.messages]) for t in transcripts] == [("good", ["still here"])]
    assert report.skipped == {
        "null_value": 2,
        "bad_json": 2,
        "unknown_shape": 3,
        "missing_bubble": 1,
        "duplicate_bubble": 1,
        "orphan_bubble": 1,
        "empty_session": 1,
    }


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty_file"),
        (b"this is no database at all" * 20, "not_a_database"),
        (GLOBAL_DB.read_bytes()[:6000], "corrupt_database"),
    ],
    ids=["empty", "not-sqlite", "truncated"],
)
def test_broken_database_files_are_skipped_with_a_reason(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "state.vscdb"
    path.write_bytes(content)

    transcripts, report = read(path)

    assert transcripts == []
    assert report.skipped == {reason: 1}
    assert str(path) in report.errors[0]


def test_database_without_cursor_tables_is_an_unknown_shape(tmp_path: Path) -> None:
    path = tmp_path / "state.vscdb"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE other (x)")
    conn.close()

    assert read(path)[1].skipped == {"unknown_shape": 1}


# Read-only: a live Cursor must keep working and nothing may change on disk.


def test_reading_changes_nothing_on_disk(tmp_path: Path) -> None:
    tree = shutil.copytree(BUILT, tmp_path / "built")
    before = snapshot(tree)
    sources = [*ADAPTER.discover([tree]), *tree.rglob("store.db")]

    transcripts = [t for source in sources for t in read(source)[0]]

    assert len(transcripts) == 5  # 2 global composers, 1 chat tab, the transcript and the store.db
    assert snapshot(tree) == before


def test_the_connection_refuses_to_write(tmp_path: Path) -> None:
    db = shutil.copy(GLOBAL_DB, tmp_path / "state.vscdb")

    with cursor_sqlite.open_readonly(db) as conn, pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("INSERT INTO ItemTable VALUES ('k', 'v')")


def test_closed_wal_database_is_read_without_leaving_wal_files(tmp_path: Path) -> None:
    db = tmp_path / "globalStorage" / "state.vscdb"
    db.parent.mkdir()
    shutil.copy(GLOBAL_DB, db)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=wal")
    conn.close()
    before = snapshot(tmp_path)
    assert list(before) == ["globalStorage/state.vscdb"]

    transcripts, report = read(db)

    assert len(transcripts) == 2 and report.skipped == {}
    assert snapshot(tmp_path) == before


def test_live_wal_database_is_read_while_cursor_writes(tmp_path: Path) -> None:
    db = make_vscdb(tmp_path / "state.vscdb", disk=composer("c1", {"b1": {"type": 1, "text": "committed"}}))
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=wal")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c2', '{}')")
    main_bytes = db.read_bytes()
    try:
        (session,), report = read(db)
        assert [m.text for m in session.messages] == ["committed"]  # the open write is not seen
        assert report.skipped == {}
        assert db.read_bytes() == main_bytes
        writer.execute("COMMIT")  # and Cursor can still commit
    finally:
        writer.close()


def test_locked_database_is_skipped_with_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cursor_sqlite, "BUSY_TIMEOUT_S", 0.05)
    db = tmp_path / "state.vscdb"
    shutil.copy(GLOBAL_DB, db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        before = snapshot(tmp_path)
        transcripts, report = read(db)
        assert transcripts == []
        assert report.skipped == {"locked": 1}
        assert report.errors == [
            f"{db}: database is locked: the host holds the database locked; the next import reads it"
        ]
        assert list(ADAPTER.discover([tmp_path])) == [db]  # discovery does not fail on it either
        assert snapshot(tmp_path) == before
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# Discovery and default locations.


def test_discover_yields_one_source_per_session() -> None:
    found = list(ADAPTER.discover([FIXTURES]))

    assert [p.name for p in found] == [
        "subagent-session.jsonl",
        "test-session.jsonl",
        "d5c2d589-0000-4000-8000-000000000003.jsonl",  # wins over the same session's store.db
        "state.vscdb",
        "state.vscdb",
        "aaaaaaaa-0000-0000-0000-000000000001.jsonl",
        "bbbbbbbb-0000-0000-0000-000000000002.jsonl",
    ]
    assert [p.parent.name for p in found if p.suffix == ".vscdb"] == [
        "globalStorage",
        WORKSPACE_DB.parent.name,
    ]


def test_discover_prefers_the_ide_composer_then_jsonl_over_txt(tmp_path: Path) -> None:
    user = tmp_path / "User"
    make_vscdb(user / "globalStorage" / "state.vscdb", disk=composer("c1", {"b1": {"type": 1, "text": "hi"}}))
    transcripts = tmp_path / ".cursor" / "projects" / "p" / "agent-transcripts"
    transcripts.mkdir(parents=True)
    for name in ("c1.jsonl", "c1.txt", "x2.jsonl", "x2.txt", "y3.txt"):
        (transcripts / name).write_text("")
    (tmp_path / ".cursor" / "extensions" / "agent-transcripts").mkdir(parents=True)
    (tmp_path / ".cursor" / "extensions" / "agent-transcripts" / "z.jsonl").write_text("")

    found = [p.relative_to(tmp_path).as_posix() for p in ADAPTER.discover([user, tmp_path / ".cursor"])]

    assert found == [
        ".cursor/projects/p/agent-transcripts/x2.jsonl",
        ".cursor/projects/p/agent-transcripts/y3.txt",
        "User/globalStorage/state.vscdb",
    ]


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("linux", ["xdg/Cursor/User", "home/.cursor-server/data/User", "home/.cursor"]),
        ("darwin", ["home/Library/Application Support/Cursor/User", "home/.cursor"]),
        ("win32", ["appdata/Cursor/User", "home/.cursor"]),
    ],
)
def test_default_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, expected: list[str]
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "appdata"))
    monkeypatch.delenv(ROOTS_ENV, raising=False)

    assert ADAPTER.default_roots() == [tmp_path / p for p in expected]


def test_roots_env_replaces_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROOTS_ENV, f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")

    assert ADAPTER.default_roots() == [tmp_path / "a", tmp_path / "b"]


def test_registered_under_its_host_name() -> None:
    assert get_adapter("cursor") is ADAPTER
    assert ADAPTER.name == "cursor"
