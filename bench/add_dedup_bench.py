"""What the near-duplicate check costs `recall add` (adr/0028): milliseconds per add into a project
that already holds N learnings, with the check (the default) and with --force (no check), for new
wordings that share no word with what is stored, new wordings that share some, and rewordings of a
stored record (which are refreshed). As the CLI does, rows are not embedded on write; the model loads
once, before timing, as it would for the first add that needs a cosine.

    python bench/add_dedup_bench.py [--records 2000] [--adds 50]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from recall.memory import Memory
from recall.search.embedder import get_embedder

TOPICS = ["sqlite", "postgres", "redis", "nginx", "docker", "pytest", "mypy", "ruff", "click", "httpx",
          "onnx", "numpy", "uvicorn", "celery", "kafka", "stripe", "oauth", "jwt", "webpack", "vite"]  # fmt: skip
VERBS = ["needs", "breaks without", "is slow with", "caches", "retries", "logs", "rejects", "pins", "wraps"]
THINGS = ["the connection pool", "a per-test tmp dir", "the lock file", "utf-8 paths", "the retry budget",
          "a 30 second timeout", "the WAL file", "the build cache", "the session token", "a signed URL"]  # fmt: skip


def sentence(rng: random.Random, n: int) -> str:
    return f"{rng.choice(TOPICS)} {rng.choice(VERBS)} {rng.choice(THINGS)} in module m{n}"


def timed(memory: Memory, texts: list[str], force: bool) -> tuple[float, int]:
    refreshed = 0
    start = time.perf_counter()
    for text in texts:
        refreshed += memory.add("learning", text, project="bench", force=force).refreshed is not None
    return (time.perf_counter() - start) * 1000 / len(texts), refreshed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--adds", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(7)
    embedder = get_embedder()
    embedder.embed_documents(["warm up"])
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "b.db", embedder=embedder, embed_on_write=False) as memory,
    ):
        stored = [sentence(rng, n) for n in range(args.records)]
        for text in stored:
            memory.add("learning", text, project="bench", force=True)
        unrelated = [f"zq{n}alpha zq{n}beta zq{n}gamma" for n in range(args.adds)]
        related = [sentence(rng, args.records + n) + " when run twice" for n in range(args.adds)]
        reworded = [f"in module m{n} {stored[n].rsplit(' in module', 1)[0]}" for n in range(args.adds)]
        print(f"{args.records} learnings stored; ms per add, mean of {args.adds}:")
        for name, texts in (
            ("no shared word", unrelated),
            ("shares words", related),
            ("rewording", reworded),
        ):
            check_ms, refreshed = timed(memory, texts, force=False)
            force_ms, _ = timed(memory, texts, force=True)  # the same texts again, stored whatever they say
            print(
                f"  {name:15} --force {force_ms:6.1f}   checked {check_ms:6.1f}   refreshed {refreshed}/{len(texts)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
