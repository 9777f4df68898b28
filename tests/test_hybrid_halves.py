"""Hybrid search runs its keyword half on the store's second connection in a worker thread while the
vector half runs (adr/0041): the same hits, scores and parts as running them one after the other."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from recall.memory import Memory
from recall.search import keyword
from recall.store import Store

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
QUERIES = ["test", "the file", "error handling", "sqlite database", "run pytest", "fix the bug", "zzzz"]


def test_both_halves_together_find_what_they_find_one_after_the_other(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.import_transcripts(["claude"], paths=[SPOTTER])
    memory.add("decision", "Run pytest with the sqlite database in a temporary folder", project="spotter")
    threads: list[str] = []
    candidates = keyword.keyword_candidates

    def spy(conn: object, *args: object, **kwargs: object) -> dict[int, float]:
        threads.append(threading.current_thread().name)
        return candidates(conn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(keyword, "keyword_candidates", spy)
    together = [memory.search(query, mode="hybrid", project="*", limit=20).hits for query in QUERIES]
    assert threads and all(name.startswith("recall-keyword") for name in threads)
    threads.clear()
    monkeypatch.setattr(Store, "side_reader", lambda self: None)
    apart = [memory.search(query, mode="hybrid", project="*", limit=20).hits for query in QUERIES]
    assert threads and all(name == threading.current_thread().name for name in threads)
    assert [
        [(h.ref, h.score, h.cosine, h.keyword_score, h.keyword_rank) for h in hits] for hits in together
    ] == [[(h.ref, h.score, h.cosine, h.keyword_score, h.keyword_rank) for h in hits] for hits in apart]
    assert any(together)


def test_the_second_connection_closes_with_the_store(db_path: Path) -> None:
    with Store(db_path) as store:
        side = store.side_reader()
        assert side is not None and store.side_reader() is side
    with pytest.raises(Exception, match="closed"):
        side.execute("SELECT 1")
