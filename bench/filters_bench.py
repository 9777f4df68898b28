"""What the seed-parity filters cost a search: tags (every one must match) and dropping expired rows.

    python bench/filters_bench.py                 # 20,000 records, table
    python bench/filters_bench.py --records 5000 --json

A store of N decisions, learnings and breadcrumbs (a third each) over 4 projects, each with two of
eight tags, one in ten expired, written through the real write path (``Store.add``), with random
unit vectors under the fake embedder's key so meaning search costs what it would with real vectors
(ranking means nothing here; latency is the point). Each search runs ``--calls`` times after one
warm-up call; reported: p50 and p95 in milliseconds, for keyword and hybrid search in one project,
without tags, with one tag and with two, and the expiry check every semantic and hybrid search now
makes of its candidates (here 100 keyword candidates).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from timing import percentiles

from recall.memory import Memory
from recall.models import RecordKind
from recall.search.embedder import FakeEmbedder
from recall.search.filters import expired_among
from recall.search.keyword import keyword_candidates
from recall.search.semantic import embed_pending
from recall.store import NewRecord

TAGS = ("ci", "db", "auth", "deploy", "flaky", "perf", "docs", "ops")
WORDS = [
    "retry",
    "cache",
    "timeout",
    "migration",
    "schema",
    "index",
    "token",
    "deploy",
    "rollback",
    "queue",
    "worker",
    "lock",
]


def build(memory: Memory, records: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    kinds = (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB)
    for n in range(records):
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        memory.store.add(
            NewRecord(
                kinds[n % 3],
                f"record {n}: {words}",
                f"project-{n % 4}",
                tags=tuple(rng.sample(TAGS, 2)),
                valid_until=now - timedelta(days=1) if n % 10 == 0 else None,
            )
        )
    embed_pending(memory.store, memory.embedder)


def timed(call: Any, calls: int) -> dict[str, float]:
    call()
    spent = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        spent.append((time.perf_counter() - started) * 1000)
    return percentiles(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "b.db", embedder=FakeEmbedder()) as memory,
    ):
        started = time.perf_counter()
        build(memory, args.records)
        built = time.perf_counter() - started
        rows: dict[str, dict[str, float]] = {}
        for mode in ("keyword", "hybrid"):
            for label, tags in (("no tags", ()), ("1 tag", ("db",)), ("2 tags", ("db", "flaky"))):
                rows[f"{mode}, {label}"] = timed(
                    lambda mode=mode, tags=tags: memory.search(
                        "cache timeout", mode=mode, project="project-1", tags=tags, limit=10
                    ),
                    args.calls,
                )
        with memory.store.reading() as conn:
            candidates = keyword_candidates(conn, "cache", project="project-1", table=None, depth=100)
            rows["expired lookup"] = timed(lambda: expired_among(conn, candidates), args.calls)
    if args.json:
        print(json.dumps({"records": args.records, "build_s": round(built, 1), "searches": rows}, indent=2))
        return
    print(f"{args.records:,} records built in {built:.1f} s")
    for name, figures in rows.items():
        print(f"{name:<22} p50 {figures['p50_ms']:>8.2f} ms   p95 {figures['p95_ms']:>8.2f} ms")


if __name__ == "__main__":
    main()
