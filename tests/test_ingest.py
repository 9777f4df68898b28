"""`recall import` end to end: real fixtures of every host into a real database file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adapters import get_adapter
from recall.ingest import run_import
from recall.project import resolve_project
from recall.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SPOTTER = FIXTURES / "claude-code" / "real" / "spotter"
LOCALPUSH = FIXTURES / "codex" / "real" / "localpush"
TITLES = Path(__file__).parent / "fixtures" / "session-titles"
CURSOR = FIXTURES / "cursor"


def _count(store: Store, sql: str, *args: object) -> int:
    return int(store.connection.execute(sql, args).fetchone()[0])


@pytest.mark.parametrize(
    ("host", "root"),
    [
        ("claude", FIXTURES / "claude-code"),
        ("codex", FIXTURES / "codex"),
        ("cursor", CURSOR),
        ("opencode", FIXTURES / "opencode"),
        ("pi", FIXTURES / "pi"),
        ("gemini", FIXTURES / "gemini"),
    ],
)
def test_every_fixture_of_every_host_imports(store: Store, host: str, root: Path) -> None:
    summary = run_import(store, [get_adapter(host)], paths=[root], embed_budget_seconds=0)
    assert summary.files_failed == 0, summary.errors
    assert summary.sessions_new > 0 and summary.messages_added > 0
    stored = _count(store, "SELECT count(*) FROM messages")
    assert stored == summary.messages_added
    assert _count(store, "SELECT count(*) FROM messages WHERE provenance != 'verbatim'") == 0
    # Projects come from each session's cwd through the one resolver, never from folder names.
    for cwd, project in store.connection.execute("SELECT cwd, project FROM sessions WHERE cwd IS NOT NULL"):
        assert project == resolve_project(cwd)


def test_claude_subagents_link_to_their_parent_session(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    parent = store.connection.execute(
        "SELECT id FROM sessions WHERE external_id = '4d5611e5-241a-462a-8d15-5122611a9569'"
    ).fetchone()[0]
    children = store.connection.execute(
        "SELECT agent_id FROM sessions WHERE parent_id = ? ORDER BY agent_id", (parent,)
    ).fetchall()
    assert [c[0] for c in children] == ["a2898e3", "acompact-e1f845"]
    # The worktree session (spotter-worktrees/spotter-dov, gone on this machine) and its subagents
    # join the repository's project beside the three sessions of the main checkout.
    assert _count(store, "SELECT count(*) FROM sessions WHERE project = 'spotter'") == 6


def test_second_import_writes_nothing(store: Store) -> None:
    adapters = [get_adapter("claude"), get_adapter("codex")]
    paths = [SPOTTER, LOCALPUSH]
    first = run_import(store, adapters, paths=paths, embed_budget_seconds=0)
    latest = "SELECT max(updated_at) FROM messages"
    before = _count(store, "SELECT count(*) FROM messages"), store.connection.execute(latest).fetchone()[0]
    second = run_import(store, adapters, paths=paths, embed_budget_seconds=0)
    assert second.files_unchanged == first.files_read
    assert second.messages_added == 0 and second.sessions_new == 0
    forced = run_import(store, adapters, paths=paths, embed_budget_seconds=0, force=True)
    assert forced.files_read == first.files_read
    assert (forced.messages_added, forced.messages_updated, forced.sessions_new) == (0, 0, 0)
    after = _count(store, "SELECT count(*) FROM messages"), store.connection.execute(latest).fetchone()[0]
    assert after == before


def test_appended_lines_add_exactly_those_messages(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "projects" / "-x" / "session.jsonl"
    source.parent.mkdir(parents=True)
    lines = (SPOTTER / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    source.write_text("".join(lines), encoding="utf-8")
    first = run_import(store, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    last = json.loads(lines[-1])
    extra = []
    for n in range(3):
        line = dict(
            last, uuid=f"00000000-0000-4000-8000-00000000000{n}", parentUuid=last["uuid"], type="user"
        )
        line["message"] = {"role": "user", "content": f"follow-up question number {n}"}
        line.pop("toolUseResult", None)
        extra.append(json.dumps(line) + "\n")
    with source.open("a", encoding="utf-8") as handle:
        handle.writelines(extra)
    second = run_import(store, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    assert second.messages_added == 3
    assert second.sessions_new == 0 and second.sessions_updated == 1
    total = _count(store, "SELECT count(*) FROM messages")
    assert total == first.messages_added + 3
    ordinals = [r[0] for r in store.connection.execute("SELECT ordinal FROM messages ORDER BY ordinal")]
    assert ordinals == list(range(total))


def test_a_torn_last_line_waits_for_the_next_import(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "torn.jsonl"
    lines = (SPOTTER / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    source.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    first = run_import(store, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    assert first.skipped["torn_line"] == 1
    source.write_text("".join(lines), encoding="utf-8")
    run_import(store, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    complete = Store(tmp_path / "fresh.db")
    whole = run_import(complete, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    assert _count(store, "SELECT count(*) FROM messages") == whole.messages_added
    complete.close()


def test_a_planted_secret_in_a_tool_result_is_redacted(store: Store, tmp_path: Path) -> None:
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2
    source = tmp_path / "secret.jsonl"
    lines = (SPOTTER / "tool_heavy.jsonl").read_text(encoding="utf-8").splitlines()
    planted = []
    for raw in lines:
        record = json.loads(raw)
        content = record.get("message", {}).get("content")
        if isinstance(content, list) and content and content[0].get("type") == "tool_result" and not planted:
            content[0]["content"] = f"export GITHUB_TOKEN={secret}\nok"
            planted.append(record["uuid"])
        with source.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    summary = run_import(store, [get_adapter("claude")], paths=[source], embed_budget_seconds=0)
    assert planted and summary.redactions
    texts = [r[0] for r in store.connection.execute("SELECT content FROM messages")]
    assert not any(secret in text for text in texts)
    assert any("[REDACTED:" in text and "GITHUB_TOKEN=" in text for text in texts)


def test_dry_run_counts_but_writes_nothing(store: Store) -> None:
    dry = run_import(store, [get_adapter("claude")], paths=[SPOTTER], dry_run=True, embed_budget_seconds=0)
    assert dry.messages_added > 0
    assert _count(store, "SELECT count(*) FROM messages") == 0
    assert _count(store, "SELECT count(*) FROM source_files") == 0
    real = run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    assert real.messages_added == dry.messages_added


def test_an_unreadable_file_is_reported_and_the_rest_imports(store: Store, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    shutil.copy(SPOTTER / "short.jsonl", good)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'\xff\xfe not json at all \x00\n{"type": "user"\n')
    summary = run_import(store, [get_adapter("claude")], paths=[tmp_path], embed_budget_seconds=0)
    assert summary.files_failed == 0
    assert summary.messages_added > 0
    assert sum(summary.skipped.values()) >= 1


def test_imports_write_a_derived_summary_per_top_level_session(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    top = _count(store, "SELECT count(*) FROM sessions WHERE parent_external_id IS NULL")
    assert _count(store, "SELECT count(*) FROM session_summaries WHERE provenance = 'derived'") == top


def test_a_file_that_fails_to_store_is_counted_and_the_rest_imports(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    real = store.import_transcripts
    calls = {"n": 0}

    def flaky(*args: object, **kwargs: object):
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.IntegrityError("CHECK constraint failed: role")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "import_transcripts", flaky)
    summary = run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    assert summary.files_failed == 1 and "could not store" in summary.errors[0]
    assert summary.files_read == 6 and summary.messages_added > 0


def test_source_files_count_sessions_per_read_not_cumulatively(store: Store) -> None:
    run_import(store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], embed_budget_seconds=0)
    run_import(
        store, [get_adapter("claude")], paths=[SPOTTER / "short.jsonl"], embed_budget_seconds=0, force=True
    )
    assert store.connection.execute("SELECT sessions FROM source_files").fetchone()[0] == 1


def test_session_titles_from_the_hosts_indexes_are_stored(store: Store, user_home: Path) -> None:
    """Codex's session_index.jsonl and Claude Code's sessions-index.json name the stored sessions."""
    codex_home = TITLES / "codex-home"
    claude_projects = TITLES / "claude-projects"
    run_import(store, [get_adapter("codex")], paths=[codex_home], embed_budget_seconds=0)
    summary = run_import(store, [get_adapter("claude")], paths=[claude_projects], embed_budget_seconds=0)
    assert summary.files_failed == 0 and not summary.skipped
    rows = store.connection.execute(
        "SELECT host, external_id, title, cwd FROM sessions ORDER BY host, external_id"
    )
    assert [tuple(row) for row in rows] == [
        ("claude", "aaaaaaaa-0000-4000-8000-000000000001", "Upload client retries", "/home/me/app"),
        ("claude", "aaaaaaaa-0000-4000-8000-000000000001#agent-a1", None, "/home/me/app"),
        ("claude", "aaaaaaaa-0000-4000-8000-000000000002", "Release notes for 1.4", "/home/me/app/docs"),
        ("claude", "aaaaaaaa-0000-4000-8000-000000000003", None, None),
        ("codex", "0195a1b2-0000-7000-8000-000000000001", "Fix the flaky login test", "/home/me/app"),
        ("codex", "0195a1b2-0000-7000-8000-000000000002", "Slow build cache", "/home/me/app"),
        ("codex", "0195a1b2-0000-7000-8000-000000000003", "Linter bump", "/home/me/app"),
    ]
    titles = store.connection.execute(
        "SELECT s.external_id, ss.title FROM session_summaries ss JOIN sessions s ON s.id = ss.session_id"
        " WHERE s.host = 'codex' ORDER BY s.external_id"
    )
    assert [row[1] for row in titles] == ["Fix the flaky login test", "Slow build cache", "Linter bump"]


def test_an_untitled_stored_thread_takes_its_index_name_when_its_rollout_is_read_again(
    store: Store, user_home: Path, tmp_path: Path
) -> None:
    home = tmp_path / "codex-home"
    shutil.copytree(TITLES / "codex-home", home, ignore=shutil.ignore_patterns("session_index.jsonl"))
    codex = [get_adapter("codex")]
    run_import(store, codex, paths=[home], embed_budget_seconds=0)
    title = "SELECT title FROM sessions WHERE external_id = '0195a1b2-0000-7000-8000-000000000002'"
    assert store.connection.execute(title).fetchone()[0] is None
    shutil.copy(TITLES / "codex-home" / "session_index.jsonl", home)
    # Unchanged rollouts are skipped by their own size and mtime: a name that only the index gained
    # waits until the rollout changes, or for a forced import.
    assert run_import(store, codex, paths=[home], embed_budget_seconds=0).files_unchanged == 3
    assert store.connection.execute(title).fetchone()[0] is None
    run_import(store, codex, paths=[home], embed_budget_seconds=0, force=True)
    assert store.connection.execute(title).fetchone()[0] == "Slow build cache"


def test_a_renamed_thread_replaces_its_stored_title(store: Store, user_home: Path, tmp_path: Path) -> None:
    """Hosts rename sessions; the next read of the session stores the new name, not the first one."""
    home = tmp_path / "codex-home"
    shutil.copytree(TITLES / "codex-home", home)
    codex = [get_adapter("codex")]
    run_import(store, codex, paths=[home], embed_budget_seconds=0)
    title = "SELECT title FROM sessions WHERE external_id = '0195a1b2-0000-7000-8000-000000000002'"
    assert store.connection.execute(title).fetchone()[0] == "Slow build cache"
    with (home / "session_index.jsonl").open("a", encoding="utf-8") as index:
        index.write(
            '{"id":"0195a1b2-0000-7000-8000-000000000002","thread_name":"Build cache keyed by lockfile",'
            '"updated_at":"2026-11-29T10:00:00Z"}\n'
        )
    run_import(store, codex, paths=[home], embed_budget_seconds=0, force=True)
    assert store.connection.execute(title).fetchone()[0] == "Build cache keyed by lockfile"
