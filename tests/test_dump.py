"""`recall dump`: explicit messages and host transcripts, summaries, re-dumps and conflicts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adapters import get_adapter
from recall.dump import dump_session
from recall.errors import ConflictingSource, InvalidInput, NotFound
from recall.ingest import run_import
from recall.models import RecordKind
from recall.store import Store
from recall.summary import build_summary

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"

MESSAGES = [
    {"role": "user", "content": "The checkout test is flaky, please look at tests/test_checkout.py"},
    {"role": "assistant", "content": "Root cause: the fixture caches a token that expires. We decided to use a fresh token per test."},
    {"role": "assistant", "content": "All 20 runs pass now.", "timestamp": "2026-11-20T10:00:00Z"},
]  # fmt: skip


def test_explicit_messages_become_a_session_with_a_derived_summary(store: Store) -> None:
    result = dump_session(
        store, title="flaky checkout", source="mcp", session_id="s-1", messages=MESSAGES, cwd="/x/shop"
    )
    assert result.messages_added == 3 and result.project == "shop"
    summary = store.require(RecordKind.SESSION_SUMMARY, result.summary_id)
    assert summary["provenance"] == "derived"
    assert summary["title"] == "flaky checkout"
    assert "Asked: The checkout test is flaky" in summary["content"]
    assert "We decided to use a fresh token per test." in summary["content"]
    assert "Root cause" in summary["content"]
    roles = [m["role"] for m in store.session_messages(result.session_id)]
    assert roles == ["user", "assistant", "assistant"]


def test_a_second_dump_adds_only_what_is_missing(store: Store) -> None:
    dump_session(store, title="t", source="mcp", session_id="s-2", messages=MESSAGES[:2], cwd="/x/p")
    again = dump_session(store, title="t", source="mcp", session_id="s-2", messages=MESSAGES, cwd="/x/p")
    assert again.messages_added == 1
    assert len(store.session_messages(again.session_id)) == 3
    assert store.connection.execute("SELECT count(*) FROM session_summaries").fetchone()[0] == 1


def test_a_dump_of_an_imported_host_session_adds_nothing_new(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], embed_budget_seconds=0)
    result = dump_session(store, title=None, source="claude", path=SPOTTER / "short.jsonl")
    assert result.messages_added == 0
    assert result.external_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert store.require(RecordKind.SESSION_SUMMARY, result.summary_id)["title"]


def test_a_host_dump_marks_its_file_so_the_next_import_skips_it(store: Store) -> None:
    dump_session(store, title="t", source="claude", path=SPOTTER / "short.jsonl")
    summary = run_import(
        store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], embed_budget_seconds=0
    )
    assert (summary.files_unchanged, summary.files_read) == (1, 0)


def test_a_dump_claiming_another_hosts_session_is_refused(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], embed_budget_seconds=0)
    with pytest.raises(ConflictingSource, match="already stored from claude"):
        dump_session(store, title="t", source="mcp", session_id="55604662-cf2a-4331-851a-ec234028f8ca",
                     messages=MESSAGES)  # fmt: skip
    assert store.connection.execute("SELECT count(*) FROM sessions WHERE host = 'mcp'").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "give the session's messages"),
        ([{"role": "robot", "content": "x"}], "role must be"),
        ([{"role": "user", "content": ""}], "non-empty"),
        ([{"role": "user", "content": "x", "timestamp": "yesterday"}], "timestamp"),
        (["just a string"], "not an object"),
    ],
)
def test_bad_explicit_messages_are_refused_clearly(store: Store, messages: list, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        dump_session(store, title="t", source="mcp", messages=messages)


def test_a_secret_in_dumped_messages_never_reaches_the_file(store: Store, db_path: Path) -> None:
    key = "sk-ant-api03-" + "a1B2c3D4" * 11
    dump_session(store, title="keys", source="mcp", messages=[{"role": "user", "content": f"use {key}"}])
    assert key.encode() not in db_path.read_bytes()


def test_summary_lists_files_and_commands_from_tool_calls() -> None:
    rows = [
        {"role": "user", "origin": "human", "kind": "text", "tool_name": None, "content": "Fix the build"},
        {"role": "assistant", "origin": "agent", "kind": "tool_call", "tool_name": "Bash", "content": "Bash: make test"},
        {"role": "assistant", "origin": "agent", "kind": "tool_call", "tool_name": "Edit", "content": "Edit: src/app.py"},
        {"role": "assistant", "origin": "agent", "kind": "text", "tool_name": None,
         "content": "The fix was to pin the compiler. Settled on gcc 12."},
    ]  # fmt: skip
    draft = build_summary("build", rows)
    assert draft.meta["commands"] == ["make test"]
    assert draft.meta["files"] == ["src/app.py"]
    assert "Decisions:\n- Settled on gcc 12." in draft.content
    assert "Learnings:\n- The fix was to pin the compiler." in draft.content


@pytest.mark.parametrize(
    ("said", "heading"),
    [
        ("We decided to keep SQLite for the queue.", "Decisions"),
        ("Decision:ship the smaller build today.", "Decisions"),
        ("OK, let's go with the second layout then.", "Decisions"),
        ("We'll use the vendored parser from now on.", "Decisions"),
        ("We will use uv for every environment here.", "Decisions"),
        ("Going with Postgres for the reporting side.", "Decisions"),
        ("They chose to drop the Windows build for now.", "Decisions"),
        ("Settled on two workers after the benchmark.", "Decisions"),
        ("Use httpx instead of requests in the client.", "Decisions"),
        ("It TURNS OUT the cache was never invalidated.", "Learnings"),
        ("The fix is to pin the compiler version.", "Learnings"),
        ("The root cause is a stale lock file on disk.", "Learnings"),
        ("A gotcha: the CLI reads the config twice.", "Learnings"),
        ("I learned that the proxy strips the header.", "Learnings"),
        ("Lesson:rebase before the release branch is cut.", "Learnings"),
        ("Note to self: the staging key expires daily.", "Learnings"),
        ("The problem was a missing index on user_id.", "Learnings"),
        ("It failed because the token had expired already.", "Learnings"),
    ],
)
def test_summary_finds_each_kind_of_statement(said: str, heading: str) -> None:
    rows = [
        {"role": "user", "origin": "human", "kind": "text", "tool_name": None, "content": "Go on"},
        {"role": "assistant", "origin": "agent", "kind": "text", "tool_name": None,
         "content": f"Some context first.\n- {said}"},
    ]  # fmt: skip
    assert f"{heading}:\n- {said}" in build_summary("t", rows).content


def test_the_same_words_said_twice_are_two_messages(store: Store) -> None:
    said = [
        {"role": "user", "content": "yes"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "yes"},
    ]
    first = dump_session(store, title="t", source="mcp", session_id="rep", messages=said, cwd="/x/p")
    assert first.messages_added == 3
    again = dump_session(
        store, title="t", source="mcp", session_id="rep", messages=[*said, said[0]], cwd="/x/p"
    )
    assert again.messages_added == 1
    assert [m["content"] for m in store.session_messages(first.session_id)] == ["yes", "ok", "yes", "yes"]


def test_lone_surrogates_are_stored_as_replacement_characters(store: Store) -> None:
    result = dump_session(
        store, title="t", source="mcp", messages=[{"role": "user", "content": "caf\udce9 \ud83d"}]
    )
    assert store.session_messages(result.session_id)[0]["content"] == "caf\ufffd \ufffd"


@pytest.mark.parametrize("stamp", [1e20, float("nan"), float("inf"), 10**30, True])
def test_unusable_numeric_timestamps_are_refused_clearly(store: Store, stamp: object) -> None:
    with pytest.raises(InvalidInput, match="timestamp"):
        dump_session(
            store, title="t", source="mcp", messages=[{"role": "user", "content": "x", "timestamp": stamp}]
        )


def test_a_host_dump_stores_only_the_session_of_this_project(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Cursor database holds every project's composers: only the current one (and its subagents) is dumped."""
    from datetime import UTC, datetime

    import adapters
    from recall.transcript import Role, Transcript, TranscriptMessage

    def session(external_id: str, cwd: str, hour: int, parent: str | None = None) -> Transcript:
        message = TranscriptMessage("k1", Role.USER, f"hello from {external_id}")
        when = datetime(2026, 11, 1, hour, tzinfo=UTC)
        return Transcript("cursor", external_id, (message,), cwd=cwd, started_at=when, ended_at=when,
                          parent_external_id=parent)  # fmt: skip

    found = [
        session("compA", "/nowhere/projA", 9),
        session("compB-old", "/nowhere/projB", 8),
        session("compB", "/nowhere/projB", 10),
        session("compB#agent-1", "/nowhere/projB", 10, parent="compB"),
    ]

    class FakeCursor:
        name = "cursor"

        def discover(self, roots: object) -> list[Path]:
            source = tmp_path / "state.vscdb"
            source.write_text("x")
            return [source]

        def read(self, path: Path, options: object, report: object) -> list[Transcript]:
            return found

    monkeypatch.setattr(adapters, "get_adapter", lambda name: FakeCursor())
    result = dump_session(store, title="t", source="cursor", cwd="/nowhere/projB")
    assert result.external_id == "compB" and result.sessions == 2
    stored = store.connection.execute(
        "SELECT external_id, project FROM sessions ORDER BY external_id"
    ).fetchall()
    assert [tuple(row) for row in stored] == [("compB", "projB"), ("compB#agent-1", "projB")]


TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"


def test_dump_source_pi_and_gemini_read_the_named_file(store: Store, user_home: Path) -> None:
    pi_file = next((TRANSCRIPTS / "pi" / "real" / "agent-history").rglob("*.jsonl"))
    gemini_file = next((TRANSCRIPTS / "gemini" / "synthetic").rglob("session-*.jsonl"))

    pi = dump_session(store, title=None, source="pi", path=pi_file)
    gemini = dump_session(store, title=None, source="gemini", path=gemini_file)

    assert (pi.external_id, pi.messages_added) == ("019e963d-6bd6-7ade-8a49-256ac3391bdd", 2)
    assert (gemini.external_id, gemini.messages_added, gemini.project) == (
        "5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810", 10, "weather-cli")  # fmt: skip
    again = run_import(store, [get_adapter("pi")], paths=[pi_file], embed_budget_seconds=0)
    assert again.files_unchanged == 1  # the dump remembered the file it read


def test_dump_source_opencode_reads_the_session_by_id(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = TRANSCRIPTS / "opencode" / "synthetic" / "built-from-source" / "v1.2-sqlite" / "opencode"
    shutil.copytree(built, tmp_path / "opencode")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))

    result = dump_session(store, title=None, source="opencode", session_id="ses_4a6e1d0f7ffeV3kQ9tLmB2xZcR")

    assert (result.messages_added, result.sessions, result.project) == (19, 2, "invoice-api")
    with pytest.raises(NotFound, match="no opencode session ses_gone"):
        dump_session(store, title=None, source="opencode", session_id="ses_gone")


@pytest.mark.parametrize("host", ["grok", "jcode", "omp"])
def test_hosts_without_a_reader_dump_explicit_messages_under_their_own_name(store: Store, host: str) -> None:
    result = dump_session(
        store, title="t", source=host, session_id=f"{host}-1", messages=MESSAGES, cwd="/x/shop"
    )

    row = store.connection.execute("SELECT host FROM sessions WHERE id = ?", (result.session_id,)).fetchone()
    assert (row["host"], result.messages_added) == (host, 3)
    with pytest.raises(InvalidInput, match=f"recall has no {host} reader: give the session's messages"):
        dump_session(store, title="t", source=host, session_id=f"{host}-2")
