"""Latency of `recall connections` (and the graph) at 100,000 messages.

Builds the import benchmark's corpus (bench/import_bench.py: Claude Code sessions with test runs,
edits, reads, failing runs and prose that names files), imports it with connections on, adds
decisions and learnings that name some of its files, then asks ``find_connections`` about files (by
path and by base name), commands, symbols and errors, and ``knowledge_graph`` for project pages. It
reports p50 and p95 per call in milliseconds, in process (no interpreter start-up), after warm-up.

    python bench/connections_bench.py [--messages 100000] [--queries 300] [--db PATH] [--json]

``--db`` keeps the built database (or reuses it when it exists), so a second run skips the build.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import percentiles


def build(db: Path, messages: int, sessions: int, records: int) -> dict[str, float]:
    from import_bench import generate

    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.models import RecordKind
    from recall.store import NewRecord, Store

    with tempfile.TemporaryDirectory(prefix="recall-connections-bench-") as tmp:
        generate(Path(tmp) / "claude", messages, sessions)
        started = time.perf_counter()
        with Store(db) as store:
            summary = run_import(
                store, [get_adapter("claude")], paths=[Path(tmp) / "claude"], embed_budget_seconds=0
            )
            imported = time.perf_counter() - started
            files = store.connection.execute(
                "SELECT project, name FROM entities WHERE type = 'file' ORDER BY id"
            ).fetchall()
            rng = random.Random(3)
            for n in range(records):
                project, name = rng.choice(files)
                kind = RecordKind.DECISION if n % 2 else RecordKind.LEARNING
                store.add(NewRecord(kind, f"{name} keeps its cache per request (note {n})", project))
    return {"messages": summary.messages_added, "links": summary.links, "import_s": round(imported, 1)}


def queries(db: Path, count: int) -> list[tuple[str, str, str]]:
    """(kind, query, project): files by path and by base name, commands, symbols, errors."""
    import sqlite3

    conn = sqlite3.connect(db)
    rng = random.Random(5)
    pools = {
        kind: conn.execute(f"SELECT name, project FROM entities WHERE type = '{kind}'").fetchall()
        for kind in ("file", "command", "symbol", "error")
    }
    conn.close()
    asked = []
    for n in range(count):
        kind = ("file", "file_base", "command", "symbol", "error")[n % 5]
        name, project = rng.choice(pools["file" if kind == "file_base" else kind])
        asked.append(
            (kind, name.rsplit("/", 1)[-1] if kind == "file_base" else name.split(":", 1)[0], project)
        )
    return asked


def measure(db: Path, asked: list[tuple[str, str, str]]) -> dict[str, object]:
    from recall.connections import find_connections, knowledge_graph
    from recall.store import Store

    with Store(db) as store:
        for _, query, project in asked[:10]:  # warm-up: page cache, statement cache
            find_connections(store, query, project)
        times: dict[str, list[float]] = {}
        found = 0
        for kind, query, project in asked:
            started = time.perf_counter()
            result = find_connections(store, query, project)
            times.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
            found += bool(result.entities)
        graph = []
        for offset in (0, 100, 200, 0, 100, 200, 0, 100, 200, 0, 100, 200):
            started = time.perf_counter()
            knowledge_graph(store, "proj1", limit=100, offset=offset)
            graph.append((time.perf_counter() - started) * 1000)
    every = [ms for values in times.values() for ms in values]
    return {
        "find_connections": percentiles(every),
        "by_kind": {kind: percentiles(values) for kind, values in times.items()},
        "answered": f"{found}/{len(asked)}",
        "knowledge_graph_page_100": percentiles(graph),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-connections-db-") as tmp:
        db = args.db or Path(tmp) / "bench.db"
        built = {} if db.exists() else build(db, args.messages, args.sessions, args.records)
        result = {**built, **measure(db, queries(db, args.queries))}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    if built:
        print(f"built {built['messages']:,} messages, {built['links']:,} links in {built['import_s']} s")
    fc = result["find_connections"]
    print(
        f"find_connections: p50 {fc['p50_ms']} ms, p95 {fc['p95_ms']} ms (target p50 20 ms); {result['answered']} found"
    )
    for kind, p in result["by_kind"].items():  # type: ignore[union-attr]
        print(f"  {kind:<10} p50 {p['p50_ms']} ms, p95 {p['p95_ms']} ms")
    g = result["knowledge_graph_page_100"]
    print(f"knowledge_graph, 100 entities a page: p50 {g['p50_ms']} ms, p95 {g['p95_ms']} ms")


if __name__ == "__main__":
    main()
