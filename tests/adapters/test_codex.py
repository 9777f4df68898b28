"""The Codex reader against every recorded rollout and against hand-made bad files.

Expected counts were worked out from the fixture lines (see tests/fixtures/transcripts/codex/
PROVENANCE.txt). In the localpush rollouts every ``event_msg/user_message`` and ``agent_message``
repeats the ``response_item`` beside it, so a thread holds: developer messages + user messages
(those with an event twin are the person's, the rest injected) + assistant messages + tool calls
(function, custom, web search) + tool outputs (+ 1 compaction summary in 12-54-34).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from adapters import codex, get_adapter
from adapters.base import ReadOptions
from recall.store.caps import scrub_then_cap
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "codex"
LOCALPUSH = FIXTURES / "real" / "localpush"
STAGE0 = FIXTURES / "schema-fixtures" / "agent-sessions"
BIG = LOCALPUSH / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
TITLED_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "session-titles" / "codex-home"
T1, T2, T3 = (f"0195a1b2-0000-7000-8000-00000000000{n}" for n in (1, 2, 3))
ADAPTER = get_adapter("codex")

U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM
HUMAN, AGENT, TOOL, INJ, COMP = Origin.HUMAN, Origin.AGENT, Origin.TOOL, Origin.INJECTED, Origin.COMPACTION
TEXT, CALL, RESULT, THINK = (
    MessageKind.TEXT,
    MessageKind.TOOL_CALL,
    MessageKind.TOOL_RESULT,
    MessageKind.THINKING,
)


@pytest.fixture(autouse=True)
def no_real_codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader also asks the configured Codex home for thread names: never the real one here."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "configured-codex-home"))


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def shape(transcript: Transcript) -> Counter[tuple[Role, Origin, MessageKind]]:
    return Counter((m.role, m.origin, m.kind) for m in transcript.messages)


def rollout(path: Path, *records: dict[str, Any] | bytes, thread: str = "t-1", **meta: Any) -> Path:
    head = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": {"id": thread, **meta}}
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n" for r in (head, *records)]
    path.write_bytes(b"".join(lines))
    return path


def item(payload: dict[str, Any], second: int = 1) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}Z", "type": "response_item", "payload": payload}


def event(payload: dict[str, Any], second: int = 1) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}Z", "type": "event_msg", "payload": payload}


def said(role: str, *texts: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": t} for t in texts]})


# -- every fixture -------------------------------------------------------------------------------

EXPECTED: dict[str, tuple[dict[str, int], list[tuple[str, int]]]] = {
    # file: (report.skipped, [(external_id, messages), ...])
    "real/agent-history/session-01.jsonl": ({}, [("019e9625-802f-7e91-840a-cfe88d14117a", 4)]),
    # 10 developer + 10 user (5 prompts) + 43 assistant + 105 calls + 104 outputs
    "real/localpush/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl": (
        {},
        [("019c8a4c-ed82-79a1-aa28-7738fc5ab61a", 272)],
    ),
    # 4 + 3 + 17 + 118 + 118
    "real/localpush/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl": (
        {},
        [("019c8a4d-8f45-7010-8b5d-7fad920aa6f9", 260)],
    ),
    # 15 + 13 + 52 + 144 + 143
    "real/localpush/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl": (
        {},
        [("019c8a53-a0dd-7130-bcd7-95445d84846a", 367)],
    ),
    # 45 + 46 + 255 + 372 + 365 + 1 compaction summary
    "real/localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl": (
        {},
        [("019c8a59-e9dd-71f0-9ae3-4079fe9726a9", 1084)],
    ),
    # 4 + 4 + 1 + 1 + 0 (the file ends mid-turn)
    "real/localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl": (
        {},
        [("019c8a70-dda7-7f33-98ea-f30553347322", 10)],
    ),
    # 4 + 3 + 6 + 5 + 5
    "real/localpush/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl": (
        {},
        [("019c8bfe-ec25-79e0-97d7-bda6a9c575ff", 23)],
    ),
    "schema-fixtures/agent-sessions/codex_050_legacy.jsonl": ({}, []),  # token counts only
    "schema-fixtures/agent-sessions/codex_053_rate_limit.jsonl": ({}, []),
    "schema-fixtures/agent-sessions/stage0-codex-large.jsonl": (
        {},
        [("019b2ea4-aaaa-bbbb-cccc-58208e1f0000", 16)],
    ),
    "schema-fixtures/agent-sessions/stage0-codex-schema_drift.jsonl": (
        {"blank_line": 1},
        [("stage0-codex-schema_drift", 4)],
    ),
    # from line 27 on every timestamp reads "[trimmed for fixture]" (92 records)
    "schema-fixtures/agent-sessions/stage0-codex-small.jsonl": (
        {"bad_timestamp": 92},
        [("019fc8be-3658-7ca3-9e29-000000000000", 28)],
    ),
    "schema-fixtures/claude-code-log/rollout-44444444-4444-4444-8444-444444444444.jsonl": (
        {},
        [("44444444-4444-4444-8444-444444444444", 2)],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda n: n.rsplit("/", 1)[-1][:40])
def test_every_fixture_reads_to_the_expected_transcript(name: str) -> None:
    skipped, sessions = EXPECTED[name]
    transcripts, report = read(FIXTURES / name)
    assert dict(report.skipped) == skipped
    assert [(t.external_id, len(t.messages)) for t in transcripts] == sessions
    for t in transcripts:
        assert t.host == "codex" and t.source_path == str(FIXTURES / name)
        assert len({m.key for m in t.messages}) == len(t.messages)
        for when in [t.started_at, t.ended_at, *(m.timestamp for m in t.messages)]:
            assert when is None or when.tzinfo == UTC


def test_discover_finds_only_rollouts() -> None:
    found = [p.relative_to(FIXTURES).as_posix() for p in ADAPTER.discover([FIXTURES])]
    assert found == sorted(n for n in EXPECTED if n.rsplit("/", 1)[-1].startswith("rollout-"))


def test_text_written_twice_is_stored_once_and_only_twinned_prompts_are_human() -> None:
    [t], _ = read(BIG)
    assert shape(t) == {
        (S, INJ, TEXT): 45,
        (U, HUMAN, TEXT): 38,
        (U, INJ, TEXT): 8,
        (U, COMP, TEXT): 1,
        (A, AGENT, TEXT): 255,
        (A, AGENT, CALL): 372,
        (T, TOOL, RESULT): 365,
    }
    census: Counter[tuple[object, object]] = Counter()
    for line in BIG.read_text(encoding="utf-8").splitlines():
        payload = json.loads(line)["payload"]
        census[payload.get("type"), payload.get("role")] += 1
    assert census["user_message", None] == 38 and census["agent_message", None] == 255
    assert all(m.meta.get("channel") is None for m in t.messages)  # every event had its response item
    assert (t.cwd, t.git_branch, t.model) == ("/redacted/path/59b923df4d", "main", "gpt-5.3-codex")
    assert t.meta["originator"] == "Codex Desktop" and "non_interactive" not in t.meta
    assert t.started_at.isoformat() == "2026-02-23T11:54:34.334000+00:00"  # type: ignore[union-attr]
    assert t.ended_at.isoformat() == "2026-02-24T12:09:44.294000+00:00"  # type: ignore[union-attr]


def test_images_become_markers() -> None:
    [t], _ = read(BIG)
    with_images = [m for m in t.messages if "[image]" in m.text]
    assert len(with_images) == 13 and {m.origin for m in with_images} == {HUMAN}
    assert with_images[0].text == (
        "[REDACTED_TEXT len=1 sha=01ba4719]\n[REDACTED_TEXT len=7 sha=92b00aa2]\n[image]\n"
        "[REDACTED_TEXT len=8 sha=74dc9557]"
    )


def test_reasoning_summaries_only_when_asked_and_never_twice() -> None:
    summaries = sum(
        1
        for line in BIG.read_text(encoding="utf-8").splitlines()
        if (p := json.loads(line)["payload"]).get("type") == "reasoning" and p.get("summary")
    )
    [plain], _ = read(BIG)
    [thinking], _ = read(BIG, include_thinking=True)
    thoughts = [m for m in thinking.messages if m.kind is THINK]
    assert len(thoughts) == summaries == 199
    assert [m for m in thinking.messages if m.kind is not THINK] == list(plain.messages)
    assert not any("gAAAA" in m.text for m in thoughts)


def test_compaction_keeps_the_summary_not_the_replacement_history() -> None:
    [t], _ = read(BIG)
    [summary] = [m for m in t.messages if m.origin is COMP]
    assert summary.text == "[REDACTED_MESSAGE len=0 sha=e3b0c442]" and summary.role is U
    assert summary.timestamp.isoformat() == "2026-02-24T09:51:48.878000+00:00"  # type: ignore[union-attr]


def test_exec_runs_are_flagged_and_context_is_injected() -> None:
    [t], _ = read(FIXTURES / "real" / "agent-history" / "session-01.jsonl")
    assert [(m.role, m.origin, m.text[:21]) for m in t.messages] == [
        (S, INJ, "[REDACTED_DEVELOPER_C"),
        (U, INJ, "<environment_context>"),
        (U, HUMAN, "[REDACTED_PROMPT]"),
        (A, AGENT, "[REDACTED_ASSISTANT_T"),
    ]
    assert t.meta["non_interactive"] is True and t.model == "gpt-5.5"


def test_the_census_of_newer_record_shapes() -> None:
    [t], report = read(STAGE0 / "stage0-codex-small.jsonl", include_thinking=True)
    assert shape(t) == {
        (U, HUMAN, TEXT): 4,  # 1 paired with its event, 3 event-only (user_message x2, item_completed)
        (A, AGENT, TEXT): 3,
        (A, AGENT, THINK): 1,
        (U, AGENT, TEXT): 2,  # inter-agent messages
        (U, COMP, TEXT): 5,  # compacted records with a non-empty summary
        (S, INJ, TEXT): 1,
        (A, AGENT, CALL): 8,
        (T, TOOL, RESULT): 5,
    }
    calls = {m.key: m.text for m in t.messages if m.kind is CALL}
    assert calls["call:call-1"] == "shell: ls" and calls["call:call-3"] == "tool_search: example"
    results = {m.key: (m.tool_name, m.text) for m in t.messages if m.kind is RESULT}
    assert results["out:call-1"] == ("shell", "a.txt\nb.txt") and results["out:call-2"] == ("shell", "a.txt")
    assert t.messages[0].text == "List the files\n[image]" and t.title == "[trimmed for fixture]"
    assert report.skipped == {"bad_timestamp": 92}


def test_repeated_texts_get_ordinals_and_unpaired_prompts_count_as_injected() -> None:
    [t], _ = read(STAGE0 / "stage0-codex-large.jsonl")
    oks = [m.key for m in t.messages if m.text == "Ok"]  # the same reply five times
    assert oks == [oks[0]] + [f"{oks[0]}#{n}" for n in range(2, 6)] and oks[0].startswith("assistant:")
    # only "Start" has an event_msg twin; Steps 1-5 exist only as response items, like injected context
    assert [m.text for m in t.messages if m.origin is HUMAN] == ["Start"]
    assert [m.text for m in t.messages if m.role is U and m.origin is INJ][1:] == [
        f"Step {n}" for n in range(1, 6)
    ]


def test_bare_and_drift_eras() -> None:
    [bare], _ = read(
        FIXTURES
        / "schema-fixtures"
        / "claude-code-log"
        / "rollout-44444444-4444-4444-8444-444444444444.jsonl"
    )
    assert [(m.role, m.origin, m.text, m.timestamp) for m in bare.messages] == [
        (U, HUMAN, "Open the synthetic legacy session.", None),
        (A, AGENT, "The synthetic legacy session is open.", None),
    ]
    assert bare.started_at.isoformat() == "2026-01-04T05:06:07+00:00"  # type: ignore[union-attr]
    [drift], _ = read(STAGE0 / "stage0-codex-schema_drift.jsonl")
    assert [(m.kind, m.text) for m in drift.messages] == [
        (TEXT, "Translate 'hello' to Spanish"),
        (CALL, 'translate: {"text": "hello", "to": "es"}'),
        (RESULT, "hola"),
        (TEXT, '"hola"'),
    ]
    assert drift.model == "gpt-4o-mini"


def test_twins_pair_in_either_order_and_only_when_adjacent(tmp_path: Path) -> None:
    path = rollout(
        tmp_path / "r.jsonl",
        event({"type": "user_message", "message": "first prompt"}),
        said("user", "first prompt"),
        event({"type": "agent_message", "message": "on it"}),
        said("assistant", "on it"),
        item({"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "c1"}),
        said("user", "second prompt"),
        event({"type": "token_count", "info": None}),
        event({"type": "user_message", "message": "second prompt"}),
        event({"type": "agent_message", "message": "only in the event channel"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "a\nb"}),
        said("user", "# AGENTS.md instructions for /repo\n\nbe nice"),
        said("user", "no twin, so injected"),
        said("developer", "<permissions instructions>"),
    )
    [t], report = read(path)
    assert [(m.role, m.origin, m.kind, m.text) for m in t.messages] == [
        (U, HUMAN, TEXT, "first prompt"),
        (A, AGENT, TEXT, "on it"),
        (A, AGENT, CALL, "exec_command: ls"),
        (U, HUMAN, TEXT, "second prompt"),
        (A, AGENT, TEXT, "only in the event channel"),
        (T, TOOL, RESULT, "a\nb"),
        (U, INJ, TEXT, "# AGENTS.md instructions for /repo\n\nbe nice"),
        (U, INJ, TEXT, "no twin, so injected"),
        (S, INJ, TEXT, "<permissions instructions>"),
    ]
    assert t.messages[4].meta["channel"] == "event" and t.messages[5].tool_name == "exec_command"
    assert not report.skipped


def test_older_ide_prompts_split_context_from_the_request(tmp_path: Path) -> None:
    path = rollout(
        tmp_path / "r.jsonl",
        said("user", "# Context from my IDE\nfile a.py\n## My request for Codex:\nrename x"),
    )
    [t], _ = read(path)
    assert [(m.origin, m.text) for m in t.messages] == [
        (INJ, "# Context from my IDE\nfile a.py"),
        (HUMAN, "rename x"),
    ]


def test_keys_are_stable_across_reads_and_shared_by_fork_copies(tmp_path: Path) -> None:
    history = [said("user", "hi"), said("assistant", "Ok"), said("user", "again"), said("assistant", "Ok")]
    parent = rollout(tmp_path / "rollout-a.jsonl", *history, thread="parent")
    child = rollout(
        tmp_path / "rollout-b.jsonl",
        *history,
        said("user", "fork only"),
        thread="child",
        forked_from_id="parent",
    )
    [p1], _ = read(parent)
    [p2], _ = read(parent)
    [c], _ = read(child)
    assert [m.key for m in p1.messages] == [m.key for m in p2.messages]
    assert [m.key for m in c.messages][:4] == [m.key for m in p1.messages]
    assert p1.messages[3].key == p1.messages[1].key + "#2"
    assert (c.external_id, c.parent_external_id, c.meta["forked_from_id"]) == ("child", "parent", "parent")


def test_subagent_threads_link_to_their_parent(tmp_path: Path) -> None:
    spawn = {
        "subagent": {"thread_spawn": {"parent_thread_id": "root", "depth": 1, "agent_path": "/explorer"}}
    }
    path = rollout(tmp_path / "r.jsonl", said("user", "look"), thread="kid", source=spawn)
    [t], _ = read(path)
    assert (t.external_id, t.parent_external_id, t.agent_id, t.meta["source"]) == (
        "kid",
        "root",
        "/explorer",
        "subagent",
    )


def test_tool_outputs_are_cut_and_data_urls_replaced(tmp_path: Path) -> None:
    pixel = "data:image/png;base64," + "iVBORw0KGgo" * 100_000
    path = rollout(
        tmp_path / "r.jsonl",
        item(
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "p1",
                "input": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: t.py\n+x\n*** End Patch",
            }
        ),
        item({"type": "custom_tool_call_output", "call_id": "p1", "output": "x" * 5000}),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["bash","-lc","git status"]}',
                "call_id": "s1",
            }
        ),
        item({"type": "function_call_output", "call_id": "s1", "output": f"screenshot {pixel} done"}),
        item({"type": "function_call", "name": "exec_command", "arguments": "not json {", "call_id": "s2"}),
        item({"type": "function_call_output", "call_id": "s2", "output": ""}),
        said("user", "look"),
        item({"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": pixel}]}),
    )
    [t], _ = read(path)
    texts = [scrub_then_cap(m.text, m.cuts).text for m in t.messages]  # as the store keeps them
    assert texts[0] == "apply_patch: src/app.py, t.py"
    assert t.messages[1].text == "x" * 5000  # whole until the store has scrubbed it
    assert texts[1] == "x" * 2000 + "\n[… 3,000 more characters cut]"
    assert texts[2:6] == [
        "shell: git status",
        "screenshot [image] done",
        "exec_command: not json {",
        "[empty result]",
    ]
    assert texts[7] == "[image]"
    [small], _ = read(path, tool_text_cap=10)
    cut = small.messages[1]
    assert scrub_then_cap(cut.text, cut.cuts).text == "x" * 10 + "\n[… 4,990 more characters cut]"


def test_bad_lines_are_counted_and_good_lines_still_come_through(tmp_path: Path) -> None:
    path = rollout(
        tmp_path / "r.jsonl",
        said("user", "kept"),
        b"{broken\n",
        b'{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant",'
        b'"content":[{"type":"output_text","text":"bad \xff bytes and \\udc00"}]}}\n',
        {"timestamp": "2026-03-01T10:00:03Z", "type": "future_record", "payload": {}},
        item({"type": "future_item"}),
        event({"type": "future_event"}),
        item({"type": "message", "role": "critic", "content": []}),
        {"timestamp": "soon", "type": "turn_context", "payload": {"model": "gpt-9"}},
        b"\x00\x00\x00\x00\n",  # a NUL-corrupted tail line
        said("assistant", "also kept"),
        b'{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"mess',
    )
    [t], report = read(path)
    assert report.skipped == {
        "bad_json": 2,
        "invalid_utf8": 1,
        "lone_surrogate": 1,
        "unknown_type:future_record": 1,
        "unknown_type:response_item/future_item": 1,
        "unknown_type:event_msg/future_event": 1,
        "unknown_role:critic": 1,
        "bad_timestamp": 1,
        "torn_line": 1,
    }
    assert [m.text for m in t.messages] == ["kept", "bad \ufffd bytes and \ufffd", "also kept"]
    assert t.model == "gpt-9"


def test_zstd_rollouts_read_like_plain_ones(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    packed = tmp_path / BIG.name.replace(".jsonl", ".jsonl.zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(BIG.read_bytes()))
    [plain], _ = read(BIG)
    [unpacked], report = read(packed)
    assert unpacked.messages == plain.messages and report.lines_read == 2722
    torn = tmp_path / "rollout-torn.jsonl.zst"
    torn.write_bytes(zstandard.ZstdCompressor().compress(BIG.read_bytes()[:-5]))
    _, report = read(torn)
    assert report.skipped == {"torn_line": 1}


def test_zstd_without_the_package_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packed = tmp_path / "rollout-x.jsonl.zst"
    packed.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    transcripts, report = read(packed)
    assert transcripts == [] and report.skipped == {"zstd_unavailable": 1}
    assert "zstandard" in report.errors[0]


def test_empty_and_unreadable_files_never_raise(tmp_path: Path) -> None:
    empty = tmp_path / "rollout-empty.jsonl"
    empty.write_bytes(b"")
    assert read(empty)[0] == [] and read(empty)[1].skipped == {"empty_file": 1}
    assert read(tmp_path / "rollout-gone.jsonl")[1].skipped == {"unreadable": 1}
    assert read(tmp_path)[1].skipped == {"unreadable": 1}  # a directory where a file was expected


def test_discovery_prefers_live_over_compressed_and_archived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    names = [
        "sessions/2026/02/23/rollout-2026-02-23T10-00-00-aaaa.jsonl",
        "sessions/2026/02/23/rollout-2026-02-23T10-00-00-aaaa.jsonl.zst",
        "sessions/2026/02/24/rollout-2026-02-24T10-00-00-bbbb.jsonl.zst",
        "sessions/rollout-old-flat.jsonl",
        "sessions/2026/02/24/notes.jsonl",
        "archived_sessions/rollout-2026-02-23T10-00-00-aaaa.jsonl",
        "archived_sessions/rollout-2026-01-01T10-00-00-cccc.jsonl",
    ]
    for name in names:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("{}\n")
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert ADAPTER.default_roots() == [home / "sessions", home / "archived_sessions"]
    expected = [  # a folder's own files come before its subfolders'
        "sessions/rollout-old-flat.jsonl",
        "sessions/2026/02/23/rollout-2026-02-23T10-00-00-aaaa.jsonl",
        "sessions/2026/02/24/rollout-2026-02-24T10-00-00-bbbb.jsonl.zst",
        "archived_sessions/rollout-2026-01-01T10-00-00-cccc.jsonl",
    ]
    assert [p.relative_to(home).as_posix() for p in ADAPTER.discover()] == expected
    assert [p.relative_to(home).as_posix() for p in ADAPTER.discover([home])] == expected


# -- thread names from session_index.jsonl --------------------------------------------------------


def titled_rollout(home: Path, thread: str, *records: dict[str, Any] | bytes) -> Path:
    """A rollout where Codex puts it, ``<home>/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``."""
    path = home / "sessions" / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return rollout(path, *(records or (said("user", "hi"), said("assistant", "hello"))), thread=thread)


def index_line(thread: str, name: str, when: str = "2026-03-01T11:00:00Z") -> bytes:
    return json.dumps({"id": thread, "thread_name": name, "updated_at": when}).encode() + b"\n"


def rollouts_of(home: Path) -> dict[str, Path]:
    return {p.name.removesuffix(".jsonl")[-36:]: p for p in ADAPTER.discover([home])}


def test_the_index_names_threads_and_its_last_entry_wins() -> None:
    found = rollouts_of(TITLED_HOME)
    titles = {}
    for thread, path in found.items():
        [t], report = read(path)
        assert t.external_id == thread and not report.skipped
        titles[thread] = t.title
    assert titles == {
        T1: "Fix the flaky login test",  # named twice in the index; beats the rollout's own "Login test"
        T2: "Slow build cache",  # archived, named only by the index
        T3: "Linter bump",  # not in the index: the rollout's thread_name_updated event stands
    }


def test_without_an_index_everything_reads_as_before(tmp_path: Path) -> None:
    bare = tmp_path / "codex-home"
    shutil.copytree(TITLED_HOME, bare, ignore=shutil.ignore_patterns("session_index.jsonl"))
    assert len(rollouts_of(bare)) == 3
    for thread, path in rollouts_of(bare).items():
        [plain], plain_report = read(path)
        [named], named_report = read(rollouts_of(TITLED_HOME)[thread])
        expected_title = {T1: "Login test", T2: None, T3: "Linter bump"}[thread]
        assert plain.title == expected_title
        assert replace(named, title=plain.title, source_path=plain.source_path) == plain
        assert plain_report == named_report


BAD_INDEXES: dict[str, tuple[bytes, str | None]] = {
    # name: (index content, the title the rollout ends up with)
    "malformed lines": (
        b"{broken\n[1, 2]\n" + index_line(T1, "kept") + b'{"id": 42, "thread_name": "x", "updated_at": ""}\n',
        "kept",
    ),
    "invalid utf-8 in a later entry": (
        index_line(T1, "kept")
        + b'{"id": "'
        + T1.encode()
        + b'", "thread_name": "caf\xff", "updated_at": ""}\n',
        "kept",
    ),
    "torn last line": (index_line(T1, "kept") + index_line(T1, "newer")[:-12], "kept"),
    "binary junk": (b"\x00\xff\xfe" * 1000, None),
    "empty": (b"", None),
    "only other threads": (index_line(T2, "someone else"), None),
}


@pytest.mark.parametrize("case", sorted(BAD_INDEXES))
def test_a_bad_index_never_costs_the_transcript(tmp_path: Path, case: str) -> None:
    content, title = BAD_INDEXES[case]
    home = tmp_path / "codex-home"
    path = titled_rollout(home, T1)
    [baseline], baseline_report = read(path)
    (home / "session_index.jsonl").write_bytes(content)
    [t], report = read(path)
    assert t.title == title
    assert replace(t, title=None) == baseline and report == baseline_report  # the index adds no skips


def test_an_index_that_cannot_be_read_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    path = titled_rollout(home, T1)
    (home / "session_index.jsonl").mkdir()  # a folder where the file should be
    [t], report = read(path)
    assert t.title is None and not report.skipped
    assert codex.load_session_index(home / "session_index.jsonl").skipped == {"unreadable": 1}


def test_index_lines_are_read_the_way_codex_reads_them(tmp_path: Path) -> None:
    index = tmp_path / "session_index.jsonl"
    t1 = T1.encode()
    index.write_bytes(
        b"\xef\xbb\xbf"  # a byte-order mark
        + index_line(T1, "one")
        + b"{broken\n"
        + b"[1, 2]\n"
        + b'{"id": "%s", "thread_name": 7, "updated_at": "x"}\n' % t1
        + b'{"id": "%s", "thread_name": "no timestamp"}\n' % t1
        + b'{"id": "%s", "thread_name": "caf\xc3", "updated_at": "x"}\n' % t1
        + b'{"id": "%s", "thread_name": "lone \\ud800", "updated_at": "x"}\n' % t1
        + b"\r\n"
        + index_line(T2.upper(), "  two  ")  # Codex compares parsed UUIDs
        + index_line(T3, "three")
        + index_line(T3, "")  # a cleared name
        + index_line(T1, "half written")[:-20]
    )
    parsed = codex.load_session_index(index)
    assert parsed.names == {T1: "one", T2: "two", T3: ""}
    assert parsed.skipped == {
        "bad_json": 1,
        "bad_entry": 3,
        "invalid_utf8": 1,
        "lone_surrogate": 1,
        "torn_line": 1,
    }
    index.write_bytes(index_line(T1, "whole but not yet ended")[:-1])  # the newline comes in a second write
    assert codex.load_session_index(index).names == {T1: "whole but not yet ended"}


def test_a_cleared_name_gives_no_title_and_the_rollout_keeps_its_own(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    path = titled_rollout(
        home,
        T1,
        said("user", "hi"),
        event({"type": "thread_name_updated", "thread_name": "from the rollout"}),
    )
    (home / "session_index.jsonl").write_bytes(index_line(T1, "old name") + index_line(T1, "  "))
    assert read(path)[0][0].title == "from the rollout"


def test_a_torn_entry_is_used_once_it_is_complete(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    path = titled_rollout(home, T1)
    whole = index_line(T1, "first") + index_line(T1, "second")
    (home / "session_index.jsonl").write_bytes(whole[:-9])
    assert read(path)[0][0].title == "first"
    (home / "session_index.jsonl").write_bytes(whole)
    assert read(path)[0][0].title == "second"


def test_the_index_is_parsed_once_per_run_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[Path] = []
    real_load = codex.load_session_index

    def counting_load(path: Path) -> codex.SessionIndex:
        loads.append(path)
        return real_load(path)

    monkeypatch.setattr(codex, "load_session_index", counting_load)
    adapter = codex.CodexAdapter()
    home = tmp_path / "codex-home"
    first, second = titled_rollout(home, T1), titled_rollout(home, T2)
    index = home / "session_index.jsonl"
    index.write_bytes(index_line(T1, "one") + index_line(T2, "two"))

    def title(path: Path) -> str | None:
        [t] = adapter.read(path, ReadOptions(), ParseReport())
        return t.title

    assert [title(first), title(second), title(first)] == ["one", "two", "one"]
    assert loads == [index]
    with index.open("ab") as stream:
        stream.write(index_line(T1, "renamed"))
    assert [title(first), title(second)] == ["renamed", "two"] and loads == [index, index]


def test_names_come_from_the_rollouts_own_home_then_the_configured_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured, backup = tmp_path / "live-home", tmp_path / "backup-home"
    monkeypatch.setenv("CODEX_HOME", str(configured))
    configured.mkdir()
    (configured / "session_index.jsonl").write_bytes(index_line(T1, "live name") + index_line(T2, "live two"))
    in_backup = titled_rollout(backup, T1)
    (backup / "session_index.jsonl").write_bytes(index_line(T1, "backup name"))
    archived = backup / "archived_sessions" / f"rollout-2026-03-01T10-00-00-{T2}.jsonl"
    archived.parent.mkdir()
    rollout(archived, said("user", "hi"), thread=T2)
    loose = rollout(tmp_path / f"rollout-2026-03-01T10-00-00-{T1}.jsonl", said("user", "hi"), thread=T1)
    assert codex.session_index_paths(archived) == [
        backup / "session_index.jsonl",
        configured / "session_index.jsonl",
    ]
    assert codex.session_index_paths(loose) == [configured / "session_index.jsonl"]
    assert read(in_backup)[0][0].title == "backup name"  # its own home's index first
    assert read(archived)[0][0].title == "live two"  # its home's index does not know it
    assert read(loose)[0][0].title == "live name"  # a rollout outside any Codex home
