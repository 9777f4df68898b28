"""Server time per page of `recall ui`, and how soon the command serves, for issue 18's targets.

    python bench/ui_bench.py                          # 100,000 messages, table
    python bench/ui_bench.py --json                   # figures as JSON
    python bench/ui_bench.py --db /tmp/ui-bench.db    # keep the store (built once, reused after)

The store is built through the real import path: import_bench's generated Claude Code transcripts
(prose, tool calls, tool output up to 60 lines, a planted secret in about one message in fifty),
100 sessions of 1,000 messages over 12 projects, plus 600 decisions (every third superseded by the
next), 300 learnings and 100 breadcrumbs. The messages people and agents wrote and every record get a
vector: random unit vectors, quantised as the store keeps them, under the real model's key, so
hybrid search and the embedding counts cost what they would with real embeddings (ranking means
nothing here; latency is the point).

Server time is the time the web app takes to answer (routing, the ``recall.Memory`` calls, template
rendering), measured in process through Starlette's test client: no socket, no browser. Each page is
asked ``--calls`` times after a first call that is reported apart (store open, template compile,
vector index and model load). Target: p95 at most 150 ms per page, the session page included. The
CPU time the process spent per answer is reported beside the wall time: on a machine shared with
other work the wall time waits for the CPU, the CPU time does not.

Start-up is the wall time from spawning ``python -m recall ui --port 0 --json`` to its first answer:
to the line naming its URL (bound), to a static file, and to the overview (which opens the store),
with the CPU time the server had used when it first answered. Target: serving within 1 s of start.
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
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from import_bench import generate
from timing import percentiles

TARGET_MS = 150.0
STARTUP_TARGET_S = 1.0
BASE = "http://127.0.0.1:8766"


def build(db: Path, messages: int, sessions: int) -> dict[str, Any]:
    """The store described above; returns what it holds and how long it took."""
    from recall import Memory

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, Memory(db, embed_on_write=False) as memory:
        generate(Path(folder) / "claude", messages, sessions)
        summary = memory.import_transcripts(
            ["claude"], paths=[Path(folder) / "claude"], embed_budget_seconds=0
        )
        _records(memory)
        vectors = _vectors(memory)
    return {
        "messages": summary.messages_added,
        "sessions": summary.sessions_new,
        "vectors": vectors,
        "build_s": round(time.perf_counter() - started, 1),
        "database_mib": round(db.stat().st_size / 1_048_576, 1),
    }


def _records(memory: Any) -> None:
    """Random wordings from ten words are often near-duplicates (adr/0028): ``force`` keeps each one."""
    rng = random.Random(7)
    words = ["cache", "sqlite", "wal", "retry", "queue", "deploy", "index", "vector", "token", "schema"]
    previous: dict[str, Any] = {}
    for n in range(600):
        project = f"proj{n % 12}"
        decision = memory.add(
            "decision", " ".join(rng.choices(words, k=8)), project=project, detail="why not", force=True
        )
        if n % 3 and project in previous:
            memory.supersede(previous[project].ref, by=decision.ref)
        previous[project] = decision
    for n in range(300):
        memory.add(
            "learning",
            " ".join(rng.choices(words, k=10)),
            project=f"proj{n % 12}",
            tags=["bench"],
            force=True,
        )
    for n in range(100):
        memory.add("breadcrumb", " ".join(rng.choices(words, k=6)), project=f"proj{n % 12}", force=True)


def _vectors(memory: Any) -> int:
    import numpy as np

    from recall.models import KIND_CODES, RecordKind
    from recall.search.semantic import EMBED_ORIGINS, model_key
    from recall.search.vectors import quantize

    store, embedder = memory.store, memory.embedder
    key = model_key(store, embedder)
    origins = ", ".join(f"'{origin}'" for origin in EMBED_ORIGINS)
    tables = {
        RecordKind.MESSAGE: f"SELECT id, project FROM messages WHERE kind = 'text' AND origin IN ({origins})",
        RecordKind.DECISION: "SELECT id, project FROM decisions",
        RecordKind.LEARNING: "SELECT id, project FROM learnings",
        RecordKind.BREADCRUMB: "SELECT id, project FROM breadcrumbs",
        RecordKind.SESSION_SUMMARY: "SELECT id, project FROM session_summaries",
    }
    with store.reading() as conn:
        rows = [
            (KIND_CODES[kind], row_id, project)
            for kind, sql in tables.items()
            for row_id, project in conn.execute(sql)
        ]
    matrix = np.random.default_rng(7).standard_normal((len(rows), embedder.dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    quantized, scales = quantize(matrix)
    with store.transaction() as writer:
        writer.store_vectors(
            key,
            [
                (code, row_id, project, "synthetic", float(scale), vector.tobytes())
                for (code, row_id, project), scale, vector in zip(rows, scales, quantized, strict=True)
            ],
        )
    return len(rows)


def _pages(db: Path) -> dict[str, str]:
    """The pages to time, named, with ids read from the store."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        project, session, count = conn.execute(
            "SELECT s.project, s.id, count(*) FROM sessions s JOIN messages m ON m.session_id = s.id "
            "GROUP BY s.id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        message = conn.execute("SELECT max(id) FROM messages WHERE session_id = ?", (session,)).fetchone()[0]
        decision = conn.execute("SELECT min(id) FROM decisions WHERE status = 'active'").fetchone()[0]
        entity = conn.execute(  # the project's file linked most often: the costliest to show
            "SELECT e.name FROM entities e JOIN entity_links l ON l.entity_id = e.id "
            "WHERE e.type = 'file' AND e.project = ? GROUP BY e.id ORDER BY count(*) DESC LIMIT 1",
            (project,),
        ).fetchone()
        entity = entity[0] if entity else "README.md"
    finally:
        conn.close()
    last_page = -(-count // 200)
    return {
        "overview (one project)": f"/?project={project}",
        "overview (all projects)": "/?project=*",
        "sessions": f"/sessions?project={project}",
        "session, first page": f"/session/{session}",
        f"session, last page ({last_page})": f"/session/{session}?page={last_page}",
        "session, thinking and tools shown": f"/session/{session}?thinking=shown&tools=shown",
        "message (finds its page)": f"/message/{message}",
        "decision log": f"/decisions?project={project}",
        "decision log (all projects)": "/decisions?project=*",
        "decision": f"/row/decision/{decision}",
        "search, keyword": f"/search?q=sqlite+wal+timeout&mode=keyword&project={project}",
        "search, hybrid": f"/search?q=why+does+the+migration+time+out&mode=hybrid&project={project}",
        "search, semantic": "/search?q=flaky+docker+build&mode=semantic&project=*",
        "connections (a file)": f"/connections?name={entity}&project={project}",
        "connections (a command, all projects)": "/connections?name=pytest&project=*",
        "review": f"/review?project={project}",
        "review (all projects)": "/review?project=*",
        "health": "/health",
    }


def page_times(db: Path, calls: int) -> dict[str, dict[str, float]]:
    from starlette.testclient import TestClient

    from recall import Memory
    from recall.web import create_app

    figures: dict[str, dict[str, float]] = {}
    with Memory(db) as memory, TestClient(create_app(memory), base_url=BASE) as client:
        for name, path in _pages(db).items():
            millis, cpu = [], []
            for _ in range(calls + 1):
                started, used = time.perf_counter(), time.process_time()
                response = client.get(path, follow_redirects=False)
                millis.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
                assert response.status_code in (200, 303), (path, response.status_code, response.text[:300])
            figures[name] = {
                "first_ms": round(millis[0], 1),
                **percentiles(millis[1:]),
                "cpu_p50_ms": round(statistics.median(cpu[1:]), 1),
            }
    return figures


def startup(db: Path, runs: int) -> dict[str, float]:
    import httpx2

    bound, static, overview, cpu = [], [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-m", "recall", "--db", str(db), "ui", "--port", "0", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = json.loads(server.stdout.readline())["url"]
            bound.append(time.perf_counter() - started)
            while True:
                try:
                    httpx2.get(url + "static/icon.svg", timeout=30).raise_for_status()
                    break
                except httpx2.TransportError:
                    time.sleep(0.005)
            static.append(time.perf_counter() - started)
            cpu.append(_cpu_seconds(server.pid))
            httpx2.get(url, timeout=30).raise_for_status()
            overview.append(time.perf_counter() - started)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "bound_s": round(statistics.median(bound), 3),
        "serving_s": round(statistics.median(static), 3),
        "overview_s": round(statistics.median(overview), 3),
        "serving_cpu_s": round(statistics.median(cpu), 3),
    }


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from /proc (Linux); NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault("RECALL_HOME", tempfile.mkdtemp(prefix="recall-ui-bench-home-"))
    folder = None if args.db else tempfile.TemporaryDirectory()
    db = Path(args.db) if args.db else Path(folder.name) / "bench.db"  # type: ignore[union-attr]
    try:
        store = {"reused": str(db)} if db.exists() else build(db, args.messages, args.sessions)
        return {"store": store, "pages": page_times(db, args.calls), "startup": startup(db, args.runs)}
    finally:
        if folder is not None:
            folder.cleanup()


def table(figures: dict[str, Any]) -> str:
    lines = [
        f"store: {figures['store']}",
        "",
        f"{'page':42} {'first':>8} {'p50':>8} {'p95':>8} {'cpu p50':>8}  (ms)",
    ]
    for name, row in figures["pages"].items():
        flag = "" if row["p95_ms"] <= TARGET_MS else "  over target"
        lines.append(
            f"{name:42} {row['first_ms']:8.1f} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} "
            f"{row['cpu_p50_ms']:8.1f}{flag}"
        )
    up = figures["startup"]
    lines.append("")
    lines.append(
        f"start-up (median): bound {up['bound_s']} s, serving {up['serving_s']} s "
        f"({up['serving_cpu_s']} s of CPU), overview {up['overview_s']} s (target {STARTUP_TARGET_S} s)"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per page (after one first call)")
    parser.add_argument("--runs", type=int, default=5, help="start-up runs")
    parser.add_argument("--db", help="keep the store here; an existing file is reused as it is")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = run(args)
    print(json.dumps(figures, indent=2) if args.json else table(figures))


if __name__ == "__main__":
    main()
