"""How close recall is to the floor of its own work, each figure beside its floor, in one run (issue 16).

    python bench/floors.py --json                       # 60,000 lines, 100,000 rows (~5 minutes)
    python bench/floors.py --rows 1000000 --json        # the 1M-row tail as well (~15 minutes more)
    python bench/floors.py --only import commands       # some sections

Every pair is measured in the same process, on the same data, one after the other:

- **import**: generated Claude Code JSONL (bench/import_bench.py's corpus) imported into a fresh
  database with no embedding (``embed_budget_seconds=0``), once with extraction and connections off
  and once with both on, against the floor: reading every file and ``json.loads`` on every line.
- **keyword**: ``Memory.search(mode="keyword")`` against a bare FTS5 MATCH of the expression recall
  builds for the same query (``fts_query.build_match``, the same column filter, project filter and
  bm25 weights) on the same index, returning as many rows; the two take turns query by query.
- **hybrid**: ``hybrid.search`` (keyword and vector halves, fusion, rows) against the exact scan of
  the same vectors: dequantised dot products with every stored vector and a top-10 partition.
- **context**: ``Memory.context_for_agent`` p50 on the same store (target 50 ms at 100,000).
- **commands**: `recall add`, `recall search --mode keyword` and `recall context` as whole
  processes on the imported database (median wall time and peak RSS of ``--runs`` runs), against
  ``python -c`` importing click and sqlite3 and opening the database.

Rows for keyword, hybrid and context are bench/vector_latency.py's generated store (Zipf text,
clustered 384-d vectors, 10 projects); its query vectors are precomputed, so the model's own query
time (reported apart) is not in the search figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from import_bench import generate
from timing import percentiles
from vector_latency import PROJECTS, Generator, QueryVectors, grow, queries, unit

SECTIONS = ("import", "search", "commands")


class BenchVectors(QueryVectors):
    """Precomputed query vectors; any other text (a brief's lower-cased task) gets a stable one."""

    def __init__(self, gen: Generator) -> None:
        super().__init__()
        self.gen = gen
        self.calls = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        if text not in self.vectors:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "big")
            centre = self.gen.centres[seed % len(self.gen.centres)]
            self.vectors[text] = unit(centre).astype(np.float32)
        return self.vectors[text]


def ratio(value: float, floor: float) -> float:
    return round(value / floor, 2) if floor > 0 else float("inf")


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


# -- import ----------------------------------------------------------------------------------------


def parse_floor(folder: Path) -> int:
    """Read every generated file and parse every line: what any importer must at least do."""
    lines = 0
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line)
            lines += 1
    return lines


def timed_import(folder: Path, db: Path, *, derived: bool) -> tuple[float, Any]:
    """One import into a fresh database; ``derived=False`` turns extraction and connections off."""
    from adapters import get_adapter
    from recall.extract import backfill
    from recall.ingest import run_import
    from recall.store import Store, entities, transcripts

    saved = (backfill.unread_sessions, transcripts.connect_written, entities.connect_pending)
    if not derived:
        backfill.unread_sessions = lambda *args: []  # type: ignore[assignment]
        transcripts.connect_written = lambda *args: 0  # type: ignore[assignment]
        entities.connect_pending = lambda *args, **kwargs: 0  # type: ignore[assignment]
    try:
        with Store(db) as store:
            started = time.perf_counter()
            summary = run_import(store, [get_adapter("claude")], paths=[folder], embed_budget_seconds=0)
            return time.perf_counter() - started, summary
    finally:
        backfill.unread_sessions, transcripts.connect_written, entities.connect_pending = saved


def import_section(root: Path, lines: int, sessions: int) -> tuple[dict[str, Any], Path]:
    folder = root / "claude"
    generate(folder, lines, sessions)
    parse_floor(folder)  # the files are in the page cache for every timing that follows
    floor = best_of(3, lambda: parse_floor(folder))
    bare_s, bare = timed_import(folder, root / "bare.db", derived=False)
    full_s, full = timed_import(folder, root / "full.db", derived=True)
    out = {
        "lines": lines,
        "messages": bare.messages_added,
        "floor_read_and_parse_s": round(floor, 3),
        "import_s": round(bare_s, 2),
        "import_ratio": ratio(bare_s, floor),
        "import_target_ratio": 10,
        "import_with_extraction_and_connections_s": round(full_s, 2),
        "import_with_extraction_and_connections_ratio": ratio(full_s, floor),
        "import_with_extraction_and_connections_target_ratio": 15,
        "extracted": full.extraction.to_dict() if full.extraction else {},
        "links": full.links,
    }
    return out, root / "full.db"


# -- keyword, hybrid, context ----------------------------------------------------------------------


def bare_match(conn: Any, query: str, project: str | None, limit: int) -> list[Any]:
    """FTS5 alone: recall's own expression and weights, ``limit`` rowids, nothing read beyond them."""
    from recall.search.fts_query import build_match, scope_filter
    from recall.search.keyword import _WEIGHTS

    match = build_match(query)
    if match is None:
        return []
    expression = f"{{content detail tags}} : ({match})"
    scope = scope_filter(None, project)
    if scope:
        expression = f"{expression} AND {scope}"
    weights = ", ".join(str(w) for w in _WEIGHTS)
    return conn.execute(
        f"SELECT rowid, bm25(search_index, {weights}) FROM search_index "
        "WHERE search_index MATCH ? ORDER BY 2 LIMIT ?",
        (expression, limit),
    ).fetchall()


def exact_scan(index: Any, vector: np.ndarray, k: int = 10) -> np.ndarray:
    """Every stored vector scored exactly, the best ``k`` kept: the floor of any vector search."""
    scores = index.exact_scores(vector, np.arange(len(index)))
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])]


def rss_mib() -> float:
    """This process's resident memory now (Linux), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def index_memory(index: Any, rss_before: float) -> dict[str, float]:
    """What the in-process vector index (an MCP server's, issue 16: at most 600 MiB at 1M vectors)
    holds: its arrays, and the resident memory the process gained and peaked at while loading it."""
    import resource

    from recall.search.vector_rows import VectorRows

    arrays = sum(value.nbytes for value in vars(index).values() if isinstance(value, np.ndarray | VectorRows))
    mapped = index.vectors.frozen * index.dim  # read from the snapshot's pages, not held (adr/0041)
    return {
        "vectors": len(index),
        "arrays_mib": round(arrays / 2**20, 1),
        "of_which_mapped_mib": round(mapped / 2**20, 1),
        "rss_before_load_mib": round(rss_before, 1),
        "rss_after_load_mib": round(rss_mib(), 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target_mib_at_1m": 600,
    }


def timed_ms(texts: Sequence[str], work: Callable[[str], object]) -> dict[str, float]:
    millis = []
    for text in texts:
        started = time.perf_counter()
        work(text)
        millis.append((time.perf_counter() - started) * 1000)
    return percentiles(millis)


def timed_pair(
    texts: Sequence[str], work: Callable[[str], object], floor: Callable[[str], object]
) -> dict[str, Any]:
    """Both sides of a ratio, query by query, taking turns at going first: the side that runs
    second reads the doclist pages the first just read, so neither gets that advantage every time
    (one whole pass after the other gave it all to the second, the bare MATCH). Wall time and the
    thread's CPU time: on a loaded machine a longer call is more often preempted, which stretches
    the wall-time ratio; the CPU time of the same calls is the work each side did."""
    wall: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    for n, text in enumerate(texts):
        for side in (0, 1) if n % 2 == 0 else (1, 0):
            started, started_cpu = time.perf_counter(), time.thread_time()
            (work, floor)[side](text)
            cpu[side].append((time.thread_time() - started_cpu) * 1000)
            wall[side].append((time.perf_counter() - started) * 1000)
    recall_ms, floor_ms = percentiles(wall[0]), percentiles(wall[1])
    recall_cpu, floor_cpu = percentiles(cpu[0]), percentiles(cpu[1])
    return {"recall": recall_ms, "floor_bare_match": floor_ms,
            "ratio_p50": ratio(recall_ms["p50_ms"], floor_ms["p50_ms"]),
            "recall_cpu": recall_cpu, "floor_bare_match_cpu": floor_cpu,
            "cpu_ratio_p50": ratio(recall_cpu["p50_ms"], floor_cpu["p50_ms"])}  # fmt: skip


def search_section(root: Path, rows: int, count: int) -> dict[str, Any]:
    from recall.memory import Memory
    from recall.search import hybrid, semantic

    gen = Generator()
    embedder = BenchVectors(gen)
    texts = queries(gen, embedder, count)
    with Memory(root / "rows.db", embedder=embedder) as memory:  # type: ignore[arg-type]
        store = memory.store
        key = semantic.model_key(store, embedder)  # type: ignore[arg-type]
        build_s = grow(store, gen, key, 0, rows)
        rss_before = rss_mib()
        index = semantic.vector_index(store, embedder)  # type: ignore[arg-type]
        memory_index = index_memory(index, rss_before)
        conn = store.connection
        for text in texts[:10]:  # warm the page cache for both sides alike
            memory.search(text, mode="keyword", project="*", limit=10)
            bare_match(conn, text, None, 10)
        out: dict[str, Any] = {
            "rows": rows,
            "build_s": round(build_s, 1),
            "vector_index_memory": memory_index,
        }
        for scope, project in (("all", "*"), ("project", PROJECTS[0])):
            name = None if project == "*" else project
            out[f"keyword_{scope}"] = timed_pair(
                texts,
                lambda t, p=project: memory.search(t, mode="keyword", project=p),
                lambda t, n=name: bare_match(conn, t, n, 10),
            )
        hybrid_ms = timed_ms(
            texts,
            lambda t: hybrid.search(store, t, mode="hybrid", limit=10, embedder=embedder),  # type: ignore[arg-type]
        )
        scan_ms = timed_ms(texts, lambda t: exact_scan(index, embedder.vectors[t]))
        out["hybrid_all"] = {"recall": hybrid_ms, "floor_exact_scan": scan_ms,
                             "ratio_p50": ratio(hybrid_ms["p50_ms"], scan_ms["p50_ms"]),
                             "target_p95_ms_at_1m": 40}  # fmt: skip
        embedder.calls = 0
        brief_ms = timed_ms(texts, lambda t: memory.context_for_agent(t, project=PROJECTS[0]))
        out["context_for_agent"] = {"recall": brief_ms, "target_p50_ms_at_100k": 50,
                                    "query_embeddings_per_brief": round(embedder.calls / len(texts), 1)}  # fmt: skip
    return out


def model_query_ms(count: int) -> dict[str, float]:
    """The real model's query embedding, which a user waits for beside each search above."""
    from recall.search.embedder import get_embedder

    embedder = get_embedder()
    embedder.embed_query("warm up")
    gen = Generator(seed=11)
    texts = gen.text(gen.rng.integers(3, 12, count))
    return timed_ms(texts, embedder.embed_query)


# -- whole commands ----------------------------------------------------------------------------------


# A child's peak RSS starts at its parent's at fork (Linux keeps the high-water mark across exec),
# so each command is started by a bare interpreter that reports the command's own rusage.
_LAUNCHER = """
import json, os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - started
error = child.stderr.read().decode(errors="replace")
print(json.dumps([seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), error]))
"""


def run_process(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one whole command, from its own rusage."""
    launched = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *argv], env=env, capture_output=True, text=True, check=True
    )
    seconds, peak_mib, code, error = json.loads(launched.stdout)
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {error}")
    return seconds, peak_mib


def commands_section(db: Path, runs: int) -> dict[str, Any]:
    # An installed package has its bytecode compiled (pip does it), as click's is in the floor; a
    # checkout run with PYTHONDONTWRITEBYTECODE (as on the bench machine) would compile recall's ~130
    # modules from source in every process, about as long as the command itself.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "recall"), str(ROOT / "adapters")],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    env = {**os.environ, "RECALL_DB": str(db), "RECALL_PROJECT": "proj0", "RECALL_HOME": str(db.parent)}
    recall = [sys.executable, "-m", "recall"]
    floor_code = f"import click, sqlite3; sqlite3.connect({str(db)!r}).execute('SELECT 1')"
    commands = {
        "floor_python_c": [sys.executable, "-c", floor_code],
        "recall_add": [*recall, "add", "learning", "WAL readers never block the writer"],
        "recall_search_keyword": [*recall, "search", "--mode", "keyword", "sqlite lock timeout"],
        "recall_context": [*recall, "context"],
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):  # interleaved, so load on the machine falls on every command alike
        for name, argv in commands.items():
            samples[name].append(run_process(argv, env))
    out: dict[str, Any] = {}
    floor = statistics.median(s for s, _ in samples["floor_python_c"])
    for name, got in samples.items():
        median = statistics.median(s for s, _ in got)
        out[name] = {"median_s": round(median, 3), "peak_rss_mib": round(max(m for _, m in got), 1),
                     "ratio": ratio(median, floor)}  # fmt: skip
    out["targets"] = {"median_s": 0.4, "peak_rss_mib": 150}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=60_000, help="generated Claude Code lines to import")
    parser.add_argument("--sessions", type=int, default=240)
    parser.add_argument("--rows", type=int, default=100_000, help="rows for keyword, hybrid and context")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7, help="runs of each whole command")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="recall-floors-") as tmp:
        root = Path(tmp)
        db = root / "small.db"
        if "import" in args.only or "commands" in args.only:
            results["import"], db = import_section(root, args.lines, args.sessions)
            print(json.dumps(results["import"]), file=sys.stderr, flush=True)
        if "search" in args.only:
            results["search"] = search_section(root, args.rows, args.queries)
            results["model_query"] = model_query_ms(args.queries)
            print(json.dumps(results["search"]), file=sys.stderr, flush=True)
        if "commands" in args.only:
            results["commands"] = commands_section(db, args.runs)
    results["load_after"] = os.getloadavg()
    print(json.dumps(results, indent=2 if args.json else None))


if __name__ == "__main__":
    main()
