"""The Claude Code reader against every recorded fixture and against hand-made bad files.

Expected counts were worked out from the fixture lines themselves (see tests/fixtures/transcripts/
claude-code/PROVENANCE.txt): e.g. 4d5611e5 has 2 typed prompts, 150 tool_use and 150 tool_result
blocks, 84 message ids with text, one isCompactSummary line and one <task-notification> line = 388.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

import adapters._jsonl as jsonl
from adapters import claude_code, get_adapter
from adapters.base import ReadOptions
from recall.store.caps import scrub_then_cap
from recall.transcript import Cut, MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "claude-code"
SPOTTER = FIXTURES / "real" / "spotter"
BIG = SPOTTER / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
BIG_ID = "4d5611e5-241a-462a-8d15-5122611a9569"
STAGE0 = FIXTURES / "schema-fixtures" / "agent-sessions"
TITLED = (
    Path(__file__).resolve().parents[1] / "fixtures" / "session-titles" / "claude-projects" / "-home-me-app"
)
S1, S2, S3 = (f"aaaaaaaa-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))
ADAPTER = get_adapter("claude")

H, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM
HUMAN, AGENT, TOOL, INJ, COMP = Origin.HUMAN, Origin.AGENT, Origin.TOOL, Origin.INJECTED, Origin.COMPACTION
TEXT, CALL, RESULT = MessageKind.TEXT, MessageKind.TOOL_CALL, MessageKind.TOOL_RESULT


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def shape(transcript: Transcript) -> Counter[tuple[Role, Origin, MessageKind]]:
    return Counter((m.role, m.origin, m.kind) for m in transcript.messages)


def write_lines(path: Path, *records: dict[str, Any] | bytes) -> Path:
    path.write_bytes(b"".join(r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n" for r in records))
    return path


def user(uuid: str, content: Any, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": session,
        "timestamp": "2026-01-02T03:04:05.000Z",
        "message": {"role": "user", "content": content},
        **extra,
    }


def assistant(
    uuid: str, message_id: str, blocks: list[dict[str, Any]], session: str = "s1"
) -> dict[str, Any]:
    message = {"id": message_id, "role": "assistant", "model": "claude-x", "content": blocks}
    return {"type": "assistant", "uuid": uuid, "sessionId": session, "message": message}


# -- every fixture -------------------------------------------------------------------------------

EXPECTED: dict[str, tuple[dict[str, int], list[tuple[str, int, str | None, str | None]]]] = {
    # file: (report.skipped, [(external_id, messages, parent_external_id, agent_id), ...])
    "real/agent-history/session-01.jsonl": ({}, [("06090cb1-3e64-433a-bc7e-a621c0f596d2", 2, None, None)]),
    "real/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": ({}, [(BIG_ID, 388, None, None)]),
    "real/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl": (
        {},
        [(f"{BIG_ID}#agent-a2898e3", 74, BIG_ID, "a2898e3")],
    ),
    "real/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl": (
        {},
        [(f"{BIG_ID}#agent-acompact-e1f845", 5, BIG_ID, "acompact-e1f845")],
    ),
    "real/spotter/short.jsonl": ({}, [("55604662-cf2a-4331-851a-ec234028f8ca", 9, None, None)]),
    "real/spotter/subagent.jsonl": ({}, [("491e126e-1e71-469c-ade2-fcc8af567c74", 43, None, None)]),
    "real/spotter/tool_heavy.jsonl": ({}, [("d6e0bada-1959-4eec-a9d2-0bfade768d8f", 22, None, None)]),
    "schema-fixtures/agent-sessions/stage0-claude-large.jsonl": ({}, [("ses_stage0_large", 11, None, None)]),
    "schema-fixtures/agent-sessions/stage0-claude-schema_drift.jsonl": (
        {},
        [("ses_stage0_drift", 5, None, None)],
    ),
    # The synthetic census reuses "[trimmed for fixture]" as uuid, sessionId and timestamp on 14
    # message lines: the first is kept (its own session), the other 13 are duplicates by uuid.
    "schema-fixtures/agent-sessions/stage0-claude-small.jsonl": (
        {"duplicate_uuid": 13, "bad_timestamp": 1, "orphan_summary": 1},
        [
            ("ses_stage0_small#agent-sidechain-u1", 8, "ses_stage0_small", "sidechain-u1"),
            ("ses_stage0_small", 4, None, None),
            ("[trimmed for fixture]", 1, None, None),
        ],
    ),
    "schema-fixtures/agent-sessions/subagent-layout/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl": (
        {},
        [("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f", 3, None, None)],
    ),
    "schema-fixtures/agent-sessions/subagent-layout/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/"
    "agent-a0ad4f44468bdf20d.jsonl": (
        {},
        [
            (
                "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f#agent-a0ad4f44468bdf20d",
                4,
                "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f",
                "a0ad4f44468bdf20d",
            )
        ],
    ),
}
LINES = {"real/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": 1512, "real/spotter/short.jsonl": 15}


def test_discover_finds_every_session_and_subagent_file_in_a_stable_order() -> None:
    found = [p.relative_to(FIXTURES).as_posix() for p in ADAPTER.discover([FIXTURES])]
    assert sorted(found) == sorted(EXPECTED)
    assert found == [p.relative_to(FIXTURES).as_posix() for p in ADAPTER.discover([FIXTURES])]
    assert found.index("real/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl") < found.index(
        "real/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl"
    )


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda n: n.rsplit("/", 1)[-1])
def test_every_fixture_reads_to_the_expected_transcripts(name: str) -> None:
    skipped, sessions = EXPECTED[name]
    transcripts, report = read(FIXTURES / name)
    assert dict(report.skipped) == skipped
    assert [
        (t.external_id, len(t.messages), t.parent_external_id, t.agent_id) for t in transcripts
    ] == sessions
    if name in LINES:
        assert report.lines_read == LINES[name]
    for t in transcripts:
        assert t.host == "claude" and t.source_path == str(FIXTURES / name)
        assert len({m.key for m in t.messages}) == len(t.messages)
        for when in [t.started_at, t.ended_at, *(m.timestamp for m in t.messages)]:
            assert when is None or when.tzinfo == UTC


def test_big_session_messages_roles_and_session_facts() -> None:
    [t], _ = read(BIG)
    assert shape(t) == {
        (H, HUMAN, TEXT): 2,
        (H, INJ, TEXT): 1,  # <task-notification>
        (H, COMP, TEXT): 1,  # isCompactSummary
        (A, AGENT, TEXT): 84,
        (A, AGENT, CALL): 150,
        (T, TOOL, RESULT): 150,
    }
    assert t.cwd == "/home/USER/projects/spotter-worktrees/spotter-dov"
    assert (t.git_branch, t.model, t.title) == ("spotter-dov", "claude-opus-4-6", None)
    assert t.started_at.isoformat() == "2026-02-12T16:02:25.284000+00:00"  # type: ignore[union-attr]
    assert t.ended_at.isoformat() == "2026-02-12T21:03:34.112000+00:00"  # type: ignore[union-attr]
    assert t.meta == {"version": "2.1.39", "slug": "radiant-floating-music"}
    human = [m.text for m in t.messages if m.origin is HUMAN]
    assert human[0].startswith("Work on bead spotter-dov.") and human[1] == "continue"
    [summary] = [m for m in t.messages if m.origin is COMP]
    assert summary.text.startswith("This session is being continued from a previous conversation")
    [notice] = [m for m in t.messages if m.origin is INJ]
    assert notice.text.startswith("<task-notification>")


def test_split_assistant_lines_share_one_message_per_message_id() -> None:
    [t], _ = read(SPOTTER / "short.jsonl", include_thinking=True)
    ours = [m for m in t.messages if m.meta.get("message_id") == "msg_01MKH1ccEGrZGNPvu8pYiiQa"]
    assert [(m.key, m.kind) for m in ours] == [
        ("msg:msg_01MKH1ccEGrZGNPvu8pYiiQa:thinking", MessageKind.THINKING),
        ("msg:msg_01MKH1ccEGrZGNPvu8pYiiQa", TEXT),
    ]
    assert ours[1].text == "Let me check the project structure and try running the server to see the error."
    calls = [(m.key, m.text) for m in t.messages if m.kind is CALL]
    assert calls == [
        ("call:toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "Bash: mix phx.server 2>&1 | head -80"),
        ("call:toolu_01FdQ8qTyVyZjE3Kw4dguQGx", "Glob: mix.exs"),
    ]
    results = [m for m in t.messages if m.kind is RESULT]
    assert [(m.tool_name, m.meta["is_error"]) for m in results] == [("Bash", True), ("Glob", True)]


def test_merged_blocks_keep_their_order_and_rewrites_are_not_repeated(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "s1.jsonl",
        assistant("l1", "msg_1", [{"type": "text", "text": "First part."}]),
        assistant(
            "l2",
            "msg_1",
            [{"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {"file_path": "a.py"}}],
        ),
        assistant("l3", "msg_1", [{"type": "text", "text": "Second part."}]),
        assistant("l4", "msg_1", [{"type": "text", "text": "First part."}]),  # a rewrite with a new uuid
    )
    [t], report = read(path)
    assert [(m.key, m.text) for m in t.messages] == [
        ("msg:msg_1", "First part.\n\nSecond part."),
        ("call:toolu_1", "Edit: a.py"),
    ]
    assert t.messages[0].meta == {"uuid": "l1", "message_id": "msg_1"} and not report.skipped


def test_thinking_is_left_out_unless_asked_for() -> None:
    [plain], _ = read(STAGE0 / "stage0-claude-large.jsonl")
    [thinking], _ = read(STAGE0 / "stage0-claude-large.jsonl", include_thinking=True)
    assert all(m.kind is not MessageKind.THINKING for m in plain.messages)
    [thought] = [m for m in thinking.messages if m.kind is MessageKind.THINKING]
    assert (thought.key, thought.text) == ("a1:thinking", "Plan\n1) Do thing\n2) Verify")
    assert len(thinking.messages) == len(plain.messages) + 1


def test_injected_and_command_lines_are_kept_but_marked() -> None:
    [t], _ = read(SPOTTER / "tool_heavy.jsonl")
    injected = [
        m.text.split(">", 1)[0] + ">" if m.text.startswith("<") else m.text
        for m in t.messages
        if m.origin is INJ
    ]
    assert injected == [
        "[Request interrupted by user]",
        "<local-command-caveat>",  # isMeta
        "<command-name>",
        "<local-command-stdout>",
        "<command-name>",  # system/local_command
        "<local-command-stdout>",
        "[Request interrupted by user]",
    ]
    assert [m.role for m in t.messages if m.origin is INJ] == [H, H, H, H, S, S, H]
    assert [m.text for m in t.messages if m.origin is HUMAN] == [
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)? websearch xterm.js tmux interactions",
    ]
    [short], _ = read(SPOTTER / "short.jsonl")
    assert [m.role for m in short.messages if m.origin is INJ] == [H, S, S]


def test_subagent_files_become_linked_transcripts() -> None:
    [agent], _ = read(SPOTTER / BIG_ID / "subagents" / "agent-a2898e3.jsonl")
    assert shape(agent) == {
        (H, AGENT, TEXT): 1,
        (A, AGENT, TEXT): 7,
        (A, AGENT, CALL): 33,
        (T, TOOL, RESULT): 33,
    }
    assert agent.messages[0].text.startswith("Very thorough exploration.")  # the parent's Task prompt
    assert agent.model == "claude-sonnet-4-5-20250929"
    [compaction], _ = read(SPOTTER / BIG_ID / "subagents" / "agent-acompact-e1f845.jsonl")
    assert shape(compaction) == {(H, INJ, TEXT): 4, (A, COMP, TEXT): 1}
    assert compaction.meta["compaction_run"] is True
    layout = STAGE0 / "subagent-layout" / "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f" / "subagents"
    [child], _ = read(layout / "agent-a0ad4f44468bdf20d.jsonl")
    assert child.meta["agent_type"] == "general-purpose" and child.meta["spawn_depth"] == 1


def test_inline_sidechain_lines_form_their_own_transcript() -> None:
    side, main, _ = read(STAGE0 / "stage0-claude-small.jsonl")[0]
    assert side.meta["inline_sidechain"] is True
    assert [(m.key, m.role, m.origin, m.kind) for m in side.messages] == [
        ("u1", H, AGENT, TEXT),
        ("a1", A, AGENT, TEXT),
        ("a1:2", A, AGENT, CALL),
        ("u2:0", T, TOOL, RESULT),
        ("u2b:0", T, TOOL, RESULT),
        ("a2", A, AGENT, TEXT),
        ("a3", A, AGENT, TEXT),
        ("u3", H, COMP, TEXT),
    ]
    assert main.title == "Stage0 small fixture"  # custom-title wins over ai-title
    assert [(m.key, m.origin) for m in main.messages][-1] == ("att-nested-7", HUMAN)  # queued_command
    assert (main.model, main.cwd) == ("claude-opus-5", "/tmp")


def test_older_and_newer_shapes_in_one_file() -> None:
    [t], _ = read(STAGE0 / "stage0-claude-schema_drift.jsonl")
    assert [(m.role, m.origin, m.kind, m.text) for m in t.messages] == [
        (H, HUMAN, TEXT, "Open README"),
        (A, AGENT, CALL, "bash: cat README.md"),
        (T, TOOL, RESULT, "# Title\n\nBody"),
        (A, AGENT, TEXT, "Read README and extracted the title."),
        (H, INJ, TEXT, "List files"),  # origin.kind = task-notification
    ]


def test_duplicate_lines_are_stored_once(tmp_path: Path) -> None:
    original = (SPOTTER / "short.jsonl").read_bytes()
    path = tmp_path / "short.jsonl"
    path.write_bytes(original + original)
    [t], report = read(path)
    [reference], _ = read(SPOTTER / "short.jsonl")
    assert [(m.key, m.text) for m in t.messages] == [(m.key, m.text) for m in reference.messages]
    assert report.skipped == {"duplicate_uuid": 11}  # 2+1+1+2+5 user/assistant/local_command lines


def test_resume_replays_land_in_the_session_they_came_from(tmp_path: Path) -> None:
    first = [
        user("u1", "fix the bug", "S1"),
        assistant("a1", "msg_a", [{"type": "text", "text": "Fixed."}], "S1"),
    ]
    write_lines(tmp_path / "S1.jsonl", *first)
    resumed = write_lines(tmp_path / "S2.jsonl", *first, user("u2", "now add a test", "S2"))
    [original], _ = read(tmp_path / "S1.jsonl")
    copy, new = read(resumed)[0]
    assert (copy.external_id, copy.meta["partial_copy"]) == ("S1", True)
    assert [m.key for m in copy.messages] == [m.key for m in original.messages] == ["u1", "msg:msg_a"]
    assert (new.external_id, new.parent_external_id, [m.text for m in new.messages]) == (
        "S2",
        "S1",
        ["now add a test"],
    )


def test_titles_come_from_custom_then_ai_then_summary(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "s1.jsonl",
        {"type": "summary", "summary": "Old summary", "leafUuid": "u1"},
        user("u1", "hello"),
        {"type": "ai-title", "sessionId": "s1", "aiTitle": "AI title"},
    )
    assert read(path)[0][0].title == "AI title"
    path.write_bytes(path.read_bytes().replace(b'{"type": "ai-title"', b'{"type": "other-title"', 1))
    [t], report = read(path)
    assert t.title == "Old summary" and report.skipped == {"unknown_type:other-title": 1}


def test_tool_results_are_whole_and_marked_for_the_store_to_cut() -> None:
    [t], _ = read(BIG)
    messages = {m.key: m for m in t.messages if m.kind is RESULT}
    longest = messages["result:toolu_01K5BegAi12wHgGD6yU8D81T"]
    assert len(longest.text) == 30_796  # as in the file: the adapter cuts nothing
    assert longest.cuts == (Cut(0, 30_796, 2000),)
    stored = {key: scrub_then_cap(m.text, m.cuts).text for key, m in messages.items()}
    assert stored[longest.key].endswith("\n[… 28,796 more characters cut]")
    assert len(stored[longest.key].split("\n[…")[0]) == 2000
    assert max(len(text) for text in stored.values()) < 2100
    [small], _ = read(BIG, tool_text_cap=40)
    for m in small.messages:
        if m.kind in (CALL, RESULT):
            assert len(scrub_then_cap(m.text, m.cuts).text.split("\n[…")[0]) <= 40
    empty = [m for m in t.messages if m.kind is RESULT and m.text == "[empty result]"]
    assert len(empty) == 15


def test_images_and_data_urls_become_markers(tmp_path: Path) -> None:
    pixel = "data:image/png;base64," + "iVBORw0KGgo" * 50_000
    path = write_lines(
        tmp_path / "s1.jsonl",
        user(
            "u1", [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]
        ),
        user("u2", f"see {pixel} and data:application/pdf;base64,JVBERi0x please"),
        assistant(
            "a1", "m1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x.png"}}]
        ),
        user(
            "u3",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "image"}, {"type": "text", "text": "ok"}],
                }
            ],
        ),
    )
    [t], _ = read(path)
    assert [m.text for m in t.messages] == [
        "[image]",
        "see [image] and [data URL] please",
        "Read: x.png",
        "[image]\nok",
    ]
    assert t.messages[3].tool_name == "Read"


def test_bad_lines_are_counted_and_good_lines_still_come_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1_000_000)
    path = write_lines(
        tmp_path / "s1.jsonl",
        user("u1", "first"),
        b"{this is not json\n",
        b'{"type":"user","uuid":"u2","sessionId":"s1","message":{"content":"caf\xc3\xa9 \xff\xfe ok"}}\n',
        b'{"type":"user","uuid":"u3","sessionId":"s1","message":{"content":"lone \\ud800 surrogate"}}\n',
        b'{"type":"user","uuid":"u4","sessionId":"s1","message":{"content":"cesu \xed\xa0\x80 bytes"}}\n',
        {"type": "hologram", "uuid": "x"},
        {"type": ["not", "a", "string"]},
        {"uuid": "no-type"},
        b"\n",
        b"[1, 2, 3]\n",
        user("u5", "x" * 900_000),  # huge but under the limit: parsed, text capped
        user("u6", "y" * 1_200_000),  # over the limit: skipped unread
        user("u7", "still here"),
        user("u8", "z", timestamp="yesterday"),
        b'{"type":"user","uuid":"u9","sessionId":"s1","message":{"content":"torn',
    )
    [t], report = read(path)
    assert report.skipped == {
        "bad_json": 1,
        "invalid_utf8": 2,  # \xff\xfe, and CESU-8 surrogate bytes (not valid UTF-8 either)
        "lone_surrogate": 1,
        "unknown_type:hologram": 1,
        "unknown_type:<not a string>": 1,
        "unknown_type:<missing>": 1,
        "blank_line": 1,
        "not_object": 1,
        "oversized_line": 1,
        "bad_timestamp": 1,
        "torn_line": 1,
    }
    assert report.lines_read == 15
    texts = {m.key: m.text for m in t.messages}
    assert list(texts) == ["u1", "u2", "u3", "u4", "u5", "u7", "u8"]
    assert texts["u2"] == "café \ufffd\ufffd ok"
    assert texts["u3"] == "lone \ufffd surrogate" and texts["u4"] == "cesu \ufffd\ufffd\ufffd bytes"
    long_text = next(m for m in t.messages if m.key == "u5")
    assert scrub_then_cap(long_text.text, long_text.cuts).text.endswith("[… 800,000 more characters cut]")
    assert t.messages[-1].timestamp is None


def test_a_torn_line_is_read_once_complete_and_keys_stay_the_same(tmp_path: Path) -> None:
    whole = json.dumps(user("u2", "second")).encode() + b"\n"
    path = write_lines(tmp_path / "s1.jsonl", user("u1", "first"), whole[:-10])
    [before], report = read(path)
    assert [m.key for m in before.messages] == ["u1"] and report.skipped == {"torn_line": 1}
    path.write_bytes(path.read_bytes() + whole[-10:])
    [after], report = read(path)
    assert [m.key for m in after.messages] == ["u1", "u2"] and not report.skipped
    assert after.messages[0] == before.messages[0]


def test_empty_missing_and_unreadable_files_never_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read(empty) == ([], ParseReport(0, Counter({"empty_file": 1}), [f"{empty}: the file is empty"]))
    transcripts, report = read(tmp_path / "gone.jsonl")
    assert transcripts == [] and report.skipped == {"unreadable": 1}
    locked = write_lines(tmp_path / "locked.jsonl", user("u1", "secret"))
    real_open = os.open

    def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)  # root can read a chmod 000 file, so refuse it here
    transcripts, report = read(locked)
    assert transcripts == [] and report.skipped == {"unreadable": 1}
    assert "Permission denied" in report.errors[0]


def test_default_roots_follow_claude_config_dir_and_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, custom = tmp_path / "home", tmp_path / "custom"
    for base in (home / ".claude", custom, home / ".config" / "claude"):
        (base / "projects").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{custom}, {tmp_path / 'missing'}")
    assert ADAPTER.default_roots() == [
        custom / "projects",
        home / ".claude" / "projects",
        home / ".config" / "claude" / "projects",
    ]


def test_discovery_covers_every_subagent_layout_and_skips_side_files(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-me-app"
    files = [
        "sess.jsonl",
        "agent-old.jsonl",  # 2.0.x subagent beside the session
        "sess/subagents/agent-a1.jsonl",
        "sess/subagents/agent-a1.meta.json",
        "sess/subagents/journal.jsonl",
        "sess/subagents/workflows/run1/agent-w.jsonl",
        "sess/tool-results/toolu_1.txt",
        "sessions-index.json",
    ]
    for name in files:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("{}\n")
    found = [p.relative_to(project).as_posix() for p in ADAPTER.discover([tmp_path])]
    assert found == ["agent-old.jsonl", "sess.jsonl", "sess/subagents/agent-a1.jsonl"]
    assert list(ADAPTER.discover([project / "sess.jsonl"])) == [project / "sess.jsonl"]


def test_beside_layout_subagent_links_to_the_session_in_its_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "agent-b7.jsonl", user("u1", "look around", "parent-1", isSidechain=True))
    [t], _ = read(path)
    assert (t.external_id, t.parent_external_id, t.agent_id) == ("parent-1#agent-b7", "parent-1", "b7")
    assert t.messages[0].origin is AGENT


# -- sessions-index.json --------------------------------------------------------------------------


def facts(path: Path) -> list[tuple[str, str | None, str | None]]:
    transcripts, report = read(path)
    assert not report.skipped
    return [(t.external_id, t.title, t.cwd) for t in transcripts]


def index_file(folder: Path, *entries: Any) -> Path:
    path = folder / "sessions-index.json"
    path.write_text(json.dumps({"version": 1, "entries": list(entries)}), encoding="utf-8")
    return path


def test_the_index_fills_the_title_and_cwd_a_session_does_not_state() -> None:
    assert facts(TITLED / f"{S1}.jsonl") == [(S1, "Upload client retries", "/home/me/app")]
    assert facts(TITLED / S1 / "subagents" / "agent-a1.jsonl") == [(f"{S1}#agent-a1", None, "/home/me/app")]
    # its own summary line and cwd win over the index's "Stale listing summary" and projectPath
    assert facts(TITLED / f"{S2}.jsonl") == [(S2, "Release notes for 1.4", "/home/me/app/docs")]
    assert facts(TITLED / f"{S3}.jsonl") == [(S3, None, None)]  # not in the index


def test_without_an_index_everything_reads_as_before(tmp_path: Path) -> None:
    bare = tmp_path / "-home-me-app"
    shutil.copytree(TITLED, bare, ignore=shutil.ignore_patterns("sessions-index.json"))
    assert facts(bare / f"{S1}.jsonl") == [(S1, None, None)]
    assert facts(bare / S1 / "subagents" / "agent-a1.jsonl") == [(f"{S1}#agent-a1", None, None)]
    assert facts(bare / f"{S2}.jsonl") == [(S2, "Release notes for 1.4", "/home/me/app/docs")]
    [plain], _ = read(bare / f"{S1}.jsonl")
    [indexed], _ = read(TITLED / f"{S1}.jsonl")
    assert replace(indexed, title=None, cwd=None, source_path=plain.source_path) == plain


def test_every_title_the_file_states_beats_the_index(tmp_path: Path) -> None:
    index_file(
        tmp_path,
        *({"sessionId": s, "summary": "From the index", "projectPath": "/p"} for s in ("s1", "s2", "s3")),
    )
    custom = write_lines(
        tmp_path / "s1.jsonl",
        user("u1", "hi"),
        {"type": "custom-title", "sessionId": "s1", "customTitle": "Mine"},
    )
    ai = write_lines(
        tmp_path / "s2.jsonl",
        user("u2", "hi", "s2"),
        {"type": "ai-title", "sessionId": "s2", "aiTitle": "AI's"},
    )
    orphan = write_lines(  # its summary line points into another file: only the index names it
        tmp_path / "s3.jsonl",
        {"type": "summary", "summary": "Elsewhere", "leafUuid": "gone"},
        user("u3", "hi", "s3"),
    )
    assert [t.title for path in (custom, ai) for t in read(path)[0]] == ["Mine", "AI's"]
    [t], report = read(orphan)
    assert t.title == "From the index" and report.skipped == {"orphan_summary": 1}


def test_a_line_cwd_beats_project_path_and_a_blank_summary_is_no_title(tmp_path: Path) -> None:
    index_file(tmp_path, {"sessionId": "s1", "summary": "   ", "projectPath": "/from/index"})
    path = write_lines(tmp_path / "s1.jsonl", user("u1", "hi"), user("u2", "there", cwd="/from/line"))
    assert facts(path) == [("s1", None, "/from/line")]
    write_lines(path, user("u1", "hi"))
    assert facts(path) == [("s1", None, "/from/index")]


BAD_SESSION_INDEXES: dict[str, bytes] = {
    "empty": b"",
    "not json": b"{this is not json",
    "torn write": json.dumps({"version": 1, "entries": [{"sessionId": "s1", "summary": "T"}]}).encode()[:-5],
    "a list": b'[{"sessionId": "s1", "summary": "T", "projectPath": "/p"}]',
    "entries not a list": b'{"version": 1, "entries": {"s1": {"summary": "T"}}}',
    "entries of the wrong types": (
        b'{"entries": [1, "s1", null, {"sessionId": 5, "summary": "T"}, {"summary": "no id"},'
        b' {"sessionId": "s1", "summary": 7, "projectPath": ["/p"]}, {"sessionId": "", "summary": "T"}]}'
    ),
    "invalid utf-8": b"\xff\xfe\x00{\x00",
    "too deep": b'{"entries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("case", sorted(BAD_SESSION_INDEXES))
def test_a_bad_index_is_ignored_and_the_session_still_reads(tmp_path: Path, case: str) -> None:
    path = write_lines(tmp_path / "s1.jsonl", user("u1", "hi"))
    [baseline], _ = read(path)
    (tmp_path / "sessions-index.json").write_bytes(BAD_SESSION_INDEXES[case])
    [t], report = read(path)
    assert t == baseline and not report.skipped


def test_an_index_that_is_not_a_file_is_ignored(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s1.jsonl", user("u1", "hi"))
    (tmp_path / "sessions-index.json").mkdir()
    assert facts(path) == [("s1", None, None)]


def test_index_entries_survive_bad_bytes_and_prefer_the_main_session(tmp_path: Path) -> None:
    path = tmp_path / "sessions-index.json"
    path.write_bytes(
        b'\xef\xbb\xbf{"version": 2, "entries": ['
        b'{"sessionId": "s1", "summary": "caf\xc3 \\ud800 ok", "projectPath": "/p", "isSidechain": false},'
        b'{"sessionId": "s1", "summary": "sidechain copy", "projectPath": "/q", "isSidechain": true},'
        b'{"sessionId": "s2", "summary": "first", "isSidechain": true},'
        b'{"sessionId": "s2", "summary": "  second  ", "projectPath": "/r"}]}'
    )
    assert claude_code.load_sessions_index(path) == {
        "s1": claude_code.IndexEntry("caf\ufffd \ufffd ok", "/p"),
        "s2": claude_code.IndexEntry("second", "/r"),
    }


def test_the_index_is_parsed_once_per_folder_and_only_when_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[Path] = []
    real_load = claude_code.load_sessions_index

    def counting_load(path: Path) -> dict[str, claude_code.IndexEntry]:
        loads.append(path)
        return real_load(path)

    monkeypatch.setattr(claude_code, "load_sessions_index", counting_load)
    adapter = claude_code.ClaudeCodeAdapter()
    folder = tmp_path / "copy"
    shutil.copytree(TITLED, folder)

    def title(path: Path) -> list[str | None]:
        return [t.title for t in adapter.read(path, ReadOptions(), ParseReport())]

    assert title(folder / f"{S2}.jsonl") == ["Release notes for 1.4"] and loads == []  # needs nothing
    assert title(folder / f"{S1}.jsonl") == ["Upload client retries"]
    assert title(folder / S1 / "subagents" / "agent-a1.jsonl") == [None]
    assert title(folder / f"{S3}.jsonl") == [None]
    assert loads == [folder / "sessions-index.json"]
    index_file(folder, {"sessionId": S1, "summary": "Retries, renamed", "projectPath": "/home/me/app"})
    assert title(folder / f"{S1}.jsonl") == ["Retries, renamed"] and len(loads) == 2
