"""The Pi reader against the recorded sessions (v1 real, v3 real and synthetic) and hand-made files.

Expected counts were worked out from the fixture lines (tests/fixtures/transcripts/pi/PROVENANCE.txt)
with a separate script: every message entry is counted once whichever branch it is on, and the glued
line of each v1 file holds two entries. A session holds: user prompts + assistant messages with text
+ tool calls + tool results (+ a call and a result per ``!command``) + error notes of failed steps
+ compaction summaries.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adapters import get_adapter, pi
from adapters.base import ReadOptions
from recall.transcript import MessageKind, Origin, ParseReport, Role, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "pi"
PI_MONO = FIXTURES / "real" / "pi-mono" / "agent" / "sessions" / "--Users-badlogic-workspaces-pi-mono--"
DOCS_SESSION = PI_MONO / "2025-12-17T19-39-21-535Z_5fd1e58c-9635-410e-a644-133a96057c90.jsonl"
COMPACT_SESSION = PI_MONO / "2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl"
ADAPTER = get_adapter("pi")

U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM
HUMAN, AGENT, TOOL, INJ, COMP = Origin.HUMAN, Origin.AGENT, Origin.TOOL, Origin.INJECTED, Origin.COMPACTION
TEXT, CALL, RESULT = MessageKind.TEXT, MessageKind.TOOL_CALL, MessageKind.TOOL_RESULT


def read(path: Path, **options: Any) -> tuple[list[Transcript], ParseReport]:
    report = ParseReport()
    return list(ADAPTER.read(path, ReadOptions(**options), report)), report


def shape(transcript: Transcript) -> Counter[tuple[Role, Origin, MessageKind]]:
    return Counter((m.role, m.origin, m.kind) for m in transcript.messages)


EXPECTED = {
    # 44 prompts + 76 texts + 189 calls + 189 results + 6 failed steps + !npm run check + 1 compaction
    DOCS_SESSION: ("5fd1e58c-9635-410e-a644-133a96057c90", 507,
                   {(U, HUMAN, TEXT): 44, (A, AGENT, TEXT): 76, (A, AGENT, CALL): 189, (T, TOOL, RESULT): 190,
                    (S, INJ, TEXT): 6, (U, HUMAN, CALL): 1, (U, COMP, TEXT): 1}),
    # 77 + 203 + 432 + 429 (+1 for !open out.html) + 10 + 1 + 2 compactions (one glued to the last line)
    COMPACT_SESSION: ("2638daee-0588-4baa-bd33-68b4c002818e", 1155,
                      {(U, HUMAN, TEXT): 77, (A, AGENT, TEXT): 203, (A, AGENT, CALL): 432, (T, TOOL, RESULT): 430,
                       (S, INJ, TEXT): 10, (U, HUMAN, CALL): 1, (U, COMP, TEXT): 2}),
    next((FIXTURES / "real" / "agent-history").rglob("*.jsonl")): (
        "019e963d-6bd6-7ade-8a49-256ac3391bdd", 2, {(U, HUMAN, TEXT): 1, (A, AGENT, TEXT): 1}),
    # two turns, each followed by a v3 compaction
    next((FIXTURES / "schema-fixtures").rglob("*.jsonl")): (
        "019e19b4-eb48-746a-aa6b-8dfcfa37954b", 6, {(U, HUMAN, TEXT): 2, (A, AGENT, TEXT): 2, (U, COMP, TEXT): 2}),
}  # fmt: skip


@pytest.mark.parametrize("path", list(EXPECTED), ids=lambda p: p.name[:30])
def test_every_fixture_reads_with_the_counts_worked_out_by_hand(path: Path) -> None:
    session_id, total, kinds = EXPECTED[path]
    transcripts, report = read(path)

    assert not report.skipped, report.errors
    assert [t.external_id for t in transcripts] == [session_id]
    assert len(transcripts[0].messages) == total
    assert shape(transcripts[0]) == Counter(kinds)
    assert len({m.key for m in transcripts[0].messages}) == total


def test_header_gives_cwd_model_title_and_format_version() -> None:
    v1 = read(DOCS_SESSION)[0][0]
    v3 = read(next((FIXTURES / "real" / "agent-history").rglob("*.jsonl")))[0][0]

    assert v1.cwd == "/Users/badlogic/workspaces/pi-mono" and v1.model == "claude-opus-4-5"
    assert v1.meta["format_version"] == 1 and v1.title is None
    assert (v3.title, v3.model, v3.meta["format_version"]) == ("agent-history pi smoke", "gpt-5.5", 3)
    assert v3.cwd == "/tmp/agent-history-real-agent/pi/workspace"


def test_the_glued_line_gives_both_entries() -> None:
    """Line 440 of the docs session holds an assistant reply and the prompt "ok" with no newline."""
    transcript = read(DOCS_SESSION)[0][0]
    texts = [(m.role, m.text) for m in transcript.messages]

    done = texts.index((A, "Done."))
    assert texts[done + 1] == (U, "ok")


def test_thinking_is_kept_only_on_request() -> None:
    without = read(DOCS_SESSION)[0][0]
    with_thinking = read(DOCS_SESSION, include_thinking=True)[0][0]

    assert not [m for m in without.messages if m.kind is MessageKind.THINKING]
    assert len([m for m in with_thinking.messages if m.kind is MessageKind.THINKING]) == 182


# -- pi's own rewrite on open ----------------------------------------------------------------------


def migrate_like_pi(source: Path, target: Path) -> None:
    """What pi does when it opens a v1 file: parse each line (a glued line fails and is dropped), give
    every entry a new random id in a chain, turn ``firstKeptEntryIndex`` into an id, rename the
    ``hookMessage`` role, and rewrite the file (``session-manager.ts`` migrateV1ToV2/V2ToV3)."""
    entries = []
    for line in source.read_text(encoding="utf-8").strip().split("\n"):
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    rng, previous = random.Random(3), None
    for entry in entries:
        if entry["type"] == "session":
            entry["version"] = 3
            continue
        entry["id"], entry["parentId"] = f"{rng.getrandbits(32):08x}", previous
        previous = entry["id"]
    for entry in entries:
        index = entry.pop("firstKeptEntryIndex", None) if entry["type"] == "compaction" else None
        if isinstance(index, int) and index < len(entries) and entries[index]["type"] != "session":
            entry["firstKeptEntryId"] = entries[index]["id"]
        if entry["type"] == "message" and entry["message"].get("role") == "hookMessage":
            entry["message"]["role"] = "custom"
    target.write_text(
        "\n".join(json.dumps(e, separators=(",", ":")) for e in entries) + "\n", encoding="utf-8"
    )


def test_pis_rewrite_of_a_v1_file_reads_as_the_same_messages(tmp_path: Path) -> None:
    migrated = tmp_path / DOCS_SESSION.name
    migrate_like_pi(DOCS_SESSION, migrated)
    before = {m.key: m for m in read(DOCS_SESSION)[0][0].messages}
    after, report = read(migrated)

    assert not report.skipped and after[0].meta["format_version"] == 3
    kept = {m.key: m for m in after[0].messages}
    assert set(kept) <= set(before)  # nothing new: no message is read twice under a new key
    assert len(before) - len(kept) == 2  # pi dropped the glued line; its two entries stay stored
    assert all(kept[key].text == before[key].text for key in kept)


# -- the v2/v3 tree --------------------------------------------------------------------------------


def entry(kind: str, entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": f"2026-01-10T10:00:{second:02d}.000Z",
            **fields}  # fmt: skip


def said(role: str, text: str, second: int, **extra: Any) -> dict[str, Any]:
    return {
        "role": role,
        "content": [{"type": "text", "text": text}],
        "timestamp": 1768039200000 + second,
        **extra,
    }


def write(path: Path, *lines: dict[str, Any] | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    )
    return path


HEADER = {"type": "session", "version": 2, "id": "0195b000-0000-7000-8000-000000000001",
          "timestamp": "2026-01-10T10:00:00.000Z", "cwd": "/home/dev/shop"}  # fmt: skip


def test_a_branched_v2_tree_imports_every_entry_once(tmp_path: Path) -> None:
    path = write(
        tmp_path / "2026-01-10T10-00-00-000Z_0195b000-0000-7000-8000-000000000001.jsonl",
        HEADER,
        entry("message", "a1", None, 1, message=said("user", "Rename the cart module", 1)),
        entry(
            "message",
            "a2",
            "a1",
            2,
            message={**said("assistant", "Renamed it to basket.", 2), "model": "m-1"},
        ),
        # /tree: back to a1, a second answer on another branch, summarised when leaving the first
        entry("branch_summary", "b1", "a1", 3, fromId="a2", summary="Tried renaming to basket."),
        entry(
            "message",
            "b2",
            "b1",
            4,
            message={**said("assistant", "Renamed it to trolley.", 4), "model": "m-1"},
        ),
        entry("message", "b3", "b2", 5, message=said("hookMessage", "lint passed", 5)),
        entry(
            "custom_message", "b4", "b3", 6, customType="notes", content="remember the tests", display=True
        ),
        entry("custom", "b5", "b4", 7, customType="state", data={"x": 1}),
        entry("label", "b6", "b5", 8, targetId="b2", label="good"),
        entry("session_info", "b7", "b6", 9, name="cart rename"),
        entry("session_info", "b8", "b7", 10, name="basket vs trolley"),
    )
    transcripts, report = read(path)

    assert not report.skipped
    [transcript] = transcripts
    assert transcript.title == "basket vs trolley"
    assert [(m.role, m.origin, m.text) for m in transcript.messages] == [
        (U, HUMAN, "Rename the cart module"),
        (A, AGENT, "Renamed it to basket."),
        (U, COMP, "Tried renaming to basket."),
        (A, AGENT, "Renamed it to trolley."),
        (U, INJ, "lint passed"),
        (U, INJ, "remember the tests"),
    ]


def test_a_fork_links_to_the_session_it_was_forked_from(tmp_path: Path) -> None:
    parent = "/home/dev/.pi/agent/sessions/--home-dev-shop--/2026-01-09T08-00-00-000Z_0195a000-0000-7000-8000-0000000000aa.jsonl"
    path = write(tmp_path / "fork.jsonl", {**HEADER, "version": 3, "parentSession": parent},
                 entry("message", "c1", None, 1, message=said("user", "go on", 1)))  # fmt: skip

    [transcript] = read(path)[0]
    assert transcript.parent_external_id == "0195a000-0000-7000-8000-0000000000aa"
    assert transcript.meta["parent_session_file"] == parent


def test_bad_lines_are_counted_and_the_rest_reads(tmp_path: Path) -> None:
    path = write(
        tmp_path / "x_0195b000-0000-7000-8000-000000000002.jsonl",
        {**HEADER, "id": "0195b000-0000-7000-8000-000000000002"},
        entry("message", "d1", None, 1, message=said("user", "first", 1)),
        b"{not json at all\n",
        b'{"type":"message","id":"d2","parentId":"d1","timestamp":"2026-01-10T10:00:02.000Z","message":'
        b'{"role":"user","content":[{"type":"text","text":"caf\xe9 \xff"}]}}\n',
        entry("message", "d3", "d2", 3, message="not an object"),
        entry("mystery", "d4", "d3", 4),
        entry("message", "d5", "d4", 5, message=said("user", "last whole line", 5)),
        b'{"type":"message","id":"d6","parentId":"d5","timestamp":"2026-01-10T10:00:06.000Z","mess',
    )
    [transcript], report = read(path)

    assert report.skipped == Counter(
        {"bad_json": 1, "invalid_utf8": 1, "bad_record": 1, "unknown_type:mystery": 1, "torn_line": 1}
    )
    assert [m.text for m in transcript.messages] == ["first", "caf\ufffd \ufffd", "last whole line"]


def test_an_agent_dir_named_by_the_environment_is_searched(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "elsewhere"
    target = moved / "sessions" / "--home-dev-shop--" / DOCS_SESSION.name
    target.parent.mkdir(parents=True)
    shutil.copy(DOCS_SESSION, target)
    (user_home / ".pi" / "agent" / "sessions").mkdir(parents=True)

    monkeypatch.setenv(pi.AGENT_DIR_ENV, str(moved))
    assert list(ADAPTER.discover()) == [target]
    monkeypatch.delenv(pi.AGENT_DIR_ENV)
    assert ADAPTER.default_roots() == [user_home / ".pi" / "agent" / "sessions"]
