"""Transcript folders with FIFOs, sockets, devices, symlink loops and names that are not UTF-8.

Every adapter's discovery and reader, and `recall import --path`, must pass over what is not a
regular file (counted by reason), end symlink loops, and import the rest, a file under a name that is
not valid UTF-8 included. A FIFO that is opened for reading blocks until a writer appears, so each
test runs under an alarm: a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters import get_adapter
from adapters.base import ReadOptions
from recall.ingest import ImportSummary, run_import
from recall.store import Store
from recall.transcript import ParseReport

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SPOTTER = FIXTURES / "claude-code" / "real" / "spotter"
LOCALPUSH = FIXTURES / "codex" / "real" / "localpush"
CURSOR_TRANSCRIPT = FIXTURES / "cursor" / "agent-sessions" / "agent-transcripts" / "test-session.jsonl"
NOT_UTF8 = os.fsdecode(b"caf\xe9-\xff")  # a folder name with bytes that are not UTF-8
ALARM_SECONDS = 20

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and sockets are POSIX")


class Hung(Exception):
    pass


@pytest.fixture(autouse=True)
def alarm() -> Iterator[None]:
    """Fail instead of hanging: the handler's exception interrupts a blocked open() (PEP 475)."""

    def hung(signum: int, frame: object) -> None:
        raise Hung(f"still running after {ALARM_SECONDS} s: something opened a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(ALARM_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _plant_oddities(folder: Path, name: str) -> list[socket.socket]:
    """A FIFO, a socket and a device under transcript-like ``name``s, and two symlink loops."""
    stem, suffix = name.split(".", 1)
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / f"{stem}-fifo.{suffix}")
    os.symlink("/dev/null", folder / f"{stem}-device.{suffix}")
    os.symlink(f"{stem}-loop.{suffix}", folder / f"{stem}-loop.{suffix}")  # a link to itself: ELOOP
    os.symlink("..", folder / "up")  # a folder loop: the walk must end, each folder read once
    listener = socket.socket(socket.AF_UNIX)
    here = Path.cwd()
    os.chdir(folder)  # a socket path is limited to about 100 bytes; bind a short relative name
    try:
        listener.bind(f"{stem}-sock.{suffix}")
    finally:
        os.chdir(here)
    return [listener]


def _claude_tree(root: Path) -> tuple[Path, list[socket.socket]]:
    projects = root / "projects"
    (projects / "-home-me-app").mkdir(parents=True)
    shutil.copy(SPOTTER / "short.jsonl", projects / "-home-me-app" / "short.jsonl")
    (projects / NOT_UTF8).mkdir()
    shutil.copy(SPOTTER / "tool_heavy.jsonl", projects / NOT_UTF8 / "tool_heavy.jsonl")
    return root, _plant_oddities(projects / "-home-me-app", "x.jsonl")


def _codex_tree(root: Path) -> tuple[Path, list[socket.socket]]:
    first, second = sorted(LOCALPUSH.glob("rollout-*.jsonl"))[:2]
    day = root / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    shutil.copy(first, day / first.name)
    (root / "sessions" / NOT_UTF8).mkdir()
    shutil.copy(second, root / "sessions" / NOT_UTF8 / second.name)
    return root, _plant_oddities(day, "rollout-x.jsonl")


def _cursor_tree(root: Path) -> tuple[Path, list[socket.socket]]:
    transcripts = root / "projects" / "home-me-app" / "agent-transcripts"
    transcripts.mkdir(parents=True)
    shutil.copy(CURSOR_TRANSCRIPT, transcripts / "aaaa-session.jsonl")
    odd = root / "projects" / NOT_UTF8 / "agent-transcripts"
    odd.mkdir(parents=True)
    shutil.copy(CURSOR_TRANSCRIPT, odd / "bbbb-session.jsonl")
    sockets = _plant_oddities(transcripts, "x.jsonl")
    # Discovery opens Cursor databases to list their composers, and a transcript reads its
    # session's meta.json: FIFOs under those names must not be opened either.
    storage = root / "globalStorage"
    storage.mkdir()
    os.mkfifo(storage / "state.vscdb")
    chat = root / "chats" / "0123" / "aaaa-session"
    chat.mkdir(parents=True)
    os.mkfifo(chat / "meta.json")
    return root, sockets


TREES = {"claude": _claude_tree, "codex": _codex_tree, "cursor": _cursor_tree}


@pytest.mark.parametrize("host", sorted(TREES))
def test_import_passes_over_what_is_not_a_regular_file_and_imports_the_rest(
    store: Store, tmp_path: Path, host: str
) -> None:
    root, sockets = TREES[host](tmp_path / host)
    try:
        summary = run_import(store, [get_adapter(host)], paths=[root], embed_budget_seconds=0)
        again = run_import(store, [get_adapter(host)], paths=[root], embed_budget_seconds=0)
    finally:
        for listener in sockets:
            listener.close()
    assert summary.files_failed == 0, summary.errors
    assert summary.sessions_new == 2 and summary.messages_added > 0
    assert summary.non_utf8_names == 1
    skipped = summary.skipped
    assert skipped["fifo"] == (2 if host == "cursor" else 1)  # Cursor: the transcript and state.vscdb
    assert skipped["socket"] == 1 and skipped["device"] == 1
    assert skipped["symlink_loop"] == 1 and skipped["folder_linked_twice"] >= 1
    stored = [p for (p,) in store.connection.execute("SELECT path FROM source_files")]
    assert any("caf\\xe9-\\xff" in path for path in stored)  # the odd name, stored escaped
    assert json.dumps(summary.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as it is
    # The odd name is the same key every time: nothing is read again.
    assert again.files_read == 0 and again.files_unchanged == summary.files_read


@pytest.mark.parametrize(
    ("host", "name"),
    [
        ("claude", "x.jsonl"),
        ("codex", "rollout-x.jsonl"),
        ("cursor", "x.jsonl"),
        ("cursor", "x.txt"),
        ("cursor", "store.db"),
    ],
)
def test_a_reader_given_a_fifo_counts_it_and_returns(tmp_path: Path, host: str, name: str) -> None:
    """Discovery stats each file, but a file can become a FIFO before it is read: the reader's own
    open must not block either."""
    folder = tmp_path / "agent-transcripts"
    folder.mkdir()
    fifo = folder / name
    os.mkfifo(fifo)
    report = ParseReport()
    assert list(get_adapter(host).read(fifo, ReadOptions(), report)) == []
    assert report.skipped["fifo"] == 1


def test_a_fifo_given_as_the_path_is_counted_not_opened(store: Store, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    summary = run_import(store, [get_adapter("claude")], paths=[fifo], embed_budget_seconds=0)
    assert summary.files_seen == 0 and summary.skipped["fifo"] == 1


def test_recall_import_path_survives_a_fifo_and_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    """The command end to end, as the issue saw it hang and crash: `recall import --path`, with
    --json and then as text (the second run reads nothing: the odd name is the same key again)."""
    root, sockets = _claude_tree(tmp_path / "claude")
    env = {**os.environ, "RECALL_MODEL_DIR": str(tmp_path / "no-model")}
    command = [sys.executable, "-m", "recall", "--db", str(tmp_path / "r.db"), "import", "--host", "claude"]
    try:
        done = subprocess.run(
            [*command, "--path", str(root), "--json"],
            capture_output=True,
            timeout=ALARM_SECONDS,
            check=False,
            env=env,
        )
        text = subprocess.run(
            [*command, "--path", str(root)], capture_output=True, timeout=ALARM_SECONDS, check=False, env=env
        )
    finally:
        for listener in sockets:
            listener.close()
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    data = json.loads(done.stdout)
    assert data["sessions"]["new"] == 2 and data["files"]["failed"] == 0
    assert data["skipped"]["fifo"] == 1 and data["non_utf8_names"] == 1
    assert text.returncode == 0, text.stderr.decode(errors="replace")
    lines = text.stdout.decode("utf-8").splitlines()
    assert "files: 2 found, 0 read, 2 unchanged, 0 failed" in lines
    assert any(line.startswith("skipped: ") and "fifo 1" in line and "socket 1" in line for line in lines)
    assert "names that are not UTF-8: 1 (imported; stored with \\xNN escapes)" in lines


def test_a_session_named_by_a_file_name_that_is_not_utf8_is_imported_once(
    store: Store, tmp_path: Path
) -> None:
    """A Cursor session's id is its file name: stored escaped, and found again under that id."""
    transcripts = tmp_path / "projects" / "app" / "agent-transcripts"
    transcripts.mkdir(parents=True)
    shutil.copy(CURSOR_TRANSCRIPT, transcripts / f"{NOT_UTF8}.jsonl")
    first = run_import(store, [get_adapter("cursor")], paths=[tmp_path], embed_budget_seconds=0)
    again = run_import(store, [get_adapter("cursor")], paths=[tmp_path], embed_budget_seconds=0, force=True)
    assert first.files_failed == 0 and first.sessions_new == 1 and first.messages_added > 0
    assert again.files_read == 1 and again.sessions_new == 0 and again.messages_added == 0
    assert [row[0] for row in store.connection.execute("SELECT external_id FROM sessions")] == [
        "caf\\xe9-\\xff"
    ]


def test_a_symlinked_folder_is_walked_once_and_a_linked_file_read_once(tmp_path: Path) -> None:
    projects = tmp_path / "claude" / "projects"
    (projects / "real").mkdir(parents=True)
    shutil.copy(SPOTTER / "short.jsonl", projects / "real" / "a.jsonl")
    os.symlink(projects / "real" / "a.jsonl", projects / "real" / "b.jsonl")  # the same file twice
    elsewhere = tmp_path / "elsewhere" / "app"
    elsewhere.mkdir(parents=True)
    shutil.copy(SPOTTER / "tool_heavy.jsonl", elsewhere / "c.jsonl")
    os.symlink(elsewhere, projects / "linked")  # followed: transcripts kept on another disk
    os.symlink(projects / "real", projects / "same")  # a second name for a folder already walked
    found = list(get_adapter("claude").discover([tmp_path / "claude"]))
    assert [p.relative_to(projects).as_posix() for p in found] == ["linked/c.jsonl", "real/a.jsonl"]


def test_the_summary_of_an_odd_import_reads_as_text() -> None:
    summary = ImportSummary(errors=[f"/tmp/{NOT_UTF8}/x.jsonl: torn_line"])
    assert summary.to_dict()["errors"] == ["/tmp/caf\\xe9-\\xff/x.jsonl: torn_line"]
