"""How long `recall eval` takes on a 100,000-message database (issue 13's target: at most 60 s).

    python bench/eval_bench.py                 # 100k rows, default probe budget
    python bench/eval_bench.py --rows 20000 --json

The store is ``bench/vector_latency.py``'s (real migrations, FTS5 triggers, the Writer's bulk path;
Zipf text, 10 projects, sessions of 50 messages, clustered 384-d vectors). Every query is embedded
by the real ONNX model, so the model's time is counted; the vector it returns is searched against
the generated vectors (stored under the generated model's key), so the search costs what it would
with real vectors while its ranking means nothing: the figure is time, not quality.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from vector_latency import Generator, QueryVectors, grow

from recall.memory import Memory
from recall.search import semantic
from recall.search.embedder import Embedder, get_embedder


class RealQueries:
    """The real model's query vectors under the generated vectors' model key."""

    model_id = QueryVectors.model_id
    model_hash = QueryVectors.model_hash
    dim = QueryVectors.dim

    def __init__(self, model: Embedder) -> None:
        self.model = model

    def embed_query(self, text: str) -> np.ndarray:
        return self.model.embed_query(text)

    def embed_documents(self, texts: Any) -> np.ndarray:
        raise NotImplementedError("the stored vectors are generated")


def run(rows: int) -> dict[str, Any]:
    embedder = RealQueries(get_embedder())
    with (
        tempfile.TemporaryDirectory(prefix="recall-eval-bench-") as tmp,
        Memory(Path(tmp) / "bench.db", embedder=embedder) as memory,  # type: ignore[arg-type]
    ):
        key = semantic.model_key(memory.store, embedder)  # type: ignore[arg-type]
        build_s = grow(memory.store, Generator(), key, 0, rows)
        embedder.embed_query("warm up")
        started = time.perf_counter()
        report = memory.evaluate()
        wall = time.perf_counter() - started
    return {"rows": rows, "build_s": round(build_s, 1), "eval_s": round(wall, 1),
            "probes": report.probes, "skipped": report.skipped, "modes": report.modes}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.rows)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{result['rows']:,} rows: recall eval {result['eval_s']} s ({sum(result['probes'].values())} probes "
              f"{result['probes']}, modes {', '.join(result['modes'])}; skipped {result['skipped']}); "
              f"store built in {result['build_s']} s")  # fmt: skip


if __name__ == "__main__":
    main()
