"""Several processes writing one database at once: the situation of N agents with N MCP servers."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from recall.memory import Memory
from recall.results import Hit
from recall.search.embedder import FakeEmbedder
from recall.search.keyword import keyword_search
from recall.store import Store


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


WRITERS = 4
RECORDS_EACH = 40


def _write(db_path: str, writer: int) -> int:
    with Memory(db_path, embedder=FakeEmbedder()) as memory:
        for n in range(RECORDS_EACH):
            # Forced: these templated notes are near-duplicates of each other by wording.
            memory.add("learning", f"writer {writer} note {n} about locking", project="p", force=True)
            memory.search("locking", mode="keyword", project="p", limit=5)
    return writer


def test_concurrent_writers_all_land_without_errors(db_path: Path) -> None:
    """Every process opens a brand-new file: the first migrates, the others wait and skip."""
    db_path.parent.mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    with context.Pool(WRITERS) as pool:
        done = pool.starmap(_write, [(str(db_path), w) for w in range(WRITERS)])
    assert sorted(done) == list(range(WRITERS))
    with Store(db_path) as store:
        count = store.connection.execute("SELECT count(*) FROM learnings").fetchone()[0]
        assert count == WRITERS * RECORDS_EACH
        assert len(keyword(store, "locking", project="p", limit=500)) == WRITERS * RECORDS_EACH
        vectors = store.connection.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        assert vectors == WRITERS * RECORDS_EACH
