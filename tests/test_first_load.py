"""A first start writes the vector snapshot straight from SQLite (adr/0047): the same file as a load
held in memory would write, its vectors never in the process, and never a torn file trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from recall.models import KIND_CODES, RecordKind
from recall.search import first_load, semantic, vector_rows, vectors
from recall.search.vectors import VectorIndex
from recall.store import NewRecord, Store
from tests.test_index_snapshot import (
    FAKE,
    delete_without_forget,
    fill,
    full_load,
    open_index,
    same_rows,
    session,
    snapshot_of,
)

IDENTITY = f"{FAKE.model_id} {FAKE.model_hash}"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 5)
    return 5


def interleaved_store(db_path: Path) -> None:
    """Sessions whose rows are not adjacent in ``seq`` order (s1 grows after s2 and the records were
    stored), records between them, and two projects: every path of the mixing and the file reads."""
    fill(db_path, session("s1", 8), session("s2", 6))
    with Store(db_path) as store:
        for n in range(5):
            store.add(NewRecord(kind=RecordKind.LEARNING, content=f"learning {n} about caches", project="q"))
        semantic.embed_pending(store, FAKE)
    fill(db_path, session("s1", 13), session("s3", 9), session("s2", 7))


def members(path: Path) -> dict[str, object]:
    with np.load(path, allow_pickle=False) as data:
        return {
            name: json.loads(bytes(data[name]).decode()) if name == "meta" else data[name]
            for name in data.files
        }


def test_a_streamed_snapshot_equals_one_written_from_memory(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interleaved_store(db_path)
    # Chunks of a few rows: sessions split over several reads, runs of rows broken by other sessions.
    monkeypatch.setattr(first_load, "_CHUNK_ROWS", 4)
    monkeypatch.setattr(first_load, "_session_chunks", lambda sessions: vectors._session_chunks(sessions, 3))
    with Store(db_path) as store:
        key = semantic.model_key(store, FAKE)
        in_memory, streamed = VectorIndex(key, FAKE.dim), VectorIndex(key, FAKE.dim)
        with store.reading() as conn:
            in_memory.refresh(conn)  # the way a first start went before: every vector in the process
            in_memory.save(tmp_path / "in-memory.npz", IDENTITY)
            assert streamed.build_snapshot(conn, tmp_path / "streamed.npz", IDENTITY)

    old, new = members(tmp_path / "in-memory.npz"), members(tmp_path / "streamed.npz")
    assert list(new) == list(old)
    assert new.pop("meta") == old.pop("meta")
    for name, array in old.items():
        assert isinstance(array, np.ndarray)
        assert new[name].dtype == array.dtype and np.array_equal(new[name], array), name
    assert len(streamed) == 5 + 13 + 9 + 7
    assert streamed.vectors.frozen == len(streamed)  # mapped, as a restart maps it
    same_rows(streamed, full_load(db_path))
    query = FAKE.embed_query("cache deploy turn 3")
    assert streamed.search(query, k=10) == full_load(db_path).search(query, k=10)
    assert not list(tmp_path.rglob("*.part"))  # the scratch file is gone


def refuse_full_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test if the index reads every stored vector into the process (``_rows_since(0)``)."""
    read = VectorIndex._rows_since

    def rows_since(self: VectorIndex, conn: object, seq: int) -> object:
        assert seq > 0, "every stored vector was read into the process"
        return read(self, conn, seq)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "_rows_since", rows_since)


def test_a_first_start_never_reads_every_vector_into_memory(
    db_path: Path, small_threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    interleaved_store(db_path)
    with monkeypatch.context() as patched:
        refuse_full_loads(patched)
        index, restored = open_index(db_path)
    assert not restored  # there was no snapshot to start from
    assert index.vectors.frozen == len(index) == 34 and not index.vectors.added.size
    snapshot_of(db_path)
    same_rows(index, full_load(db_path))


def test_a_reload_after_rows_went_never_reads_every_vector_into_memory(
    db_path: Path, small_threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows deleted behind the index's back (another process's erase): it starts again from a
    snapshot written from SQLite, as a first start does, not from every vector read into memory."""
    interleaved_store(db_path)
    open_index(db_path)
    with Store(db_path) as store:
        victim = store.connection.execute("SELECT min(id) FROM messages").fetchone()[0]
        delete_without_forget(store, victim)
    with monkeypatch.context() as patched:
        refuse_full_loads(patched)
        index, restored = open_index(db_path)
    assert restored  # it started from the old snapshot and saw a row gone
    assert index.vectors.frozen == len(index) == 33
    assert victim not in index.ids[index.codes == KIND_CODES[RecordKind.MESSAGE]].tolist()
    same_rows(index, full_load(db_path))
    fresh, restored = open_index(db_path)
    assert restored and len(fresh) == 33


def test_a_snapshot_is_on_disk_before_it_takes_its_name(
    db_path: Path, small_threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mapped vectors are never checked against the member's CRC: a system crash must not leave
    the snapshot's name over blocks that never reached the disk."""
    interleaved_store(db_path)
    events: list[str] = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(vector_rows.os, "fsync", lambda fd: (events.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(vector_rows.os, "replace", lambda a, b: (events.append("replace"), replace(a, b))[1])
    open_index(db_path)
    assert events == ["fsync", "replace"]


_KILLED_MID_WRITE = """
import os, signal, sys
import numpy as np
sys.path.insert(0, {root!r})
from recall.search import first_load, semantic
from tests.test_index_snapshot import FAKE
from recall.store import Store

semantic.SNAPSHOT_MIN_ROWS = 5
first_load._CHUNK_ROWS = 4
header = np.lib.format.write_array_header_1_0
def torn(member, fields):  # the vectors member: its header, then the first rows, then the end
    header(member, fields)
    member.write(b"\\1" * 4 * FAKE.dim)
    member.flush()
    os.kill(os.getpid(), signal.SIGKILL)
np.lib.format.write_array_header_1_0 = torn
with Store({db!r}) as store:
    semantic.vector_index(store, FAKE)
"""


def test_a_snapshot_torn_by_a_crash_is_never_trusted(db_path: Path, small_threshold: int) -> None:
    interleaved_store(db_path)
    script = _KILLED_MID_WRITE.format(root=str(ROOT), db=str(db_path))
    argv = [sys.executable, "-c", textwrap.dedent(script)]
    run = subprocess.run(argv, check=False, capture_output=True, timeout=120)
    assert run.returncode == -9, run.stderr.decode()

    assert not list(db_path.parent.glob("*.npz"))  # no snapshot took its name
    (torn,) = db_path.parent.glob("*.npz.*.part")  # the half-written file, never renamed
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(torn)
    assert not list(db_path.parent.glob("*.rows.part"))  # the scratch file left nothing behind

    index, restored = open_index(db_path)
    assert not restored
    same_rows(index, full_load(db_path))
    with np.load(snapshot_of(db_path)) as data:  # written again, whole
        assert data["vectors"].shape == (34, FAKE.dim)
