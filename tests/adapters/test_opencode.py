"""The OpenCode reader against every storage era and against hand-made damage.

The built-from-source fixtures hold one story in three containers (tests/fixtures/transcripts/opencode/
PROVENANCE.txt). Worked out from the part files: the parent session holds 2 prompts (the synthetic
file-read parts and the file part add nothing), 3 assistant texts, 4 tool calls with 4 results (task,
edit, a write that failed, bash), 1 patch and the compaction summary = 15; the @explore subagent holds
its prompt (written by the calling agent), 1 answer, 1 grep call and its result = 4.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adapters import get_adapter, opencode
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "opencode"
BUILT = FIXTURES / "synthetic" / "built-from-source"
JSON_DATA = BUILT / "v1.1-json" / "opencode"
DB = BUILT / "v1.2-sqlite" / "opencode" / "opencode.db"
GO_DB = BUILT / "go-opencode-ai" / "retry-service" / ".opencode" / "opencode.db"
STAGE0 = FIXTURES / "schema-fixtures" / "agent-sessions"
PARENT, CHILD = "ses_4a6e1d0f7ffeV3kQ9tLmB2xZcR", "ses_4a6e0b1c2ffe8HwPq5DnY7uJsK"
ADAPTER = get_adapter("opencode")

U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM
HUMAN, AGENT, TOOL, INJ, COMP = Origin.HUMAN, Origin.AGENT, Origin.TOOL, Origin.INJECTED, Origin.COMPACTION
TEXT, CALL, RESULT = MessageKind.TEXT, MessageKind.TOOL_CALL, MessageKind.TOOL_RESULT
STORY = {
    PARENT: {(U, HUMAN, TEXT): 2, (A, AGENT, TEXT): 3, (A, AGENT, CALL): 4, (T, TOOL, RESULT): 5, (A, COMP, TEXT): 1},
    CHILD: {(U, AGENT, TEXT): 1, (A, AGENT, TEXT): 1, (A, AGENT, CALL): 1, (T, TOOL, RESULT): 1},
}  # fmt: skip


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def shape(transcript: Transcript) -> Counter[tuple[Role, Origin, MessageKind]]:
    return Counter((m.role, m.origin, m.kind) for m in transcript.messages)


def sessions(paths: list[Path]) -> dict[str, Transcript]:
    found: dict[str, Transcript] = {}
    for path in paths:
        transcripts, report = read(path)
        assert not report.skipped, report.errors
        found.update((t.external_id, t) for t in transcripts)
    return found


@pytest.mark.parametrize("era", ["json", "sqlite"])
def test_the_json_and_sqlite_eras_read_as_the_same_story(era: str) -> None:
    root = JSON_DATA if era == "json" else DB
    found = sessions(list(ADAPTER.discover([root])))

    assert {key: Counter(value) for key, value in STORY.items()} == {k: shape(t) for k, t in found.items()}
    parent, child = found[PARENT], found[CHILD]
    assert (parent.cwd, parent.title, parent.model) == (
        "/home/dev/projects/invoice-api", "Fix CSV export dropping negative amounts", "claude-sonnet-4-5")  # fmt: skip
    assert (child.parent_external_id, child.agent_id) == (PARENT, "explore")
    by_key = {m.key: m for m in parent.messages}
    assert by_key["result:toolu_01SynthWriteCall0004"].text.startswith("error: Error: You must read the file")
    assert by_key["result:toolu_01SynthTaskCall0001"].meta["child_session"] == CHILD
    assert (
        by_key["patch:prt_b5e0f7e15001Pt1"].text == "patch: /home/dev/projects/invoice-api/src/export/csv.ts"
    )
    assert "<file>" not in " ".join(m.text for m in parent.messages)  # synthetic parts stay out


def test_both_eras_give_identical_keys_and_texts() -> None:
    """The 1.2 migration takes ids from file names, so a session read from both is stored once."""
    from_json = sessions(list(ADAPTER.discover([JSON_DATA])))
    from_db = sessions([DB])

    for session_id in (PARENT, CHILD):
        assert [(m.key, m.text) for m in from_json[session_id].messages] == [
            (m.key, m.text) for m in from_db[session_id].messages
        ]


def test_the_go_era_database(tmp_path: Path) -> None:
    found = sessions([GO_DB])

    assert sorted(found) == [
        "5d2b9c0e-7a41-4f6e-9b3d-1c8e2f4a6b70",
        "toolu_01GoEraAgentTool0001",
    ]  # no title-*
    parent, child = found["5d2b9c0e-7a41-4f6e-9b3d-1c8e2f4a6b70"], found["toolu_01GoEraAgentTool0001"]
    assert shape(parent) == Counter({(U, HUMAN, TEXT): 1, (A, AGENT, TEXT): 2, (A, AGENT, CALL): 1,
                                     (T, TOOL, RESULT): 1})  # fmt: skip
    assert shape(child) == Counter({(U, AGENT, TEXT): 1, (A, AGENT, TEXT): 1})
    assert parent.cwd == str(GO_DB.parent.parent) and child.parent_external_id == parent.external_id
    assert str(parent.started_at) == "2025-05-30 10:13:20+00:00"  # seconds, not milliseconds


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ("storage_v2", {"s_stage0_small": 4, "s_stage0_large": 7}),
        ("storage_legacy", {"s_stage0_drift": 3}),
    ],
)
def test_loose_third_party_shapes_read(tree: str, expected: dict[str, int]) -> None:
    """storage_v2 small: prompt, bash call+result, answer; large: 2 prompts, bash call+result, a patch,
    the aborted step's error note and "Ok" (its synthetic text part is left out); storage_legacy: a
    prompt with no parts, then bash call+result (status "success") and an answer, parts loose in part/."""
    found = sessions(list(ADAPTER.discover([STAGE0 / tree])))

    assert {key: len(t.messages) for key, t in found.items()} == expected


def test_a_json_session_a_database_beside_it_holds_is_left_to_the_database(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(JSON_DATA, data)
    dropped = data / "storage" / "session" / "8c2f5e1a9b7d4c3e2f1a0b9c8d7e6f5a4b3c2d1e" / f"{CHILD}.json"
    shutil.copy(DB, data / "opencode.db")
    with sqlite3.connect(data / "opencode.db") as conn:  # the migration dropped the subagent's session
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM session WHERE id = ?", (CHILD,))

    assert list(ADAPTER.discover([data])) == [data / "opencode.db", dropped]


def test_a_part_rewritten_in_place_changes_the_signature_and_nothing_else_does(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(JSON_DATA, data)
    session = next(data.glob(f"storage/session/*/{PARENT}.json"))
    part = next(data.glob("storage/part/msg_b5e0fbb07001Qs2MkP8dVx4HnE/prt_b5e0fbb0b001Tx9.json"))
    before = ADAPTER.signature(session)

    assert ADAPTER.signature(session) == before
    assert ADAPTER.signature(DB) is None  # a database is signed by the importer (file and -wal)
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 5_000_000_000))
    assert ADAPTER.signature(session) != before


def two_x_database(path: Path) -> Path:
    """A 1.2 database upgraded to 2.x: its v1 rows frozen, new turns in ``session_message``."""
    shutil.copy(DB, path)
    rows = [
        ("msg_v2_0001", "user", 1, {"text": "Now make the export stream rows.", "time": {"created": 1769000000000}}),
        ("msg_v2_0002", "assistant", 2, {
            "agent": "build", "model": {"id": "claude-sonnet-4-5", "providerID": "anthropic"},
            "time": {"created": 1769000001000, "completed": 1769000009000},
            "content": [
                {"type": "reasoning", "id": "r1", "text": "Use a generator."},
                {"type": "tool", "id": "call_v2_1", "name": "edit",
                 "state": {"status": "completed", "input": {"filePath": "src/export/csv.ts"},
                           "content": [{"type": "text", "text": "Edit applied successfully."}]},
                 "time": {"created": 1769000002000}},
                {"type": "tool", "id": "call_v2_2", "name": "bash",
                 "state": {"status": "running", "input": {"command": "bun test"}}, "time": {"created": 1769000003000}},
                {"type": "text", "id": "t1", "text": "toCsv now yields rows one by one."},
                {"type": "text", "id": "t2", "text": "(switched model)", "synthetic": True},
            ]}),
        ("msg_v2_0003", "model-switched", 3, {"model": {"id": "x"}, "time": {"created": 1769000010000}}),
        ("msg_v2_0004", "shell", 4, {"callID": "sh1", "command": "git status", "output": "clean",
                                     "time": {"created": 1769000011000}}),
        ("msg_v2_0005", "compaction", 5, {"reason": "auto", "summary": "Streaming export done.", "recent": "",
                                          "time": {"created": 1769000012000}}),
        ("msg_v2_0006", "hologram", 6, {"time": {"created": 1769000013000}}),
    ]  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL, "
            "seq integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (i, PARENT, kind, seq, d["time"]["created"], d["time"]["created"], json.dumps(d))
                for i, kind, seq, d in rows
            ],
        )
    return path


def test_the_2x_event_table_adds_its_turns_after_the_frozen_ones(tmp_path: Path) -> None:
    [*_, parent], report = read(two_x_database(tmp_path / "opencode.db"))

    assert report.skipped == Counter({"unknown_type:session_message/hologram": 1})
    added = [(m.role, m.origin, m.kind, m.text) for m in parent.messages[15:]]
    assert added == [
        (U, HUMAN, TEXT, "Now make the export stream rows."),
        (A, AGENT, TEXT, "toCsv now yields rows one by one."),
        (A, AGENT, CALL, "edit: src/export/csv.ts"),
        (T, TOOL, RESULT, "Edit applied successfully."),
        (A, AGENT, CALL, "bash: bun test"),  # still running: no result yet
        (U, HUMAN, CALL, "bash: git status"),
        (T, TOOL, RESULT, "clean"),
        (A, COMP, TEXT, "Streaming export done."),
    ]


def test_damaged_files_and_rows_are_counted_and_the_rest_reads(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(JSON_DATA, data)
    session = next(data.glob(f"storage/session/*/{PARENT}.json"))
    (data / "storage" / "message" / PARENT / "msg_zz_garbage.json").write_bytes(b"{not json")
    torn = next(data.glob("storage/part/msg_b5e0fb9a2001Ar5YhN3qTe6LwD/*.json"))
    torn.write_bytes(torn.read_bytes()[:40])  # caught while OpenCode rewrites it
    database = tmp_path / "opencode.db"
    shutil.copy(DB, database)
    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE part SET data = CAST(? AS BLOB) WHERE id = 'prt_b5e0f3d69001Tx6'",
                     (b'{"type": "text", "text": "caf\xe9"}',))  # fmt: skip
        conn.execute("UPDATE message SET data = '[1, 2]' WHERE id = 'msg_b5e0fb9a2001Ar5YhN3qTe6LwD'")
    not_a_db = tmp_path / "opencode-beta.db"
    not_a_db.write_bytes(b"this is not a database")

    [parent], json_report = read(session)
    from_db, db_report = read(database)
    assert read(not_a_db)[1].skipped == Counter({"not_a_database": 1})

    assert json_report.skipped == Counter({"bad_json": 2})
    assert len(parent.messages) == 14  # the torn prompt waits for the next read
    assert db_report.skipped == Counter({"bad_json": 1})  # the message row; the part decodes with U+FFFD
    child = next(t for t in from_db if t.external_id == CHILD)
    assert "caf\ufffd" in [m.text for m in child.messages]


def test_where_opencode_keeps_its_data(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv(opencode.DB_ENV, raising=False)
    project = tmp_path / "retry-service" / "src"
    project.mkdir(parents=True)
    (project.parent / ".opencode").mkdir()
    shutil.copy(GO_DB, project.parent / ".opencode" / "opencode.db")
    monkeypatch.chdir(project)
    default = user_home / ".local" / "share" / "opencode"
    default.mkdir(parents=True)
    assert ADAPTER.default_roots() == [default, project.parent / ".opencode" / "opencode.db"]

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "opencode").mkdir(parents=True)
    shutil.copy(DB, tmp_path / "xdg" / "opencode" / "opencode-beta.db")
    monkeypatch.setenv(opencode.DB_ENV, "elsewhere/opencode.db")
    (tmp_path / "xdg" / "opencode" / "elsewhere").mkdir()
    shutil.copy(DB, tmp_path / "xdg" / "opencode" / "elsewhere" / "opencode.db")
    assert (
        opencode.configured_database(opencode.data_dir()) == tmp_path / "xdg/opencode/elsewhere/opencode.db"
    )
    assert [p.relative_to(tmp_path) for p in ADAPTER.discover()] == [
        Path("retry-service/.opencode/opencode.db"),
        Path("xdg/opencode/elsewhere/opencode.db"),
        Path("xdg/opencode/opencode-beta.db"),
    ]


def test_one_session_and_its_subagent_are_found_by_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    shutil.copytree(DB.parent, tmp_path / "opencode")
    report = ParseReport()

    found = ADAPTER.read_session(PARENT, ReadOptions(), report)
    assert sorted(t.external_id for t in found) == [CHILD, PARENT]
    assert [t.external_id for t in ADAPTER.read_session(CHILD, ReadOptions(), report)] == [CHILD]
    assert ADAPTER.read_session("ses_unknown", ReadOptions(), report) == []


def export_of(session_id: str, target: Path) -> Path:
    """What ``opencode export <id>`` prints for a session of the JSON fixture: ``{info, messages:
    [{info, parts}], todos}`` built from the same records (cli/cmd/export.ts)."""
    storage = JSON_DATA / "storage"
    info = json.loads(next(storage.glob(f"session/*/{session_id}.json")).read_text())
    messages = []
    for message_file in sorted((storage / "message" / session_id).glob("*.json")):
        parts = [
            json.loads(p.read_text()) for p in sorted((storage / "part" / message_file.stem).glob("*.json"))
        ]
        messages.append({"info": json.loads(message_file.read_text()), "parts": parts})
    target.write_text(json.dumps({"info": info, "messages": messages, "todos": []}, indent=2) + "\n")
    return target


def test_an_opencode_export_reads_as_the_session_it_came_from(tmp_path: Path) -> None:
    exported = export_of(PARENT, tmp_path / "fix-csv-export.json")
    [transcript], report = read(exported)

    assert not report.skipped and ADAPTER.claims(exported)
    assert shape(transcript) == Counter(STORY[PARENT])
    stored = sessions([DB])[PARENT]
    assert [(m.key, m.text) for m in transcript.messages] == [(m.key, m.text) for m in stored.messages]
    (tmp_path / "notes.json").write_text('{"info": {"title": "not an export"}}')
    assert not ADAPTER.claims(tmp_path / "notes.json")


def test_the_earliest_per_project_layout_reads_the_same(tmp_path: Path) -> None:
    """Era A (before the first storage migration): project/<slug>/storage/session/{info, message,
    part/<session>}/..., the same records as era B laid out per project (storage/storage.ts)."""
    storage = JSON_DATA / "storage"
    base = tmp_path / "opencode" / "project" / "invoice-api" / "storage" / "session"
    for session_file in storage.glob("session/*/*.json"):
        session_id = session_file.stem
        (base / "info").mkdir(parents=True, exist_ok=True)
        shutil.copy(session_file, base / "info" / session_file.name)
        shutil.copytree(storage / "message" / session_id, base / "message" / session_id)
        for message_file in (storage / "message" / session_id).glob("*.json"):
            parts = storage / "part" / message_file.stem
            if parts.is_dir():
                shutil.copytree(parts, base / "part" / session_id / message_file.stem)

    found = sessions(list(ADAPTER.discover([tmp_path / "opencode"])))

    assert {key: shape(t) for key, t in found.items()} == {key: Counter(v) for key, v in STORY.items()}
    session = next(base.glob(f"info/{PARENT}.json"))
    assert ADAPTER.claims(session) and ADAPTER.signature(session) is not None
