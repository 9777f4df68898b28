"""Capture hooks of OpenCode, Pi and Gemini CLI, run as each host runs them.

`recall connect --hooks` writes the hook; the test runs exactly that: Gemini CLI's ``SessionEnd``
command through the shell with the host's JSON on stdin, OpenCode's plugin and Pi's extension loaded
by Node and handed the event the host sends. Each starts a real `recall` process, and the session
then has to arrive in a real database.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall import hooklog
from recall.cli import cli
from recall.connect import connect, make_setup

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
GEMINI_HOME = FIXTURES / "gemini" / "synthetic" / "built-from-source" / ".gemini"
PI_SESSION = next((FIXTURES / "pi" / "real" / "agent-history").rglob("*.jsonl"))
OPENCODE_DB = (
    FIXTURES / "opencode" / "synthetic" / "built-from-source" / "v1.2-sqlite" / "opencode" / "opencode.db"
)
OPENCODE_PARENT = "ses_4a6e1d0f7ffeV3kQ9tLmB2xZcR"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js runs the plugin and extension files")


@pytest.fixture
def workspace(tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shop"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def stored(db_path: Path) -> int:
    if not db_path.exists():
        return 0
    with sqlite3.connect(db_path) as conn:
        try:
            return conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        except sqlite3.OperationalError:  # the background import is still creating the schema
            return 0


def wait_for_messages(db_path: Path, expected: int) -> int:
    """The background import's result, polled: the hook itself returned long before."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if stored(db_path) >= expected and dump_runs():
            break
        time.sleep(0.2)
    return stored(db_path)


def dump_runs() -> list[hooklog.LogEntry]:
    return [e for e in hooklog.read(datetime(2000, 1, 1, tzinfo=UTC)) if e.hook == "dump"]


def test_gemini_session_end_returns_while_the_import_cannot_start_yet(
    db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "gemini-home" / ".gemini"
    shutil.copytree(GEMINI_HOME, home)
    chat = next(home.glob("tmp/weather-cli/chats/session-*.jsonl"))
    connect(make_setup(db_path, workspace, global_scope=False), ["gemini"], hooks=True)
    settings = json.loads((workspace / ".gemini" / "settings.json").read_text())
    (group,) = settings["hooks"]["SessionEnd"]
    (handler,) = group["hooks"]
    payload = {"session_id": "5b0c6e2e-9d1f-4a57-8f3e-2c71a9d4e810", "transcript_path": str(chat),
               "cwd": "/home/dev/projects/weather-cli", "hook_event_name": "SessionEnd", "reason": "exit",
               "timestamp": "2026-05-02T10:18:00.000Z"}  # fmt: skip
    CliRunner().invoke(cli, ["--db", str(db_path), "stats"], catch_exceptions=False)  # the schema exists
    lock = sqlite3.connect(db_path, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # an import now has to wait; the hook must not
    try:
        done = subprocess.run(  # as Gemini CLI runs a command hook: through the shell, payload on stdin
            handler["command"], shell=True, input=json.dumps(payload), capture_output=True, text=True,
            cwd=tmp_path, timeout=handler["timeout"] / 1000, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert dump_runs() == []  # nothing has been imported while the database was locked
    finally:
        lock.execute("ROLLBACK")
        lock.close()

    assert wait_for_messages(db_path, 10) == 10
    (run,) = dump_runs()
    assert run.status == "ok" and "gemini SessionEnd" in run.message


@needs_node
def test_the_pi_extension_imports_the_session_when_pi_shuts_it_down(
    db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    connect(make_setup(db_path, workspace, global_scope=False), ["pi"], hooks=True)
    extension = tmp_path / "recall-extension.mjs"  # Node runs the file as Pi loads it, minus jiti
    shutil.copy(workspace / ".pi" / "extensions" / "recall.ts", extension)
    session = tmp_path / "sessions" / PI_SESSION.name
    session.parent.mkdir()
    shutil.copy(PI_SESSION, session)
    host = (
        "const { default: load } = await import(process.argv[1]);\n"
        "const handlers = {};\n"
        "load({ on: (name, handler) => { handlers[name] = handler; } });\n"
        "await handlers['session_shutdown']({ reason: 'quit' }, { cwd: process.argv[3], sessionManager: {\n"
        "  getSessionFile: () => process.argv[2], getSessionId: () => '019e963d-6bd6-7ade-8a49-256ac3391bdd' } });\n"
    )

    done = subprocess.run(
        [NODE, "--input-type=module", "-e", host, extension.as_uri(), str(session), str(workspace)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert (done.returncode, done.stderr) == (0, "")
    assert wait_for_messages(db_path, 2) == 2
    (run,) = dump_runs()
    assert run.status == "ok" and "pi session_shutdown" in run.message


@needs_node
def test_the_opencode_plugin_imports_the_session_each_time_it_goes_idle(
    db_path: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "data" / "opencode").mkdir(parents=True)
    shutil.copy(OPENCODE_DB, tmp_path / "data" / "opencode" / "opencode.db")
    connect(make_setup(db_path, workspace, global_scope=False), ["opencode"], hooks=True)
    plugin = tmp_path / "recall-plugin.mjs"
    shutil.copy(workspace / ".opencode" / "plugins" / "recall.js", plugin)
    host = (
        "const { RecallPlugin } = await import(process.argv[1]);\n"
        "const hooks = await RecallPlugin({ directory: process.argv[3] });\n"
        "await hooks.event({ event: { type: 'message.updated', properties: {} } });\n"
        "await hooks.event({ event: { type: 'session.idle', properties: { sessionID: process.argv[2] } } });\n"
    )

    done = subprocess.run(
        [NODE, "--input-type=module", "-e", host, plugin.as_uri(), OPENCODE_PARENT, str(workspace)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert (done.returncode, done.stderr) == (0, "")
    assert wait_for_messages(db_path, 19) == 19  # the session (15) and its @explore subagent (4)
    (run,) = dump_runs()  # message.updated started nothing
    assert run.status == "ok" and f"opencode session.idle: session {OPENCODE_PARENT}" in run.message


@pytest.mark.parametrize(
    ("host", "payload"),
    [
        ("opencode", {"hook_event_name": "session.idle", "session_id": "ses_nowhere", "cwd": "/x"}),
        ("pi", {"hook_event_name": "session_shutdown", "transcript_path": "/nowhere/x.jsonl", "cwd": "/x"}),
        (
            "gemini",
            {"hook_event_name": "SessionEnd", "session_id": "0000", "transcript_path": "/nowhere/x.json"},
        ),
    ],
)
def test_a_session_that_cannot_be_found_exits_0_and_is_logged(
    db_path: Path, workspace: Path, host: str, payload: dict[str, str]
) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "dump", "--from-hook", "--source", host, json.dumps(payload)]
    )

    assert (result.exit_code, result.output) == (0, "")
    (run,) = dump_runs()
    assert run.status in ("skipped", "error") and run.message


def test_detach_with_garbage_logs_at_once_and_starts_nothing(db_path: Path, workspace: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "dump", "--from-hook", "--source", "gemini", "--detach"], input="{oops"
    )

    assert (result.exit_code, result.output) == (0, "")
    (run,) = dump_runs()
    assert run.status == "error" and "not JSON" in run.message
    assert not db_path.exists()
