"""Several processes writing one database at once: the situation of N agents with N MCP servers."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from recall.models import RecordKind
from recall.search.embedder import FakeEmbedder
from recall.store import NewRecord, Store

WRITERS = 4
RECORDS_EACH = 40


def _write(db_path: str, writer: int) -> int:
    with Store(db_path, embedder=FakeEmbedder()) as store:
        for n in range(RECORDS_EACH):
            store.add(NewRecord(RecordKind.LEARNING, f"writer {writer} note {n} about locking", "p"))
            store.search("locking", project="p", limit=5)
    return writer


def test_concurrent_writers_all_land_without_errors(db_path: Path) -> None:
    """Every process opens a brand-new file: the first migrates, the others wait and skip."""
    db_path.parent.mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    with context.Pool(WRITERS) as pool:
        done = pool.starmap(_write, [(str(db_path), w) for w in range(WRITERS)])
    assert sorted(done) == list(range(WRITERS))
    with Store(db_path, embed_on_write=False) as store:
        count = store.connection.execute("SELECT count(*) FROM learnings").fetchone()[0]
        assert count == WRITERS * RECORDS_EACH
        assert len(store.search("locking", project="p", limit=500)) == WRITERS * RECORDS_EACH
        vectors = store.connection.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        assert vectors == WRITERS * RECORDS_EACH
