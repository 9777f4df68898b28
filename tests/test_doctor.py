"""`recall doctor`: every link of the chain, reported in plain words, against a fake home folder."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli

SAMPLE = (
    Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter" / "short.jsonl"
)
SESSION_ID = "55604662-cf2a-4331-851a-ec234028f8ca"


@pytest.fixture
def home(user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home, and a git project as the current folder."""
    folder = user_home
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    return folder


def doctor(db_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db_path), "doctor", *args], catch_exceptions=False)
    return result.exit_code, result.output


def claude_transcript(home: Path, age_days: float = 0) -> Path:
    folder = home / ".claude" / "projects" / "-home-marco-projects-spotter"
    folder.mkdir(parents=True, exist_ok=True)
    path = Path(shutil.copy(SAMPLE, folder / f"{SESSION_ID}.jsonl"))
    stamp = time.time() - age_days * 86_400
    os.utime(path, (stamp, stamp))
    return path


def test_a_fresh_machine_gets_next_steps_not_a_failure(home: Path, db_path: Path) -> None:
    code, output = doctor(db_path)

    assert code == 0
    assert f"no database yet at {db_path}" in output
    assert "run `recall connect --hooks`" in output
    assert "no hook ran in the last 7 days" in output


def test_database_schema_integrity_counts_and_model(home: Path, db_path: Path) -> None:
    CliRunner().invoke(cli, ["--db", str(db_path), "dump", "--source", "claude", "--path", str(SAMPLE)])

    report = json.loads(doctor(db_path, "--json")[1])

    assert report["ok"] is True
    sections = {s["title"]: [f["text"] for f in s["findings"]] for s in report["sections"]}
    assert any("schema version" in text and "(current)" in text for text in sections["Database"])
    assert "integrity check passed" in sections["Database"]
    assert any("1 sessions" in text for text in sections["Database"])
    assert any("sha256" in text for text in sections["Embedding model"])
    assert any("pending" in text for text in sections["Embedding model"])


def test_sessions_left_without_their_summary_are_listed_until_an_import_writes_them(
    home: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.store import Store

    with Store(db_path) as store:
        # killed before them
        monkeypatch.setattr("recall.ingest.write_due_summaries", lambda store, ahead=None: 0)
        run_import(store, [get_adapter("claude")], paths=[SAMPLE], embed_budget_seconds=0)
    sections = {s["title"]: s["findings"] for s in json.loads(doctor(db_path, "--json")[1])["sections"]}
    assert sections["Repair"] == [
        {"level": "warn", "text": "1 sessions wait for their summary (an import or dump was interrupted): "
         "run `recall import`"}
    ]  # fmt: skip
    monkeypatch.undo()
    with Store(db_path) as store:
        run_import(store, [get_adapter("claude")], paths=[SAMPLE], embed_budget_seconds=0)
    sections = {s["title"]: s["findings"] for s in json.loads(doctor(db_path, "--json")[1])["sections"]}
    assert [f["level"] for f in sections["Repair"]] == ["ok"]
    assert "nothing left to repair" in sections["Repair"][0]["text"]


def test_a_corrupt_database_fails(home: Path, db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"not a database at all " * 200)

    code, output = doctor(db_path)

    assert code == 1
    assert "cannot be read as a database" in output


def test_connected_agents_and_their_hooks_are_listed(home: Path, db_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["--db", str(db_path), "connect", "--agent", "claude", "--agent", "codex", "--hooks"])
    runner.invoke(cli, ["--db", str(tmp_path / "other.db"), "connect", "--agent", "cursor"])

    output = doctor(db_path)[1]

    assert f"Claude Code (project, {tmp_path / 'shop' / '.mcp.json'}): MCP server connected" in output
    assert "hooks SessionStart, SessionEnd, PreCompact" in output
    assert "Codex (user" in output and "hooks notify" in output
    cursor_file = tmp_path / "shop" / ".cursor" / "mcp.json"
    assert (
        f"Cursor (project, {cursor_file}): MCP server connected to another database ({tmp_path / 'other.db'})"
        in output
    )


def test_recent_hook_failures_are_reported(home: Path, db_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["--db", str(db_path), "dump", "--from-hook"], input="not json")
    runner.invoke(cli, ["--db", str(db_path), "context", "--hook"], input="{}")

    output = doctor(db_path)[1]

    assert "capture (dump): 1 runs in 7 days" in output and "1 failed" in output
    assert "the hook input is not JSON" in output
    assert "session brief (context): 1 runs" in output


def test_transcripts_claude_code_will_delete_before_import_are_flagged(home: Path, db_path: Path) -> None:
    transcript = claude_transcript(home, age_days=27)

    warned = doctor(db_path)[1]
    assert "1 Claude Code transcripts that were never fully imported will be deleted" in warned
    assert "Claude Code: 1 files in" in warned and "nothing imported yet" in warned

    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 90}')
    assert "1 Claude Code transcripts are not fully imported yet; none is due" in doctor(db_path)[1]

    CliRunner().invoke(cli, ["--db", str(db_path), "import", "--host", "claude", "--path", str(transcript)])
    imported = doctor(db_path)[1]
    assert "Claude Code deletes transcripts after 90 days; every one it holds is imported" in imported
    assert "1 sessions, last stored just now" in imported


def test_retention_zero_is_called_out(home: Path, db_path: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 0}')

    assert "Claude Code keeps no transcripts (cleanupPeriodDays is 0" in doctor(db_path)[1]


def test_opencode_pi_and_gemini_connections_and_transcripts_are_reported(
    home: Path, db_path: Path, tmp_path: Path
) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "transcripts"
    shutil.copytree(fixtures / "gemini" / "synthetic" / "built-from-source" / ".gemini", home / ".gemini")
    pi_sessions = home / ".pi" / "agent" / "sessions"
    shutil.copytree(fixtures / "pi" / "real" / "agent-history" / "agent" / "sessions", pi_sessions)
    CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "connect",
            "--agent",
            "opencode",
            "--agent",
            "pi",
            "--agent",
            "gemini",
            "--hooks",
        ],
    )

    output = doctor(db_path)[1]

    shop = tmp_path / "shop"
    assert f"OpenCode (project, {shop / 'opencode.json'}): MCP server connected" in output
    assert "hooks session.idle (plugin)" in output
    assert f"Pi (project, {shop / '.pi' / 'mcp.json'}): MCP server connected" in output
    assert "hooks session_shutdown (extension)" in output
    assert "Gemini CLI (project" in output and "hooks SessionEnd" in output
    assert "Pi: 1 files in" in output and "Gemini CLI: 3 files in" in output


def test_gemini_chats_its_retention_will_delete_are_flagged(home: Path, db_path: Path) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "transcripts"
    shutil.copytree(fixtures / "gemini" / "synthetic" / "built-from-source" / ".gemini", home / ".gemini")
    stamp = time.time() - 25 * 86_400
    for path in (home / ".gemini" / "tmp").rglob("*.json*"):
        os.utime(path, (stamp, stamp))

    assert "3 Gemini CLI transcripts that were never fully imported will be deleted" in doctor(db_path)[1]
    (home / ".gemini" / "settings.json").write_text('{"general": {"sessionRetention": {"maxAge": "8w"}}}')
    assert "3 Gemini CLI transcripts are not fully imported yet; none is due" in doctor(db_path)[1]
    CliRunner().invoke(cli, ["--db", str(db_path), "import", "--host", "gemini"])
    assert (
        "Gemini CLI deletes transcripts after 56 days; every one it holds is imported" in doctor(db_path)[1]
    )
