"""Resident memory of a real `recall mcp` process holding a large vector store (issue 16: at most
600 MiB with 1,000,000 vectors).

    python bench/mcp_memory.py                        # 1,000,000 rows, built in a temporary folder
    python bench/mcp_memory.py --rows 20000 --json
    python bench/mcp_memory.py --db /tmp/big.db       # reuse (or build once) a store there

The store is bench/vector_latency.py's generated one (Zipf text, clustered 384-d vectors, 2 % typed
records), its vectors stored under the real embedding model's key, so the server searches them as
its own. The server is ``python -m recall --db … mcp`` over stdio, spoken to in raw JSON-RPC: after
``initialize`` it answers ``--searches`` ``memory_hybrid_search`` calls (the first one loads the
vector index and the embedding model). Then the server's ``/proc/<pid>/status`` gives its resident
memory (``VmRSS``, split into anonymous and file-backed pages; ``/proc/<pid>/smaps`` gives how
much of the latter is the index snapshot's mapped pages) and its peak (``VmHWM``), after the first
search, after the last, and at rest, a few seconds after the last (adr/0041: the server then lets
go of all the snapshot pages its searches mapped; while it searches it keeps at most 192 MiB of
them, adr/0043).

Two starts are measured: **first**, with no index snapshot beside the database (the snapshot is
written from SQLite, then mapped, adr/0047; older versions read every vector into the process
first), and **restart**, from the snapshot the first start wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_MIB = 600
RELEASE_AFTER_S = 2.0  # recall.search.vectors.RELEASE_AFTER_S (adr/0041); older versions keep everything
_QUERIES = [
    "how do we retry a flaky migration",
    "which cache did we pick for sessions",
    "the lock timeout on the import worker",
    "why the vector index loads slowly",
    "where the build broke last week",
]


def build(db: Path, rows: int) -> float:
    """The generated store of ``rows`` rows with vectors under the real model's key; seconds taken."""
    from vector_latency import Generator, grow

    from recall.search.embedder import get_embedder
    from recall.search.semantic import model_key
    from recall.store import Store

    with Store(db) as store:
        key = model_key(store, get_embedder())  # the model file is hashed, not loaded
        return grow(store, Generator(), key, 0, rows)


def stored_vectors(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def status(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon, RssFile, VmHWM and the snapshot's mapped pages of ``pid`` in MiB."""
    wanted = {
        "VmRSS": "rss_mib",
        "RssAnon": "rss_anon_mib",
        "RssFile": "rss_file_mib",
        "VmHWM": "peak_rss_mib",
    }
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in wanted:
            out[wanted[name]] = round(int(value.split()[0]) / 1024, 1)
    out["snapshot_mib"] = snapshot_resident_mib(pid)
    return out


def snapshot_resident_mib(pid: int) -> float:
    """The part of ``rss_file_mib`` that is the index snapshot's mapped pages (adr/0041, adr/0043)."""
    kib, inside = 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].endswith(":"):  # a mapping's first line: range, perms, …, path
            inside = fields[-1].endswith(".npz")
        elif inside and fields[0] == "Rss:":
            kib += int(fields[1])
    return round(kib / 1024, 1)


class Server:
    """``recall mcp`` over stdio, spoken to in raw JSON-RPC (no client library in the figures)."""

    def __init__(self, db: Path, env: dict[str, str]) -> None:
        argv = [sys.executable, "-m", "recall", "--db", str(db), "mcp"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.watchdog = threading.Timer(900, self.proc.kill)
        self.watchdog.start()
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "mcp-memory", "version": "0"}})  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while line := self.proc.stdout.readline():
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise RuntimeError(f"{method} failed: {message}")
                return dict(message["result"])
        raise RuntimeError(f"the server exited before answering {method}")

    def search(self, query: str) -> float:
        started = time.perf_counter()
        self.call(
            "tools/call", {"name": "memory_hybrid_search", "arguments": {"query": query, "project": "*"}}
        )
        return time.perf_counter() - started

    def close(self) -> None:
        self.watchdog.cancel()
        self.proc.kill()
        self.proc.wait()


def one_start(db: Path, env: dict[str, str], searches: int) -> dict[str, Any]:
    server = Server(db, env)
    try:
        idle = status(server.proc.pid)
        first_s = server.search(_QUERIES[0])
        out: dict[str, Any] = {"idle": idle, "first_search_s": round(first_s, 2),
                               "after_first_search": status(server.proc.pid)}  # fmt: skip
        if searches > 1:
            times = [server.search(f"{_QUERIES[n % len(_QUERIES)]} {n}") for n in range(1, searches)]
            out[f"after_{searches}_searches"] = status(server.proc.pid)
            out["search_ms_median"] = round(sorted(times)[len(times) // 2] * 1000, 1)
        time.sleep(RELEASE_AFTER_S + 1)  # searches stopped: the mapped vector pages are let go
        out["at_rest"] = status(server.proc.pid)
        return out
    finally:
        server.close()


def measure(db: Path, rows: int, searches: int) -> dict[str, Any]:
    from recall.store.derived import remove_vector_snapshots

    results: dict[str, Any] = {"load_before": os.getloadavg()}
    if not db.exists() or stored_vectors(db) < rows:
        results["build_s"] = round(build(db, rows), 1)
    results["vectors"] = stored_vectors(db)
    env = {**os.environ, "RECALL_HOME": str(db.parent / "home")}
    env.pop("RECALL_DB", None)
    env.pop("RECALL_PROJECT", None)
    remove_vector_snapshots(db)
    results["first_start"] = one_start(db, env, searches)
    results["restart"] = one_start(db, env, searches)
    results["target_mib"] = TARGET_MIB
    results["load_after"] = os.getloadavg()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, help="store to reuse, or to build once and keep")
    parser.add_argument("--searches", type=int, default=20, help="hybrid searches per start (first included)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.db is not None:
        results = measure(args.db.resolve(), args.rows, args.searches)
    else:
        with tempfile.TemporaryDirectory(prefix="recall-mcp-memory-") as tmp:
            results = measure(Path(tmp) / "rows.db", args.rows, args.searches)
    print(json.dumps(results, indent=2 if args.json else None))


if __name__ == "__main__":
    main()
