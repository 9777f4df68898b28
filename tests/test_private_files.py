"""Every file recall writes is 0600 from the moment it exists, and every folder it makes 0700."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall import hooklog
from recall.models import RecordKind
from recall.search import semantic, vector_rows
from recall.search.embedder import FakeEmbedder
from recall.store import NewRecord, Store


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (022), under which a plain ``open`` makes a file anyone may read."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def modes(top: Path) -> dict[str, int]:
    """Permission bits of every file and folder under ``top``, by relative path."""
    found = {}
    for root, folders, files in os.walk(top):
        for name in folders + files:
            path = Path(root, name)
            found[str(path.relative_to(top))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def assert_private(top: Path) -> None:
    found = modes(top)
    assert found
    loose = {
        name: oct(mode) for name, mode in found.items() if mode != (0o700 if (top / name).is_dir() else 0o600)
    }
    assert loose == {}


def test_the_snapshot_is_private_while_it_is_written(
    tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 3)
    db_path = tmp_path / "store" / "recall.db"
    seen: list[tuple[str, int]] = []
    write = vector_rows.write_snapshot

    def watching(*args: Any, **kwargs: Any) -> None:
        seen.extend((p.name, stat.S_IMODE(p.stat().st_mode)) for p in db_path.parent.glob("*.part"))
        write(*args, **kwargs)

    monkeypatch.setattr(vector_rows, "write_snapshot", watching)
    with Store(db_path) as store:
        for n in range(4):
            store.add(NewRecord(kind=RecordKind.LEARNING, content=f"note {n} about caches", project="p"))
        semantic.embed_pending(store, FakeEmbedder())
        semantic.vector_index(store, FakeEmbedder())
        snapshot = semantic.snapshot_path(store, semantic.model_key(store, FakeEmbedder()))
        assert snapshot is not None and snapshot.exists()
        assert [mode for _, mode in seen] == [0o600]  # the temporary file, as its writing starts
        assert_private(db_path.parent)  # database, -wal, -shm and the snapshot, while the store is open


def test_every_file_a_real_run_writes_is_private(tmp_path: Path, open_umask: None) -> None:
    """The CLI in its own process: database and side files, the hook log, the model hash cache."""
    home = tmp_path / "a" / "recall-home"  # two folders recall has to make
    env = {key: value for key, value in os.environ.items() if key != "RECALL_DB"}
    env["RECALL_HOME"] = str(home)

    def recall(*args: str, stdin: str = "") -> None:
        done = subprocess.run(
            [sys.executable, "-m", "recall", *args],
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    recall("add", "learning", "WAL needs a checkpoint to shrink", "--project", "p")
    recall("search", "checkpoint", "--all-projects")
    recall("context", "--hook", stdin='{"cwd": "/nowhere", "hook_event_name": "SessionStart"}')
    assert {"recall.db", "recall.log", "model-hashes.json"} <= set(modes(home))
    assert_private(tmp_path / "a")


def test_files_an_older_version_left_open_are_tightened(db_path: Path, isolated_home: Path) -> None:
    with Store(db_path) as store:
        store.add(NewRecord(kind=RecordKind.DECISION, content="keep it private", project="p"))
    isolated_home.mkdir(mode=0o755)
    os.chmod(isolated_home, 0o755)
    for path in (db_path, Path(f"{db_path}-wal"), isolated_home / "recall.log"):
        path.touch()
        os.chmod(path, 0o644)
    os.chmod(db_path.parent, 0o755)  # a folder the user chose keeps its mode
    with Store(db_path):
        hooklog.write("dump", "ok", "stored", 3)
        assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(Path(f"{db_path}-wal").stat().st_mode) == 0o600
    assert stat.S_IMODE((isolated_home / "recall.log").stat().st_mode) == 0o600
    assert stat.S_IMODE(isolated_home.stat().st_mode) == 0o700
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o755
