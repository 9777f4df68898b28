"""Hybrid search latency at 10k, 100k and 1M rows of generated data, and the prefilter's recall.

    python bench/vector_latency.py                   # the curve as a table (~10 minutes)
    python bench/vector_latency.py --json
    python bench/vector_latency.py --sizes 10000 100000 --queries 100

The store is real (migrations, FTS5 triggers, the Writer's bulk path) and grows in place from one
size to the next; every query goes through ``recall.search.hybrid.search``. What is synthetic:

- text: words drawn from a Zipf distribution (s = 1.07) over a vocabulary whose most frequent
  entries are English function words (so query-side stop-word handling meets real stop words)
  followed by generated words; messages have 4-60 words, records 8-30;
- vectors: 384-d, unit-norm, clustered around 2,000 centres that share a common direction; at 6k
  rows the mean pairwise cosine is 0.26 and the nearest neighbour's 0.73, as for MiniLM vectors of
  the LoCoMo turns (0.24 and 0.73): an anisotropic space, harder for sign bits than random vectors;
- queries: 3-8 Zipf words, with a vector near a random stored row's centre. The embedder is a
  stand-in that returns these precomputed vectors, so the timing is search, not the model; the
  real model's query time is measured on its own.

Latency is measured for queries over all projects and for queries filtered to one of 10 projects.
Prefilter recall compares ``VectorIndex.search`` with exact ranking over every stored row.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from timing import percentiles

from recall.models import KIND_CODES, Provenance, RecordKind
from recall.search import hybrid, semantic
from recall.search.fts_query import STOP_WORDS
from recall.search.vectors import VectorIndex, quantize
from recall.store import Store

DIM = 384
PROJECTS = [f"project-{n}" for n in range(10)]
MESSAGES_PER_SESSION = 50
RECORD_SHARE = 0.02  # decisions, learnings and breadcrumbs among the rows
CENTRES = 2_000
COMMON_DIRECTION = 0.75  # weight of the shared direction (anisotropy)
SPREAD = 0.6  # noise around a centre
ZIPF_S = 1.07
VOCABULARY = 30_000
CHUNK = 50_000
_MESSAGE_COLUMNS = ("project", "session_id", "external_id", "ordinal", "role", "origin", "kind", "content",
                    "timestamp", "content_hash")  # fmt: skip
_RECORD_COLUMNS = ("project", "content", "importance")


class QueryVectors:
    """An embedder stand-in: the precomputed vector of each benchmark query, nothing else."""

    model_id = "bench-synthetic-384"
    model_hash = hashlib.sha256(model_id.encode()).hexdigest()
    dim = DIM

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError("vectors are generated, not embedded")


class Generator:
    """Deterministic text and vectors (fixed seeds), in chunks so 1M rows stay within memory."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        self.words = vocabulary(random.Random(seed))
        ranks = np.arange(1, len(self.words) + 1, dtype=np.float64)
        weights = ranks**-ZIPF_S
        self.cumulative = np.cumsum(weights / weights.sum())
        common = self.rng.standard_normal(DIM)
        self.common = common / np.linalg.norm(common)
        centres = self.rng.standard_normal((CENTRES, DIM)) / np.sqrt(DIM)
        self.centres = unit(COMMON_DIRECTION * self.common + centres).astype(np.float32)

    def text(self, lengths: np.ndarray) -> list[str]:
        picks = np.searchsorted(self.cumulative, self.rng.random(int(lengths.sum())))
        out, start = [], 0
        for length in lengths:
            out.append(" ".join(self.words[i] for i in picks[start : start + length]))
            start += length
        return out

    def vectors(self, count: int) -> np.ndarray:
        centres = self.centres[self.rng.integers(0, CENTRES, count)]
        noise = self.rng.standard_normal((count, DIM)).astype(np.float32) * (SPREAD / np.sqrt(DIM))
        return unit(centres + noise).astype(np.float32)


def vocabulary(rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    generated: dict[str, None] = {}
    while len(generated) < VOCABULARY - len(STOP_WORDS):
        generated.setdefault("".join(rng.choices(syllables, k=rng.randint(1, 4))))
    return [*sorted(STOP_WORDS), *generated]


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)


def grow(store: Store, gen: Generator, key: int, start: int, stop: int) -> float:
    """Add rows ``start``..``stop`` through the Writer's bulk path (one transaction per chunk)."""
    began = time.perf_counter()
    for low in range(start, stop, CHUNK):
        count = min(CHUNK, stop - low)
        records = int(count * RECORD_SHARE)
        messages = count - records
        texts = gen.text(gen.rng.integers(4, 61, messages))
        record_texts = gen.text(gen.rng.integers(8, 31, records))
        projects = [PROJECTS[i] for i in gen.rng.integers(0, len(PROJECTS), count)]
        with store.transaction() as writer:
            first_session = _sessions(store, writer, low, messages, projects)
            rows = [
                {"project": projects[n], "session_id": first_session + n // MESSAGES_PER_SESSION,
                 "external_id": f"m{low + n}", "ordinal": n % MESSAGES_PER_SESSION,
                 "role": "user" if n % 2 else "assistant", "origin": "human" if n % 2 else "agent", "kind": "text",
                 "content": text, "timestamp": None, "content_hash": f"{low + n:x}"}
                for n, text in enumerate(texts)
            ]  # fmt: skip
            writer.insert_many("messages", rows, Provenance.VERBATIM, columns=_MESSAGE_COLUMNS)
            payload = _vectors(store, gen, RecordKind.MESSAGE, messages)
            for n, kind in enumerate((RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB)):
                share = record_texts[n::3]
                rows = [
                    {"project": projects[messages + i], "content": t, "importance": 5}
                    for i, t in enumerate(share)
                ]
                writer.insert_many(kind.value + "s", rows, Provenance.USER_AUTHORED, columns=_RECORD_COLUMNS)
                payload += _vectors(store, gen, kind, len(share))
            writer.store_vectors(key, payload)
    return time.perf_counter() - began


def _sessions(store: Store, writer: Any, low: int, messages: int, projects: list[str]) -> int:
    count = -(-messages // MESSAGES_PER_SESSION)
    rows = [{"project": projects[n * MESSAGES_PER_SESSION], "host": "bench", "external_id": f"s{low}-{n}"}
            for n in range(count)]  # fmt: skip
    writer.insert_many("sessions", rows, Provenance.VERBATIM, columns=("project", "host", "external_id"))
    return int(store.connection.execute("SELECT max(id) FROM sessions").fetchone()[0]) - count + 1


def _vectors(store: Store, gen: Generator, kind: RecordKind, count: int) -> list[tuple]:
    """(kind code, id, project, hash, scale, blob) for the ``count`` newest rows of ``kind``."""
    table = kind.value + "s"
    rows = store.connection.execute(
        f"SELECT id, project FROM {table} ORDER BY id DESC LIMIT ?", (count,)
    ).fetchall()[::-1]
    quantized, scales = quantize(gen.vectors(len(rows)))
    code = KIND_CODES[kind]
    return [
        (code, r[0], r[1], "", float(s), v.tobytes()) for r, s, v in zip(rows, scales, quantized, strict=True)
    ]


def queries(gen: Generator, embedder: QueryVectors, count: int) -> list[str]:
    texts = []
    centres = gen.centres[gen.rng.integers(0, CENTRES, count)]
    noise = gen.rng.standard_normal((count, DIM)).astype(np.float32) * (SPREAD / np.sqrt(DIM))
    for n, length in enumerate(gen.rng.integers(3, 9, count)):
        text = f"{gen.text(np.array([length]))[0]} q{n}"  # unique, and "q<n>" matches no row
        embedder.vectors[text] = unit(centres[n] + noise[n]).astype(np.float32)
        texts.append(text)
    return texts


def timed(
    store: Store, embedder: QueryVectors, texts: list[str], mode: str, project: str | None
) -> dict[str, float]:
    millis = []
    for text in texts:
        started = time.perf_counter()
        hybrid.search(store, text, mode=mode, project=project, limit=10, embedder=embedder)  # type: ignore[arg-type]
        millis.append((time.perf_counter() - started) * 1000)
    return percentiles(millis)


def fresh_load(store: Store, key: int, dim: int) -> float:
    """Seconds for a new process's first load of every vector (the grown index above is incremental)."""
    index = VectorIndex(key, dim)
    started = time.perf_counter()
    with store.reading() as conn:
        index.refresh(conn)
    return time.perf_counter() - started


def snapshot_load(store: Store, key: int, embedder: QueryVectors) -> float | None:
    """Seconds for a new process that starts from the index snapshot (None below its size threshold)."""
    path = semantic.snapshot_path(store, key)
    if path is None or not path.exists():
        return None
    index = VectorIndex(key, embedder.dim)
    started = time.perf_counter()
    restored = index.restore(path, f"{embedder.model_id} {embedder.model_hash}")
    with store.reading() as conn:
        index.refresh(conn)
    return round(time.perf_counter() - started, 2) if restored else None


def prefilter_recall(store: Store, embedder: QueryVectors, texts: list[str]) -> dict[str, float]:
    """Share of the exact top k that ``VectorIndex.search`` returns, over all rows and one project."""
    index = semantic.vector_index(store, embedder)  # type: ignore[arg-type]
    everything = np.arange(len(index))
    out: dict[str, list[float]] = {}
    for text in texts:
        vector = embedder.vectors[text]
        exact = index.exact_scores(vector, everything)
        for scope, project in (("all", None), ("project", PROJECTS[0])):
            allowed = everything if project is None else np.flatnonzero(index.project_mask(project))
            order = allowed[np.argsort(-exact[allowed], kind="stable")]
            for k in (10, 50):
                truth = {(int(index.codes[i]), int(index.ids[i])) for i in order[:k]}
                found = {(c, i) for c, i, _ in index.search(vector, k=k, project=project)}
                out.setdefault(f"{scope}@{k}", []).append(len(truth & found) / k)
    return {key: round(statistics.fmean(values), 4) for key, values in out.items()}


def model_query_time(count: int) -> dict[str, float]:
    from recall.search.embedder import get_embedder

    embedder = get_embedder()
    embedder.embed_query("warm up")
    gen = Generator(seed=11)
    millis = []
    for text in gen.text(gen.rng.integers(3, 12, count)):
        started = time.perf_counter()
        embedder.embed_query(text)
        millis.append((time.perf_counter() - started) * 1000)
    return percentiles(millis)


def run(args: argparse.Namespace) -> dict[str, Any]:
    gen = Generator()
    embedder = QueryVectors()
    texts = queries(gen, embedder, args.queries)
    curve = []
    with (
        tempfile.TemporaryDirectory(prefix="recall-latency-") as tmp,
        Store(Path(tmp) / "bench.db") as store,
    ):
        key = semantic.model_key(store, embedder)  # type: ignore[arg-type]
        have = 0
        for size in sorted(args.sizes):
            build_s = grow(store, gen, key, have, size)
            have = size
            started = time.perf_counter()
            semantic.vector_index(store, embedder)  # type: ignore[arg-type]
            load_s = time.perf_counter() - started
            point: dict[str, Any] = {
                "rows": size,
                "build_s": round(build_s, 1),
                "index_load_s": round(load_s, 2),
                "index_fresh_load_s": round(fresh_load(store, key, embedder.dim), 2),
                "index_snapshot_load_s": snapshot_load(store, key, embedder),
            }
            for scope, project in (("all", None), ("project", PROJECTS[0])):
                for mode in ("hybrid", "semantic", "keyword"):
                    point[f"{mode}_{scope}"] = timed(store, embedder, texts, mode, project)
            point["prefilter_recall"] = prefilter_recall(store, embedder, texts[: args.recall_queries])
            curve.append(point)
            print(json.dumps(point), file=sys.stderr, flush=True)
    return {"curve": curve, "model_query": model_query_time(args.queries),
            "settings": {"candidate_depth": hybrid.CANDIDATE_DEPTH, "limit": 10}}  # fmt: skip


def table(results: dict[str, Any]) -> str:
    head = f"{'rows':>9} {'build s':>8} {'scope':<8} " + " ".join(
        f"{m + ' p50/p95 ms':>22}" for m in ("hybrid", "semantic", "keyword")
    )
    lines = [head]
    for point in results["curve"]:
        for scope in ("all", "project"):
            cells = " ".join(
                f"{point[f'{m}_{scope}']['p50_ms']:>10.1f} / {point[f'{m}_{scope}']['p95_ms']:<9.1f}"
                for m in ("hybrid", "semantic", "keyword")
            )
            lines.append(f"{point['rows']:>9,} {point['build_s']:>8} {scope:<8} {cells}")
        recall = ", ".join(f"{k} {v:.3f}" for k, v in point["prefilter_recall"].items())
        lines.append(
            f"{'':>9} prefilter recall vs exact: {recall}; index load {point['index_load_s']} s "
            f"(after growth), {point['index_fresh_load_s']} s (all rows, new process), "
            f"{point['index_snapshot_load_s']} s (new process, from the snapshot)"
        )
    model = results["model_query"]
    lines.append(f"model query embedding (real ONNX): p50 {model['p50_ms']} ms, p95 {model['p95_ms']} ms")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size, mode and scope")
    parser.add_argument("--recall-queries", type=int, default=50, help="queries for the prefilter recall")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    results = run(args)
    print(json.dumps(results, indent=1) if args.json else table(results))


if __name__ == "__main__":
    main()
