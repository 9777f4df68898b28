"""Hooks: `recall dump --from-hook`, `recall context --hook` and the `import --watch` fallback.

The payloads are the JSON each agent sends: Claude Code's SessionStart, SessionEnd and PreCompact
input (stdin), Codex's notify argument and SessionStart input, and Cursor's stop and sessionStart
input. A hook must import only the new part of the transcript (or print only what its agent parses),
exit 0 whatever it is fed, and leave a line in the hook log either way.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall import hooklog
from recall.brief import estimate_tokens
from recall.cli import cli
from recall.store import NewRecord, Store

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CLAUDE_SAMPLE = FIXTURES / "claude-code" / "real" / "spotter" / "short.jsonl"  # marot/spotter, MIT
CODEX_SAMPLE = (
    FIXTURES / "codex" / "real" / "agent-history" / "session-01.jsonl"
)  # kvsankar/agent-history, MIT
SESSION_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
PROJECT_CWD = "/home/marco/projects/spotter"


def session_end(transcript: Path) -> str:
    return json.dumps(
        {
            "session_id": SESSION_ID,
            "transcript_path": str(transcript),
            "cwd": PROJECT_CWD,
            "permission_mode": "default",
            "hook_event_name": "SessionEnd",
            "reason": "prompt_input_exit",
        }
    )


def pre_compact(transcript: Path) -> str:
    return json.dumps(
        {
            "session_id": SESSION_ID,
            "transcript_path": str(transcript),
            "cwd": PROJECT_CWD,
            "permission_mode": "default",
            "hook_event_name": "PreCompact",
            "trigger": "auto",
            "custom_instructions": "",
        }
    )


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A copy of a real transcript where Claude Code keeps it (the hook is handed this path)."""
    folder = tmp_path / "claude" / "projects" / "-home-marco-projects-spotter"
    folder.mkdir(parents=True)
    return Path(shutil.copy(CLAUDE_SAMPLE, folder / f"{SESSION_ID}.jsonl"))


def invoke(db_path: Path, *args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db_path), *args], input=input, catch_exceptions=False)
    return result.exit_code, result.output


def message_count(db_path: Path) -> int:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT count(*) FROM messages").fetchone()[0]


def log_lines(hook: str) -> list[hooklog.LogEntry]:
    return [entry for entry in hooklog.read(datetime(2000, 1, 1, tzinfo=UTC)) if entry.hook == hook]


@pytest.mark.parametrize("payload", [session_end, pre_compact], ids=["SessionEnd", "PreCompact"])
def test_claude_hook_imports_the_transcript_once(db_path: Path, transcript: Path, payload) -> None:
    first = invoke(db_path, "dump", "--from-hook", "--source", "claude", input=payload(transcript))
    stored = message_count(db_path)
    second = invoke(db_path, "dump", "--from-hook", "--source", "claude", input=payload(transcript))

    assert first == (0, "") and second == (0, "")
    assert stored > 0 and message_count(db_path) == stored
    runs = log_lines("dump")
    assert [run.status for run in runs] == ["ok", "ok"]
    assert f"{stored} new messages" in runs[0].message and "0 new messages" in runs[1].message


def test_pre_compact_then_session_end_adds_only_the_lines_written_in_between(
    db_path: Path, transcript: Path, tmp_path: Path
) -> None:
    lines = CLAUDE_SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[:8]), encoding="utf-8")
    invoke(db_path, "dump", "--from-hook", input=pre_compact(transcript))  # host inferred from the payload
    early = message_count(db_path)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.writelines(lines[8:])

    invoke(db_path, "dump", "--from-hook", input=session_end(transcript))

    whole = tmp_path / "whole.db"
    invoke(whole, "dump", "--source", "claude", "--path", str(CLAUDE_SAMPLE))
    assert 0 < early < message_count(db_path) == message_count(whole)


def test_hook_runs_as_a_real_subprocess_within_seconds(db_path: Path, transcript: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "recall",
        "--db",
        str(db_path),
        "dump",
        "--from-hook",
        "--source",
        "claude",
    ]
    started = time.monotonic()
    done = subprocess.run(
        command, input=session_end(transcript), capture_output=True, text=True, env=os.environ, check=False
    )
    elapsed = time.monotonic() - started

    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert message_count(db_path) > 0
    assert elapsed < 10  # measured well under a second; the bound only catches a hook that hangs


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "not json at all",
        "[1, 2, 3]",
        '{"hello": "world"}',
        '{"session_id": 7, "transcript_path": ["x"]}',
        '{"session_id": "abc", "transcript_path": "/nowhere/abc.jsonl", "hook_event_name": "SessionEnd"}',
        "\x00\xff{{{",
    ],
    ids=["empty", "text", "list", "no-fields", "wrong-types", "missing-file", "binary"],
)
def test_garbage_exits_0_and_logs_the_failure(db_path: Path, garbage: str) -> None:
    assert invoke(db_path, "dump", "--from-hook", input=garbage) == (0, "")
    (run,) = log_lines("dump")
    assert run.status in ("error", "skipped") and run.message


def test_an_unusable_database_still_exits_0(tmp_path: Path, transcript: Path) -> None:
    not_a_database = tmp_path / "recall.db"
    not_a_database.write_bytes(b"this is not SQLite " * 100)

    assert invoke(not_a_database, "dump", "--from-hook", input=session_end(transcript)) == (0, "")
    (run,) = log_lines("dump")
    assert run.status == "error" and "StoreUnavailable" in run.message


def test_codex_notify_passes_the_payload_as_an_argument(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread_id = json.loads(CODEX_SAMPLE.read_text(encoding="utf-8").splitlines()[0])["payload"]["id"]
    day = tmp_path / "codex" / "sessions" / "2026" / "06" / "05"
    day.mkdir(parents=True)
    shutil.copy(CODEX_SAMPLE, day / f"rollout-2026-06-05T06-58-20-{thread_id}.jsonl")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    notify = {
        "type": "agent-turn-complete",
        "thread-id": thread_id,
        "turn-id": "019e9625-806b-7343-9798-a7ca2de29a04",
        "cwd": "/tmp/agent-history-real-agent/codex/workspace",
        "input-messages": ["say hi"],
        "last-assistant-message": "hi",
    }

    assert invoke(db_path, "dump", "--from-hook", "--source", "codex", json.dumps(notify)) == (0, "")
    assert invoke(db_path, "dump", "--from-hook", "--source", "codex", json.dumps(notify)) == (0, "")
    assert [run.status for run in log_lines("dump")] == ["ok", "ok"]
    assert message_count(db_path) > 0


def test_cursor_stop_hook_finds_the_conversation_transcript(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FIXTURES / "cursor" / "built-examples" / "dot-cursor" / "projects" / "Users-alice-code-demo-api"
    cursor_home = tmp_path / "dot-cursor"
    shutil.copytree(source, cursor_home / "projects" / source.name)
    monkeypatch.setenv("RECALL_CURSOR_ROOTS", str(cursor_home))
    workspace = tmp_path / "demo-api"
    workspace.mkdir()
    stop = {
        "conversation_id": "d5c2d589-0000-4000-8000-000000000003",
        "generation_id": "b1a7c0de-0000-4000-8000-000000000001",
        "hook_event_name": "stop",
        "workspace_roots": [str(workspace)],
        "status": "completed",
        "loop_count": 0,
    }

    assert invoke(db_path, "dump", "--from-hook", "--source", "cursor", input=json.dumps(stop)) == (0, "")

    (run,) = log_lines("dump")
    assert run.status == "ok" and "project demo-api" in run.message
    stop["conversation_id"] = "0000-not-there"
    invoke(db_path, "dump", "--from-hook", input=json.dumps(stop))
    assert log_lines("dump")[-1].status == "skipped"


def test_context_hook_prints_the_brief_claude_code_injects_within_budget(
    db_path: Path, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    with Store(db_path) as store:
        for number in range(40):
            content = f"Decision {number}: " + "keep the schema small " * 8
            store.add(NewRecord(kind="decision", content=content, project="shop"))
    start = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}

    code, output = invoke(db_path, "context", "--hook", "--max-tokens", "300", input=json.dumps(start))

    assert code == 0
    injected = json.loads(output)["hookSpecificOutput"]
    assert injected["hookEventName"] == "SessionStart"
    assert "Decisions in force" in injected["additionalContext"]
    assert estimate_tokens(injected["additionalContext"]) <= 300
    (run,) = log_lines("context")
    assert run.status == "ok" and "project shop" in run.message


def test_context_hook_is_silent_when_there_is_nothing_or_it_fails(db_path: Path, tmp_path: Path) -> None:
    start = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}

    assert invoke(db_path, "context", "--hook", input=json.dumps(start)) == (0, "")
    assert invoke(db_path, "context", "--hook", input="{broken") == (0, "")
    assert [run.status for run in log_lines("context")] == ["ok", "error"]


def cursor_session_start(workspace: Path | None) -> dict[str, object]:
    """Cursor's sessionStart input: the common fields, then the event's own (it carries a session_id too)."""
    return {
        "conversation_id": "d5c2d589-0000-4000-8000-000000000007",
        "generation_id": "b1a7c0de-0000-4000-8000-000000000002",
        "model": "default",
        "hook_event_name": "sessionStart",
        "cursor_version": "3.20.1",
        "workspace_roots": [] if workspace is None else [str(workspace)],
        "user_email": None,
        "transcript_path": None,
        "session_id": "d5c2d589-0000-4000-8000-000000000007",
        "is_background_agent": False,
        "composer_mode": "agent",
    }


def run_context_subprocess(
    db_path: Path, stdin: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "recall", "--db", str(db_path), "context", "--hook"]
    environment = {k: v for k, v in os.environ.items() if k not in ("CURSOR_PROJECT_DIR", "RECALL_PROJECT")}
    environment.update(env or {})
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, cwd=cwd, env=environment, check=False
    )


LEDGER_DECISION = "Payments go through the ledger service, never straight to Stripe"


def two_projects(db_path: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A git project "shop" holding LEDGER_DECISION, and a folder "elsewhere" with a decision of its own."""
    workspace = tmp_path / "shop"
    (workspace / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Store(db_path) as store:
        store.add(NewRecord(kind="decision", content=LEDGER_DECISION, project="shop"))
        store.add(NewRecord(kind="decision", content="Use tabs in the other repo", project="elsewhere"))
    return workspace, elsewhere


def test_cursor_session_start_prints_one_json_object_with_the_projects_brief(
    db_path: Path, tmp_path: Path
) -> None:
    workspace, elsewhere = two_projects(db_path, tmp_path)

    done = run_context_subprocess(db_path, json.dumps(cursor_session_start(workspace)), cwd=elsewhere)

    assert done.returncode == 0 and done.stderr == ""
    injected = json.loads(done.stdout)  # the whole of stdout is one JSON object
    assert list(injected) == ["additional_context"]
    assert LEDGER_DECISION in injected["additional_context"]
    assert "Use tabs" not in injected["additional_context"]  # the workspace named the project, not cwd
    (run,) = log_lines("context")
    assert run.status == "ok" and "cursor project shop" in run.message


def test_cursor_session_start_without_workspace_roots_uses_cursor_project_dir(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "shop"
    (workspace / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CURSOR_PROJECT_DIR", str(workspace))
    with Store(db_path) as store:
        store.add(NewRecord(kind="decision", content="Keep the API versioned under /v2", project="shop"))

    code, output = invoke(db_path, "context", "--hook", input=json.dumps(cursor_session_start(None)))

    assert code == 0
    assert "Keep the API versioned under /v2" in json.loads(output)["additional_context"]


@pytest.mark.parametrize(
    ("stdin", "logged"),
    [
        ("nothing stored", "ok"),
        ("", "ok"),
        ('{"conversation_id": "c1", "workspace_roots": [7, null]}', "ok"),
        ("not json at all", "error"),
        ("[1, 2, 3]", "error"),
        ('{"workspace_roots": "/not/a/list"', "error"),
        ("\x00\xff{{{", "error"),
    ],
    ids=["nothing-to-say", "empty", "wrong-types", "text", "list", "truncated", "binary"],
)
def test_cursor_session_start_prints_nothing_when_there_is_nothing_to_say(
    db_path: Path, tmp_path: Path, stdin: str, logged: str
) -> None:
    workspace = tmp_path / "empty-project"
    (workspace / ".git").mkdir(parents=True)
    with Store(db_path) as store:
        store.add(NewRecord(kind="decision", content="Only for another project", project="other"))
    payload = json.dumps(cursor_session_start(workspace)) if stdin == "nothing stored" else stdin

    done = run_context_subprocess(db_path, payload, cwd=workspace)

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (run,) = log_lines("context")
    assert run.status == logged


def codex_session_start(cwd: Path, transcript: str | None) -> dict[str, object]:
    """Codex's SessionStart input (session-start.command.input schema): every field is required."""
    return {
        "session_id": "019e9625-7c1a-7d40-a2b4-3f0c9e1d2a77",
        "transcript_path": transcript,
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "model": "gpt-5.3-codex",
        "permission_mode": "default",
        "source": "startup",
    }


@pytest.mark.parametrize(
    "transcript",
    [
        "~/.codex/sessions/2026/06/05/rollout-2026-06-05T06-58-20-019e9625-7c1a-7d40-a2b4-3f0c9e1d2a77.jsonl",
        None,
    ],
    ids=["rollout", "ephemeral"],
)
def test_codex_session_start_prints_the_hook_specific_output_codex_injects(
    db_path: Path, tmp_path: Path, transcript: str | None
) -> None:
    workspace, elsewhere = two_projects(db_path, tmp_path)

    done = run_context_subprocess(
        db_path, json.dumps(codex_session_start(workspace, transcript)), cwd=elsewhere
    )

    assert done.returncode == 0 and done.stderr == ""
    injected = json.loads(done.stdout)  # the whole of stdout is one JSON object
    assert list(injected) == ["hookSpecificOutput"]
    assert injected["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert LEDGER_DECISION in injected["hookSpecificOutput"]["additionalContext"]
    assert "Use tabs" not in injected["hookSpecificOutput"]["additionalContext"]  # cwd named the project
    (run,) = log_lines("context")
    assert run.status == "ok" and "codex project shop" in run.message


def test_the_command_connect_writes_for_codex_briefs_a_session_through_the_shell(
    db_path: Path, tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall.connect import connect, make_setup

    workspace = tmp_path / "shop"
    (workspace / ".git").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    with Store(db_path) as store:
        store.add(NewRecord(kind="decision", content="Keep the API versioned under /v2", project="shop"))
    connect(make_setup(db_path, workspace, global_scope=False), ["codex"], hooks=True)
    (group,) = json.loads((workspace / ".codex" / "hooks.json").read_text())["hooks"]["SessionStart"]
    (handler,) = group["hooks"]

    done = subprocess.run(  # as Codex runs a command hook: through the shell, payload on stdin
        handler["command"],
        shell=True,
        input=json.dumps(codex_session_start(workspace, None)),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=handler["timeout"],
        check=False,
    )

    assert (done.returncode, done.stderr) == (0, "")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Keep the API versioned under /v2" in context


@contextmanager
def watching(store: Store, folder: Path, on_import: Callable[[list[Path], object], None]) -> Iterator[None]:
    """`watch` on a daemon thread, always stopped: a failing test must not leave it polling."""
    from adapters import get_adapter
    from recall.watch import watch

    stop = threading.Event()
    options = {"paths": [folder], "interval": 0.01, "rescan_every": 0, "stop": stop, "on_import": on_import}
    worker = threading.Thread(
        target=watch, args=(store, [get_adapter("claude")]), kwargs=options, daemon=True
    )
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join(10)


def test_watch_imports_lines_appended_while_it_runs(db_path: Path, transcript: Path) -> None:
    from adapters import get_adapter
    from recall.ingest import run_import

    lines = CLAUDE_SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[:8]), encoding="utf-8")
    imported = threading.Event()
    with Store(db_path) as store:
        run_import(store, [get_adapter("claude")], paths=[transcript.parent])
        early = message_count(db_path)
        with watching(store, transcript.parent, lambda *_: imported.set()):
            with transcript.open("a", encoding="utf-8") as handle:
                handle.writelines(lines[8:])
            assert imported.wait(10)
    assert early < message_count(db_path)


def test_watch_finds_a_new_session_file_on_rescan(db_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    calls: list[list[Path]] = []
    imported = threading.Event()

    def record(files: list[Path], summary: object) -> None:
        calls.append(files)
        imported.set()

    with Store(db_path) as store, watching(store, folder, record):
        shutil.copy(CLAUDE_SAMPLE, folder / f"{SESSION_ID}.jsonl")
        assert imported.wait(10)
    assert calls == [[folder / f"{SESSION_ID}.jsonl"]]
    assert message_count(db_path) > 0


def test_watch_is_quiet_when_everything_is_imported_and_stops_after_max_iterations(
    db_path: Path, transcript: Path
) -> None:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.watch import watch

    adapters = [get_adapter("claude")]
    with Store(db_path) as store:
        run_import(store, adapters, paths=[transcript.parent])
        started = time.monotonic()
        imports = watch(store, adapters, paths=[transcript.parent], interval=0.001, max_iterations=5)
    assert imports == 0
    assert time.monotonic() - started < 5


def test_watch_imports_what_changed_before_it_started(db_path: Path, transcript: Path) -> None:
    from adapters import get_adapter
    from recall.watch import watch

    with Store(db_path) as store:
        imports = watch(
            store, [get_adapter("claude")], paths=[transcript.parent], interval=0.001, max_iterations=1
        )
    assert imports == 1 and message_count(db_path) > 0


def test_import_watch_refuses_dry_run(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db_path), "import", "--watch", "--dry-run"])
    assert result.exit_code == 2 and "--watch" in result.output
