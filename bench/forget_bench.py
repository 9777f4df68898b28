"""What forgetting costs on a large store: forget, bulk forget, purge and rescrub at 100,000 messages.

Builds a store through the real import path (import_bench's generated Claude Code transcripts:
prose, tool calls, tool output up to 60 lines), gives the text messages vectors with the fast
stand-in embedder (so a vector index and its snapshot exist), adds 1,000 tagged learnings, then
times each erase. The keyword-index step is reported on its own: on SQLite older than 3.43 (this
machine: 3.40) a forget merges the whole index (``'optimize'``); with pysqlite3-binary installed,
the same delete is also timed under a newer SQLite with FTS5's own secure-delete, on a copy.

    python bench/forget_bench.py [--messages 100000] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from import_bench import generate

from recall.kinds import Kind, Ref
from recall.models import RecordKind
from recall.search import semantic
from recall.search.embedder import FakeEmbedder
from recall.store import NewRecord, Store
from recall.store.erase import forget, forget_many
from recall.store.purge import purge
from recall.store.rescrub import rescrub
from recall.store.wipe import wipe

REPEATS = 5
EMBEDDER = FakeEmbedder()  # fast and deterministic: the vectors only have to exist


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def build(root: Path, messages: int, sessions: int) -> tuple[Store, dict[str, Any]]:
    from adapters import get_adapter
    from recall.ingest import run_import

    generate(root / "claude", messages, sessions)
    store = Store(root / "bench.db")
    seconds, summary = timed(
        lambda: run_import(store, [get_adapter("claude")], paths=[root / "claude"], embed_budget_seconds=0)
    )
    embed_seconds, report = timed(lambda: semantic.embed_pending(store, EMBEDDER))
    for n in range(1_000):
        tags = ("scratch", f"batch{n % 10}")
        store.add(
            NewRecord(RecordKind.LEARNING, f"learning number {n} about the cache", f"proj{n % 12}", tags=tags)
        )
    semantic.embed_pending(store, EMBEDDER)
    semantic.vector_index(store, EMBEDDER)  # an in-memory index, and its snapshot at >= 50,000 rows
    with store.reading() as conn:
        index_bytes = conn.execute("SELECT sum(length(block)) FROM search_index_data").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store, {
        "messages": summary.messages_added,
        "sessions": summary.sessions_new,
        "import_s": round(seconds, 1),
        "vectors": report.embedded,
        "embed_s": round(embed_seconds, 1),
        "database_mib": round((root / "bench.db").stat().st_size / 1_048_576, 1),
        "keyword_index_mib": round(index_bytes / 1_048_576, 1),
        "snapshot": bool(list(root.glob("bench.db.vectors-*.npz"))),
    }


def pick(store: Store, sql: str, count: int) -> list[int]:
    with store.reading() as conn:
        return [row[0] for row in conn.execute(sql + f" LIMIT {count}")]


def index_fallback_cost(store: Store, message_id: int) -> dict[str, float]:
    """The two halves of a forget's keyword-index work on SQLite < 3.43: the delete, then the merge."""
    delete_s, _ = timed(lambda: _raw_delete(store, message_id))
    with store.transaction() as writer:
        merge_s, _ = timed(writer.merge_index)
    return {"delete_only_s": round(delete_s, 4), "optimize_s": round(merge_s, 3)}


def _raw_delete(store: Store, message_id: int) -> None:
    with store.transaction():
        store.connection.execute("DELETE FROM messages WHERE id = ?", (message_id,))


def secure_delete_cost(db_path: Path, message_id: int) -> dict[str, Any]:
    """The same one-message delete under a newer SQLite with FTS5's secure-delete, on a copy."""
    try:
        import pysqlite3.dbapi2 as newer  # type: ignore[import-not-found]
    except ImportError:
        return {"skipped": "pysqlite3-binary is not installed"}
    from recall.store.writer import Writer

    copy = db_path.with_name("secure-copy.db")
    shutil.copy(db_path, copy)
    conn = newer.connect(str(copy), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("PRAGMA foreign_keys = ON")
    laps = []
    for offset in range(REPEATS):
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        Writer(conn).erase_index_in_place()  # type: ignore[arg-type]
        conn.execute("DELETE FROM messages WHERE id = ?", (message_id + offset,))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        laps.append(time.perf_counter() - started)
    conn.close()
    return {"sqlite": newer.sqlite_version, "delete_and_checkpoint_s": summary(laps)}


def summary(laps: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(laps), 3), "max": round(max(laps), 3)}


def run(messages: int, sessions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recall-forget-bench-") as tmp:
        root = Path(tmp)
        store, built = build(root, messages, sessions)
        text = "SELECT id FROM messages WHERE kind = 'text' ORDER BY id DESC"
        out: dict[str, Any] = {"store": built}
        out["secure_delete"] = secure_delete_cost(root / "bench.db", pick(store, text, 1)[0] - 100)
        out["index_fallback"] = index_fallback_cost(store, pick(store, text, 1)[0])
        laps = [timed(lambda m=m: forget(store, Ref(Kind.MESSAGE, m)))[0] for m in pick(store, text, REPEATS)]
        out["forget_message_s"] = summary(laps)
        learnings = pick(store, "SELECT id FROM learnings ORDER BY id", REPEATS)
        out["forget_learning_s"] = summary(
            [timed(lambda i=i: forget(store, Ref(Kind.LEARNING, i)))[0] for i in learnings]
        )
        session_id = pick(store, "SELECT id FROM sessions ORDER BY id", 1)[0]
        seconds, report = timed(lambda: forget(store, Ref(Kind.SESSION, session_id)))
        out["forget_session"] = {"s": round(seconds, 2), "messages": report.deleted["message"]}
        seconds, _ = timed(lambda: semantic.vector_index(store, EMBEDDER))
        out["first_vector_search_after_forget_s"] = round(seconds, 2)  # the snapshot is gone: a full load
        seconds, counted = timed(lambda: forget_many(store, project="*", tags=["scratch", "batch3"]))
        out["forget_many_count_s"] = round(seconds, 3)
        seconds, done = timed(
            lambda: forget_many(store, project="*", tags=["scratch", "batch3"], confirm=counted.matched)
        )
        out["forget_many_delete"] = {"s": round(seconds, 2), "records": done.total}
        seconds, dry = timed(lambda: purge(store, project="proj1", dry_run=True))
        out["purge_dry_run"] = {"s": round(seconds, 2), "messages": dry.counts["message"]}
        seconds, purged = timed(lambda: purge(store, project="proj1"))
        out["purge_project"] = {
            "s": round(seconds, 2), "messages": purged.counts["message"],
            "mib_before": round(purged.size_before / 1_048_576, 1), "mib_after": round(purged.size_after / 1_048_576, 1),
        }  # fmt: skip
        seconds, _ = timed(lambda: wipe(store, vacuum=True))
        out["vacuum_and_checkpoint_s"] = round(seconds, 2)
        seconds, scrubbed = timed(lambda: rescrub(store))
        rows = sum(scrubbed.checked.values())
        out["rescrub"] = {"s": round(seconds, 2), "rows": rows, "rewritten": sum(scrubbed.rewritten.values()),
                          "us_per_row": round(seconds / rows * 1e6, 1)}  # fmt: skip
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.messages, args.sessions)
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
