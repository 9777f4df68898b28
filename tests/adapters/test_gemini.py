"""The Gemini CLI reader against the recorded chats and hand-made files of every era.

Expected counts were worked out from the fixture lines (tests/fixtures/transcripts/gemini/
PROVENANCE.txt): a chat holds its user messages + gemini messages with text + one call and one result
per finished tool call (+ thoughts with ``include_thinking``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adapters import get_adapter
from adapters._gemini_project import HOME_ENV, sha256_of
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "gemini"
BUILT = FIXTURES / "synthetic" / "built-from-source" / ".gemini"
WEATHER = BUILT / "tmp" / "weather-cli" / "chats" / "session-2026-05-02T10-15-5b0c6e2e.jsonl"
SUBAGENT = next(
    (BUILT / "tmp" / "weather-cli" / "chats" / "5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810").glob("*.jsonl")
)
REAL = next((FIXTURES / "real").rglob("*.json"))
STAGE0 = FIXTURES / "schema-fixtures" / "agent-sessions" / ".gemini" / "tmp"
ADAPTER = get_adapter("gemini")

U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM
HUMAN, AGENT, TOOL, INJ = Origin.HUMAN, Origin.AGENT, Origin.TOOL, Origin.INJECTED
TEXT, CALL, RESULT, THINK = (
    MessageKind.TEXT,
    MessageKind.TOOL_CALL,
    MessageKind.TOOL_RESULT,
    MessageKind.THINKING,
)


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader hashes the folder it runs in as a last candidate: never a folder of this machine's."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def shape(transcript: Transcript) -> Counter[tuple[Role, Origin, MessageKind]]:
    return Counter((m.role, m.origin, m.kind) for m in transcript.messages)


EXPECTED = {
    # 3 prompts + 3 texts (two gemini messages only call tools) + 2 calls + 2 results; the rewound
    # exchange stays, and message 9a1e5f30 is written three times but read once
    WEATHER: ("5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810", "/home/dev/projects/weather-cli",
              {(U, HUMAN, TEXT): 3, (A, AGENT, TEXT): 3, (A, AGENT, CALL): 2, (T, TOOL, RESULT): 2}),
    SUBAGENT: ("e41d7c90-3b6a-4f12-a8d5-09c2b7e1f346", "/home/dev/projects/weather-cli",
               {(U, AGENT, TEXT): 1, (A, AGENT, TEXT): 1}),
    REAL: ("dcbe78d3-ea75-4786-929e-d6cff0fc00ed", None, {(U, HUMAN, TEXT): 1, (A, AGENT, TEXT): 1}),
    next(STAGE0.rglob("*.json")): ("session-2026-01-16T18-34-3739ef95", None,
                                   {(U, HUMAN, TEXT): 1, (A, AGENT, TEXT): 1}),
    next(STAGE0.rglob("*.jsonl")): ("gemini_stage0_jsonl", None,
                                    {(U, HUMAN, TEXT): 1, (A, AGENT, TEXT): 1, (A, AGENT, CALL): 1,
                                     (T, TOOL, RESULT): 1}),
}  # fmt: skip


@pytest.mark.parametrize("path", list(EXPECTED), ids=lambda p: p.name[:34])
def test_every_fixture_reads_with_the_counts_worked_out_by_hand(path: Path) -> None:
    session_id, cwd, kinds = EXPECTED[path]
    transcripts, report = read(path)

    assert not report.skipped, report.errors
    assert [(t.external_id, t.cwd) for t in transcripts] == [(session_id, cwd)]
    assert shape(transcripts[0]) == Counter(kinds)


def test_the_last_copy_of_a_message_wins_and_a_rewind_keeps_what_was_said() -> None:
    [transcript] = read(WEATHER, include_thinking=True)[0]
    by_key = {m.key: m for m in transcript.messages}

    assert transcript.title == "Add --units flag with metric default"  # from {"$set": {"summary"}}
    assert by_key["result:read_file_1777716934120_0"].text.startswith("import { parseArgs }")
    assert "Actually default to imperial." in [m.text for m in transcript.messages]  # before $rewindTo
    assert by_key["9a1e5f30-6c2d-4b8e-a7f1-3d5c9e0b2a64:thinking"].kind is THINK
    assert transcript.model == "gemini-3-flash-preview"


def test_a_subagent_links_to_its_parent_and_its_prompt_is_the_agents() -> None:
    [child] = read(SUBAGENT)[0]

    assert child.parent_external_id == "5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810"
    assert child.agent_id == child.external_id
    assert child.messages[0].origin is AGENT


def test_logs_json_gives_only_sessions_that_have_no_chat_file(tmp_path: Path) -> None:
    home = tmp_path / "h" / ".gemini"
    shutil.copytree(BUILT, home)
    logs = home / "tmp" / "weather-cli" / "logs.json"
    assert read(logs)[0] == []  # its session has a chat file, read from there

    shutil.rmtree(home / "tmp" / "weather-cli" / "chats")
    [session], report = read(logs)
    assert not report.skipped
    assert session.cwd == "/home/dev/projects/weather-cli"  # from .project_root
    assert [(m.origin, m.text[:20]) for m in session.messages] == [
        (HUMAN, "Add a --units flag t"),
        (HUMAN, "Actually default to "),
        (INJ, "/rewind"),
        (HUMAN, "Default to metric, k"),
    ]


def chat(folder: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def meta(session_id: str, project_hash: str, **extra: Any) -> dict[str, Any]:
    return {"sessionId": session_id, "projectHash": project_hash, "startTime": "2026-05-02T10:00:00Z",
            "lastUpdated": "2026-05-02T10:00:00Z", "kind": "main", **extra}  # fmt: skip


def test_a_hashed_folder_is_matched_to_a_path_the_session_touched(tmp_path: Path) -> None:
    root = "/srv/work/payments"
    digest = sha256_of(root)
    call = {"id": "c1", "name": "read_file", "args": {"file_path": f"{root}/src/app.py"}, "status": "success",
            "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x = 1"}}}]}  # fmt: skip
    path = chat(tmp_path / ".gemini" / "tmp" / digest / "chats", "session-2026-05-02T10-00-aaaaaaaa.jsonl", [
        meta("aaaaaaaa-0000-4000-8000-000000000001", digest),
        {"id": "m1", "timestamp": "2026-05-02T10:00:01Z", "type": "user", "content": [{"text": "read app"}]},
        {"id": "m2", "timestamp": "2026-05-02T10:00:02Z", "type": "gemini", "content": "", "toolCalls": [call]},
    ])  # fmt: skip

    assert read(path)[0][0].cwd == root


def test_a_slug_folder_is_named_by_projects_json(tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    home.mkdir()
    (home / "projects.json").write_text(json.dumps({"projects": {"/srv/work/ledger": "ledger"}}))
    path = chat(home / "tmp" / "ledger" / "chats", "session-2026-05-02T10-00-bbbbbbbb.jsonl", [
        meta("bbbbbbbb-0000-4000-8000-000000000001", sha256_of("/srv/work/ledger")),
        {"id": "m1", "timestamp": "2026-05-02T10:00:01Z", "type": "user", "content": "hello"},
    ])  # fmt: skip
    other = chat(home / "tmp" / "mystery" / "chats", "session-2026-05-02T10-00-cccccccc.jsonl", [
        meta("cccccccc-0000-4000-8000-000000000001", "0" * 64),
        {"id": "m1", "timestamp": "2026-05-02T10:00:01Z", "type": "user", "content": "hello"},
    ])  # fmt: skip

    assert read(path)[0][0].cwd == "/srv/work/ledger"
    assert read(other)[0][0].cwd is None  # the folder name is never decoded into a path


def test_notes_and_display_content(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "tmp" / "x" / "chats" / "session-2026-05-02T10-00-dddddddd.json"
    path.parent.mkdir(parents=True)
    record = meta("dddddddd-0000-4000-8000-000000000001", "0" * 64, messages=[
        {"id": "m1", "timestamp": "2026-05-02T10:00:01Z", "type": "user",
         "content": [{"text": "explain @src/a.py"}, {"text": "--- src/a.py ---\nx = 1"}],
         "displayContent": [{"text": "explain @src/a.py"}]},
        {"id": "m2", "timestamp": "2026-05-02T10:00:02Z", "type": "info", "content": "Request cancelled."},
        {"id": "m3", "timestamp": "2026-05-02T10:00:03Z", "type": "mystery", "content": "?"},
    ])  # fmt: skip
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    [transcript], report = read(path)

    assert report.skipped == Counter({"unknown_type:mystery": 1})
    assert [(m.role, m.origin, m.text) for m in transcript.messages] == [
        (U, HUMAN, "explain @src/a.py"),
        (S, INJ, "Request cancelled."),
    ]


def test_a_checkpoint_in_a_set_line_does_not_overwrite_what_was_recorded(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "cat .env"}, "status": "success",
            "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                             "response": {"output": "DEBUG=1"}}}]}  # fmt: skip
    masked = {**call, "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                         "response": {"output": "[masked]"}}}]}  # fmt: skip
    first = {
        "id": "m1",
        "timestamp": "2026-05-02T10:00:01Z",
        "type": "gemini",
        "content": "",
        "toolCalls": [call],
    }
    later = {"id": "m2", "timestamp": "2026-05-02T10:00:02Z", "type": "gemini", "content": "done"}
    path = chat(tmp_path / "chats", "session-2026-05-02T10-00-eeeeeeee.jsonl", [
        meta("eeeeeeee-0000-4000-8000-000000000001", "0" * 64), first,
        {"$set": {"messages": [{**first, "toolCalls": [masked]}, later]}},
    ])  # fmt: skip
    [transcript] = read(path)[0]

    assert [m.text for m in transcript.messages] == ["run_shell_command: cat .env", "DEBUG=1", "done"]


def test_bad_input_is_counted_and_the_rest_reads(tmp_path: Path) -> None:
    folder = tmp_path / ".gemini" / "tmp" / "x" / "chats"
    lines = chat(folder, "session-2026-05-02T10-00-ffffffff.jsonl", [
        meta("ffffffff-0000-4000-8000-000000000001", "0" * 64),
        {"id": "m1", "timestamp": "2026-05-02T10:00:01Z", "type": "user", "content": "kept"},
    ])  # fmt: skip
    with lines.open("ab") as handle:
        handle.write(b"{garbage\n")
        handle.write(
            b'{"id": "m2", "timestamp": "2026-05-02T10:00:02Z", "type": "user", "content": "bad \xff byte"}\n'
        )
        handle.write(b'{"$set": "not an object"}\n')
        handle.write(b'{"id": "m3", "type": "gemini", "content": "torn')
    torn = folder / "session-2026-05-02T10-01-11111111.json"
    torn.write_text('{"sessionId": "11111111", "messages": [{"id": "m1", "type": "us', encoding="utf-8")
    [transcript], report = read(lines)
    nothing, torn_report = read(torn)

    assert report.skipped == Counter({"bad_json": 1, "invalid_utf8": 1, "bad_record": 1, "torn_line": 1})
    assert [m.text for m in transcript.messages] == ["kept", "bad \ufffd byte"]
    assert nothing == [] and torn_report.skipped == Counter({"bad_json": 1})


def test_the_gemini_home_named_by_the_environment_is_searched(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "moved-home"
    shutil.copytree(BUILT, moved / ".gemini")
    monkeypatch.setenv(HOME_ENV, str(moved))

    found = [p.relative_to(moved / ".gemini" / "tmp") for p in ADAPTER.discover()]
    assert [str(p) for p in found] == [
        "weather-cli/logs.json",
        "weather-cli/chats/session-2026-05-02T10-15-5b0c6e2e.jsonl",
        "weather-cli/chats/5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810/e41d7c90-3b6a-4f12-a8d5-09c2b7e1f346.jsonl",
    ]
    monkeypatch.delenv(HOME_ENV)
    assert ADAPTER.default_roots() == []  # the fake user home has no ~/.gemini
