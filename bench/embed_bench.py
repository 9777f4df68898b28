"""Throughput and latency of recall's local embedder, for the embedding ADR.

    PYTHONPATH=. python bench/embed_bench.py                  # table
    PYTHONPATH=. python bench/embed_bench.py --json           # figures as JSON
    PYTHONPATH=. python bench/embed_bench.py --max-batch-tokens 8192   # try another batching rule

Texts are drawn from a fixed word list with a fixed seed, so runs compare: "short" texts have 20 words
(~24 tokens, a typical chat message), "long" ones 200 words (~220 tokens, under the 256-token cut),
queries 10 words (~13 tokens). Throughput is the median of ``--repeat`` timed ``embed_documents``
calls after a warm-up; query latency is over ``--queries`` single ``embed_query`` calls. On a shared
machine other processes halve these figures easily: the output records the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import time

from timing import percentiles  # bench/ is this script's folder, first on sys.path

from recall.search.embedder import MAX_BATCH_TEXTS, MAX_BATCH_TOKENS, OnnxEmbedder

# Word source for the synthetic texts: the register of an agent's notes and messages.
_NOTES = """
the deploy failed because the cache was stale so we rolled back and retried after the migration we
fixed a bug in the server client where a timeout on the queue made the worker thread hold the lock
review the branch before merge and run the test build with the new config the error log shows a
network latency spike when the agent imports the module the search index returns the wrong file path
for a user query so the vector token function in the release version needs a patch to the api request
"""
WORDS = _NOTES.split()


def texts(count: int, words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=words)) for _ in range(count)]


def rate(embedder: OnnxEmbedder, batch: list[str], repeat: int) -> float:
    """Texts per second: median over ``repeat`` whole-list calls, as recall's write queue makes them."""
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        embedder.embed_documents(batch)
        seconds.append(time.perf_counter() - start)
    return len(batch) / statistics.median(seconds)


def run(args: argparse.Namespace) -> dict[str, float | int | str]:
    embedder = OnnxEmbedder(max_batch_tokens=args.max_batch_tokens, max_batch_texts=args.max_batch_texts)
    start = time.perf_counter()
    embedder.embed_query("warm up")  # hash check (cached after the first run), session load, first run
    load_s = time.perf_counter() - start
    embedder.embed_documents(texts(64, 20, seed=0))

    latencies = []
    for query in texts(args.queries, 10, seed=3):
        start = time.perf_counter()
        embedder.embed_query(query)
        latencies.append((time.perf_counter() - start) * 1000)
    query = percentiles(latencies)
    return {
        "model_id": embedder.model_id,
        "max_batch_tokens": args.max_batch_tokens,
        "max_batch_texts": args.max_batch_texts,
        "load_s": round(load_s, 3),
        "short_texts": args.short,
        "short_per_s": round(rate(embedder, texts(args.short, 20, seed=1), args.repeat), 1),
        "long_texts": args.long,
        "long_per_s": round(rate(embedder, texts(args.long, 200, seed=2), args.repeat), 1),
        "query_p50_ms": query["p50_ms"],
        "query_p95_ms": query["p95_ms"],
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        # Other processes' load skews every figure above; a load near the core count means contention.
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count() or 0,
    }


def table(figures: dict[str, float | int | str]) -> str:
    rows = [
        ("model", f"{figures['model_id']}"),
        (
            "batching",
            f"<= {figures['max_batch_tokens']} padded tokens, <= {figures['max_batch_texts']} texts",
        ),
        ("load + first query", f"{figures['load_s']:.2f} s"),
        (f"short, 20 words x {figures['short_texts']}", f"{figures['short_per_s']:.0f} texts/s"),
        (f"long, 200 words x {figures['long_texts']}", f"{figures['long_per_s']:.1f} texts/s"),
        ("query p50 / p95", f"{figures['query_p50_ms']:.1f} / {figures['query_p95_ms']:.1f} ms"),
        ("peak RSS", f"{figures['peak_rss_mb']} MB"),
        ("load average (1 min)", f"{figures['load_avg_1m']} on {figures['cpus']} CPUs"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--short", type=int, default=1000, help="number of 20-word texts")
    parser.add_argument("--long", type=int, default=100, help="number of 200-word texts")
    parser.add_argument("--queries", type=int, default=200, help="number of single queries timed")
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per throughput figure")
    parser.add_argument("--max-batch-tokens", type=int, default=MAX_BATCH_TOKENS)
    parser.add_argument("--max-batch-texts", type=int, default=MAX_BATCH_TEXTS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args)
    print(json.dumps(figures, indent=2) if args.json else table(figures))


if __name__ == "__main__":
    main()
