"""The vector index snapshot beside the database: a new process starts from it, never from stale rows."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import numpy as np
import pytest

from recall.search import semantic
from recall.search.embedder import FakeEmbedder
from recall.search.vectors import VectorIndex
from recall.store import Store
from recall.transcript import Origin, Role, Transcript, TranscriptMessage

WORDS = ["cache", "deploy", "schema", "queue", "lint", "retry", "thread", "index", "token", "shard"]

FAKE = FakeEmbedder()  # every instance of one dimension has the same model hash


def session(external_id: str, turns: int) -> Transcript:
    messages = tuple(
        TranscriptMessage(
            key=f"{external_id}-{n}",
            role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
            text=f"{external_id} {WORDS[n % len(WORDS)]} {WORDS[(n * 3) % len(WORDS)]} turn {n}",
            origin=Origin.HUMAN if n % 2 == 0 else Origin.AGENT,
        )
        for n in range(turns)
    )
    return Transcript(host="test", external_id=external_id, messages=messages)


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> int:
    """Snapshots for indexes of a few rows, so tests need not embed 50,000."""
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 5)
    return 5


def fill(db_path: Path, *sessions: Transcript) -> None:
    with Store(db_path) as store:
        store.import_transcripts(list(sessions), project="p")
        semantic.embed_pending(store, FAKE)


def open_index(db_path: Path) -> tuple[VectorIndex, bool]:
    """What a new process gets: the index, and whether it started from the snapshot."""
    with Store(db_path) as store:
        restored: list[bool] = []
        original = VectorIndex.restore

        def spy(self: VectorIndex, path: Path, identity: str) -> bool:
            restored.append(original(self, path, identity))
            return restored[-1]

        VectorIndex.restore = spy  # type: ignore[method-assign]
        try:
            index = semantic.vector_index(store, FAKE)
        finally:
            VectorIndex.restore = original  # type: ignore[method-assign]
        return index, bool(restored and restored[0])


def full_load(db_path: Path) -> VectorIndex:
    with Store(db_path) as store:
        index = VectorIndex(semantic.model_key(store, FAKE), FAKE.dim)
        with store.reading() as conn:
            index.refresh(conn)
        return index


def same_rows(a: VectorIndex, b: VectorIndex) -> None:
    """Both indexes hold the same live rows with the same (mixed) vectors and sign bits."""

    def live(index: VectorIndex) -> dict[tuple[int, int], tuple[bytes, float, bytes]]:
        out = {}
        for p in np.flatnonzero(index.codes >= 0):
            out[(int(index.codes[p]), int(index.ids[p]))] = (
                index.vectors[p].tobytes(),
                float(index.scales[p]),
                index.bits[:, p].tobytes(),
            )
        return out

    assert live(a) == live(b)


def delete_without_forget(store: Store, message_id: int) -> None:
    """A row gone by a path that leaves the snapshot alone (an older recall, another tool):
    `recall forget` deletes the snapshot itself (tests/test_forget.py)."""
    with store.transaction():
        store.connection.execute("DELETE FROM messages WHERE id = ?", (message_id,))


def snapshot_of(db_path: Path) -> Path:
    files = list(db_path.parent.glob(f"{db_path.name}.vectors-*.npz"))
    assert len(files) == 1, files
    return files[0]


def test_a_new_process_starts_from_the_snapshot(db_path: Path, small_threshold: int) -> None:
    fill(db_path, session("s1", 8), session("s2", 6))
    _, restored = open_index(db_path)
    assert not restored  # nothing to start from yet; this load writes the snapshot
    path = snapshot_of(db_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    second, restored = open_index(db_path)
    assert restored
    same_rows(second, full_load(db_path))
    assert len(second) == 14


def test_rows_added_after_the_snapshot_are_read_and_mixed(db_path: Path, small_threshold: int) -> None:
    fill(db_path, session("s1", 8))
    open_index(db_path)  # writes the snapshot of 8 rows
    fill(db_path, session("s1", 12), session("s2", 3))  # s1 grows: its old last turn gets a successor

    index, restored = open_index(db_path)
    assert restored
    assert np.count_nonzero(index.codes >= 0) == 15  # s1's mapped rows moved to the end (adr/0041)
    same_rows(index, full_load(db_path))


def test_a_deleted_row_is_not_served_from_the_snapshot(db_path: Path, small_threshold: int) -> None:
    fill(db_path, session("s1", 8), session("s2", 6))
    open_index(db_path)
    with Store(db_path) as store:
        victim = store.connection.execute(
            "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE s.external_id = 's2' ORDER BY m.ordinal LIMIT 1"
        ).fetchone()[0]
        delete_without_forget(store, victim)

    index, restored = open_index(db_path)
    assert restored  # it started from the snapshot, saw the count drop, and reloaded
    assert len(index) == 13
    assert victim not in index.ids[index.codes >= 0].tolist()
    same_rows(index, full_load(db_path))
    fresh, _ = open_index(db_path)  # the snapshot was rewritten without the row
    assert len(fresh) == 13


def test_a_small_index_deletes_its_snapshot_after_a_reload(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 14)
    fill(db_path, session("s1", 8), session("s2", 6))
    open_index(db_path)
    snapshot_of(db_path)
    with Store(db_path) as store:
        first = store.connection.execute("SELECT min(id) FROM messages").fetchone()[0]
        delete_without_forget(store, first)
    index, _ = open_index(db_path)
    assert len(index) == 13
    assert not list(db_path.parent.glob("*.npz"))  # a forgotten row's vector does not outlive it on disk


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_snapshot_is_ignored(db_path: Path, small_threshold: int, damage: str) -> None:
    fill(db_path, session("s1", 8), session("s2", 6))
    open_index(db_path)
    path = snapshot_of(db_path)
    data = path.read_bytes()
    path.write_bytes(
        {"garbage": b"not a zip file at all" * 50, "truncated": data[: len(data) // 2], "empty": b""}[damage]
    )

    index, restored = open_index(db_path)
    assert not restored
    same_rows(index, full_load(db_path))


def test_a_snapshot_of_another_model_or_mix_is_refused(db_path: Path, small_threshold: int) -> None:
    fill(db_path, session("s1", 8))
    open_index(db_path)
    path = snapshot_of(db_path)
    with Store(db_path) as store:
        key = semantic.model_key(store, FAKE)
    embedder = FakeEmbedder()
    identity = f"{embedder.model_id} {embedder.model_hash}"

    assert VectorIndex(key, embedder.dim).restore(path, identity)
    assert not VectorIndex(key, embedder.dim).restore(path, "other-model 0123")
    assert not VectorIndex(key, embedder.dim, mix={-1: 0.5}).restore(path, identity)
    assert not VectorIndex(key + 1, embedder.dim).restore(path, identity)


def test_a_replaced_last_row_is_caught_by_its_vector(db_path: Path, small_threshold: int) -> None:
    """SQLite hands the highest rowid out again: same count and last seq, different vector."""
    fill(db_path, session("s1", 8))
    open_index(db_path)
    with Store(db_path) as store:
        conn = store.connection
        seq, kind, row_id, project, model_key, digest = conn.execute(
            "SELECT seq, kind_code, row_id, project, model_key, content_hash FROM embeddings ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        other = np.full(FAKE.dim, 3, dtype=np.int8).tobytes()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM embeddings WHERE seq = ?", (seq,))
        conn.execute(
            "INSERT INTO embeddings (seq, kind_code, row_id, model_key, project, content_hash, scale, vector) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, kind, row_id, model_key, project, digest, 0.01, other),
        )
        conn.execute("COMMIT")

    index, restored = open_index(db_path)
    assert restored
    same_rows(index, full_load(db_path))


def test_a_restored_index_maps_its_vectors_and_never_writes_to_them(
    db_path: Path, small_threshold: int
) -> None:
    """adr/0041: the snapshot's vectors are mapped read-only; a mapped row that must be mixed again
    moves to the end once, and the next snapshot holds live rows only."""
    fill(db_path, session("s1", 8), session("s2", 6))
    open_index(db_path)
    with Store(db_path) as store:
        index = semantic.vector_index(store, FAKE)
        assert index.vectors.frozen == 14 and not index.vectors.base.flags.writeable

        fill(db_path, session("s1", 10))  # s1 gains two turns: its 8 mapped rows are mixed again
        assert semantic.vector_index(store, FAKE) is index
        assert len(index) == 14 + 2 + 8 and np.count_nonzero(index.codes >= 0) == 16
        same_rows(index, full_load(db_path))
        fill(db_path, session("s2", 7))  # s2's rows are still mapped; s1's moved rows stay put
        semantic.vector_index(store, FAKE)
        assert len(index) == 24 + 1 + 6
        same_rows(index, full_load(db_path))

        index.save(snapshot_of(db_path), f"{FAKE.model_id} {FAKE.model_hash}")
        assert len(index) == 17 and index.vectors.frozen == 17  # started again from the file it wrote
        with np.load(snapshot_of(db_path)) as data:
            assert data["ids"].shape == (17,) and data["vectors"].shape == (17, FAKE.dim)
        same_rows(index, full_load(db_path))


def test_an_idle_index_lets_go_of_its_mapped_pages(
    db_path: Path, small_threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """adr/0041: the pages a search mapped are let go once searches stop, not after each one."""
    from recall.search import vector_rows, vectors

    monkeypatch.setattr(vectors, "RELEASE_AFTER_S", 0.05)
    released: list[object] = []
    monkeypatch.setattr(vector_rows.VectorRows, "release", lambda self: released.append(self))
    fill(db_path, session("s1", 8), session("s2", 6))
    open_index(db_path)
    index, restored = open_index(db_path)
    assert restored
    query = FAKE.embed_query("cache deploy")
    for _ in range(3):
        index.search(query, k=3)
    assert index.vectors not in released  # a burst keeps them
    deadline = time.monotonic() + 5
    while index.vectors not in released and time.monotonic() < deadline:
        time.sleep(0.01)
    assert released.count(index.vectors) == 1
