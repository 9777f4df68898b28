"""Start-up time and tool latency of `recall mcp`, for issue 5's targets.

    PYTHONPATH=. python bench/mcp_bench.py                    # table
    PYTHONPATH=. python bench/mcp_bench.py --json             # figures as JSON
    PYTHONPATH=. python bench/mcp_bench.py --records 0        # start-up only

Start-up is the wall time from spawning the process to the answer of ``tools/list``, after an
``initialize`` round trip over stdio, spoken as raw JSON-RPC so no client library is timed. recall
(``python -m recall --db … mcp``) and ``bench/bare_mcp_server.py`` (the MCP SDK with one tool) run
alternately, ``--runs`` times each; the figure is the median. The target: recall at most 0.4 s
slower than the bare server.

Latency is measured through the real MCP client over stdio against a store of ``--records`` rows
(10 % decisions, 30 % learnings, 10 % breadcrumbs, 50 % messages in 100 sessions, 70 % of them in
one project), written in one transaction through the store's writer. Every row gets a vector: random
unit vectors, quantised as the store keeps them, under the real model's key, so vector search costs
what it would with real embeddings (their ranking means nothing; latency is the point). The first
call of each tool (store open, vector index load, model load) is reported apart from the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BARE_SERVER = HERE / "bare_mcp_server.py"
PROJECT = "bench"
_VOCABULARY = [
    word
    for line in (
        "deploy cache migration rollback retry queue worker thread lock timeout branch merge release",
        "config sqlite wal pragma index vector search token embedding model schema table column trigger",
        "fts bm25 parser adapter transcript session cursor claude codex hook import export scrub secret",
        "redaction server client request response stream http stdio json latency budget benchmark test",
        "fixture flaky docker build ci pipeline cron backup restore encryption permission path project",
        "repository worktree",
    )
    for word in line.split()
]
_SEARCHES = ["sqlite wal pragma", "flaky test fixture", "vector index", "rollback migration", "hook import"]
_TASKS = [
    "fix the flaky sqlite wal test in the import pipeline",
    "add a retry with timeout to the http client stream",
    "speed up the vector search index for large projects",
    "write a backup and restore command for the database",
    "make the scrubber redact a new secret token shape",
]


# -- start-up --------------------------------------------------------------------------------------


def startup_seconds(argv: list[str], env: dict[str, str], timeout: float = 60.0) -> float:
    """Spawn ``argv`` and time initialize + tools/list over raw JSON-RPC on its stdio."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    try:
        _send(proc, {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcp-bench", "version": "0"},
            },
        })  # fmt: skip
        _answer(proc, 1)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = _answer(proc, 2)["result"]["tools"]
        elapsed = time.perf_counter() - started
        if not tools:
            raise RuntimeError(f"{argv} listed no tools")
        return elapsed
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while line := proc.stdout.readline():
        message = json.loads(line)
        if message.get("id") == request_id:
            if "error" in message:
                raise RuntimeError(f"request {request_id} failed: {message['error']}")
            return message
    raise RuntimeError(f"the server exited before answering request {request_id}")


def compare_startup(runs: int, db: Path, env: dict[str, str]) -> dict[str, float]:
    recall = [sys.executable, "-m", "recall", "--db", str(db), "mcp"]
    bare = [sys.executable, str(BARE_SERVER)]
    times: dict[str, list[float]] = {"recall": [], "bare": []}
    for _ in range(runs):
        times["recall"].append(startup_seconds(recall, env))
        times["bare"].append(startup_seconds(bare, env))
    recall_s, bare_s = statistics.median(times["recall"]), statistics.median(times["bare"])
    return {
        "startup_runs": runs,
        "startup_recall_s": round(recall_s, 3),
        "startup_bare_s": round(bare_s, 3),
        "startup_overhead_s": round(recall_s - bare_s, 3),
        "startup_target_met": recall_s - bare_s <= 0.4,
    }


# -- a large store ---------------------------------------------------------------------------------


def build_store(db: Path, records: int, seed: int = 7) -> dict[str, float | int]:
    """Write ``records`` rows and a vector for each in one transaction; returns counts and seconds."""
    import numpy as np

    from recall.models import KIND_CODES, Provenance, RecordKind
    from recall.search.embedder import get_embedder
    from recall.search.semantic import model_key
    from recall.search.vectors import quantize
    from recall.store import Store

    rng = random.Random(seed)
    started = time.perf_counter()
    counts = {"decision": records // 10, "learning": records * 3 // 10, "breadcrumb": records // 10}
    counts["message"] = records - sum(counts.values())
    sessions = 100
    embedder = get_embedder()
    with Store(db) as store:
        key = model_key(store, embedder)
        dim = embedder.dim
        vectors: list[tuple[int, int, str]] = []  # (kind code, id, project), in insertion order
        with store.transaction() as writer:
            for kind in ("decision", "learning", "breadcrumb"):
                rows = [_record(rng, kind) for _ in range(counts[kind])]
                writer.insert_many(f"{kind}s", rows, Provenance.USER_AUTHORED, columns=list(rows[0]))
            session_rows = [
                {"project": _project(rng), "host": "bench", "external_id": f"bench-{n}"}
                for n in range(sessions)
            ]
            writer.insert_many("sessions", session_rows, Provenance.VERBATIM, columns=["project", "host"])
            messages = [_message(rng, n, sessions) for n in range(counts["message"])]
            if messages:
                writer.insert_many("messages", messages, Provenance.VERBATIM, columns=list(messages[0]))
            conn = store.connection
            for kind in RecordKind:
                table = "session_summaries" if kind is RecordKind.SESSION_SUMMARY else f"{kind.value}s"
                for row_id, project in conn.execute(f"SELECT id, project FROM {table} ORDER BY id"):
                    vectors.append((KIND_CODES[kind], row_id, project))
            matrix = np.random.default_rng(seed).standard_normal((len(vectors), dim), dtype=np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            quantized, scales = quantize(matrix)
            writer.store_vectors(
                key,
                [
                    (code, row_id, project, "synthetic", float(scale), vector.tobytes())
                    for (code, row_id, project), scale, vector in zip(vectors, scales, quantized, strict=True)
                ],
            )
    return {"records": records, "vectors": len(vectors), "build_s": round(time.perf_counter() - started, 1)}


def _project(rng: random.Random) -> str:
    return PROJECT if rng.random() < 0.7 else f"other-{rng.randrange(9)}"


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(_VOCABULARY, k=rng.randint(low, high)))


def _record(rng: random.Random, kind: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "project": _project(rng),
        "content": _words(rng, 8, 25),
        "detail": _words(rng, 10, 40),
        "tags": rng.sample(_VOCABULARY, 2),
        "importance": rng.randint(1, 10),
    }
    if kind == "decision":
        row["confidence"] = "medium"
    return row


def _message(rng: random.Random, n: int, sessions: int) -> dict[str, Any]:
    role = "user" if n % 2 == 0 else "assistant"
    session_id = n % sessions + 1
    return {
        "project": PROJECT if session_id <= sessions * 7 // 10 else f"other-{session_id % 9}",
        "session_id": session_id,
        "external_id": f"m{n}",
        "ordinal": n // sessions,
        "role": role,
        "origin": "human" if role == "user" else "agent",
        "kind": "text",
        "content": _words(rng, 15, 60),
        "content_hash": f"h{n}",
    }


# -- latency ---------------------------------------------------------------------------------------


async def tool_latency(db: Path, env: dict[str, str], calls: int) -> dict[str, float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "recall", "--db", str(db), "mcp"], env=env
    )
    plans: dict[str, list[dict[str, Any]]] = {
        "memory_search": [{"query": q, "project": PROJECT} for q in _SEARCHES],
        "memory_hybrid_search": [{"query": q, "project": PROJECT} for q in _SEARCHES],
        "context_for_agent": [{"agent_task": t, "project": PROJECT} for t in _TASKS],
    }
    figures: dict[str, float] = {}
    async with Client(params) as client:
        for tool, arguments in plans.items():
            seconds = []
            for n in range(calls + 1):
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments[n % len(arguments)])
                seconds.append(time.perf_counter() - started)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed: {result.content}")
            first, rest = seconds[0], sorted(seconds[1:])
            figures[f"{tool}_first_ms"] = round(first * 1000, 1)
            figures[f"{tool}_p50_ms"] = round(statistics.median(rest) * 1000, 1)
            figures[f"{tool}_p95_ms"] = round(rest[max(0, round(len(rest) * 0.95) - 1)] * 1000, 1)
    return figures


# -- report ----------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as folder:
        # A private RECALL_HOME keeps the user's store and files out of the measurement.
        os.environ["RECALL_HOME"] = str(Path(folder) / "home")
        os.environ.pop("RECALL_DB", None)
        env = dict(os.environ)
        figures: dict[str, Any] = compare_startup(args.runs, Path(folder) / "startup.db", env)
        if args.records:
            db = Path(folder) / "large.db"
            figures.update(build_store(db, args.records))
            figures.update(anyio.run(tool_latency, db, env, args.calls))
    return figures


def table(figures: dict[str, Any]) -> str:
    rows = [
        (
            f"start-up, median of {figures['startup_runs']}",
            (
                f"recall {figures['startup_recall_s']:.3f} s, bare SDK server {figures['startup_bare_s']:.3f} s, "
                f"overhead {figures['startup_overhead_s']:+.3f} s (target <= 0.4 s: "
                f"{'met' if figures['startup_target_met'] else 'MISSED'})"
            ),
        )
    ]
    if "records" in figures:
        built = (
            f"{figures['records']:,} records, {figures['vectors']:,} vectors, built in {figures['build_s']} s"
        )
        rows.append(("store", built))
        for tool in ("memory_search", "memory_hybrid_search", "context_for_agent"):
            rows.append(
                (
                    tool,
                    (
                        f"p50 {figures[f'{tool}_p50_ms']:.1f} ms, p95 {figures[f'{tool}_p95_ms']:.1f} ms, "
                        f"first call {figures[f'{tool}_first_ms']:.0f} ms"
                    ),
                )
            )
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10, help="start-ups timed per server")
    parser.add_argument("--records", type=int, default=100_000, help="rows in the latency store; 0 skips it")
    parser.add_argument("--calls", type=int, default=50, help="timed calls per tool, after the first")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args)
    print(json.dumps(figures, indent=2) if args.json else table(figures))


if __name__ == "__main__":
    main()
