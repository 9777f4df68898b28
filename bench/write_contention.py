"""How long `recall add` and MCP `memory_add` take while `recall import` runs (issue 10, adr/0016).

Three writers run at once against one database: two loops of CLI ``recall add`` processes and one
MCP client calling ``memory_add`` through the SDK's client (one ``recall mcp`` server over stdio).
A fourth, the probe, calls ``Store.add`` without embedding in this process: its latency is the wait
for the write lock plus one insert, without process start-up or model time, and it is reported
apart from the target's figure.
They run twice: alone (``idle``: what a call costs without contention, process start and model load
included), then while a real ``recall import`` of generated Claude Code transcripts runs in its own
process (``import``). The import's throughput is reported for the run with writers, and for an
import alone on the same corpus (``--no-alone`` skips that run). First, the corpus is imported in
this process with every write transaction timed: how long the import holds the lock each time.
The corpus has one long session besides the others (``--big``), as real histories do.

    python bench/write_contention.py [--messages 100000] [--json]

Every figure is wall time in milliseconds from the writer's side: for the CLI, from spawning the
process to its exit (Python start-up, store open, the write, embedding on write); for MCP, from
``call_tool`` to its answer. The first MCP call (store open, model load) is reported apart. Only
calls that start while the import is still running count as ``import`` calls. The target (issue 10):
p95 of at most 1,500 ms while an import runs, for the CLI and for MCP each. The machine's load
average is reported too: on a shared machine, CPU starvation shows in every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))  # the checkout under test, also for the in-process probe

from import_bench import generate

PROJECT = "bench"
CLI_WRITERS = 2
TARGET_P95_MS = 1500


@dataclass(slots=True)
class Calls:
    """Latencies of one kind of writer, in milliseconds, and failures with their first words."""

    millis: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    first_ms: float | None = None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"calls": len(self.millis), "failures": len(self.failures)}
        if len(self.millis) >= 2:
            cuts = statistics.quantiles(self.millis, n=20, method="inclusive")  # never above the max
            out |= {"p50_ms": round(statistics.median(self.millis), 1), "p95_ms": round(cuts[18], 1),
                    "max_ms": round(max(self.millis), 1)}  # fmt: skip
        if self.first_ms is not None:
            out["first_call_ms"] = round(self.first_ms, 1)
        if self.failures:
            out["first_failure"] = self.failures[0]
        return out


def _env(home: Path) -> dict[str, str]:
    """The checkout under test first on the path, and a private RECALL_HOME."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["RECALL_HOME"] = str(home)
    env.pop("RECALL_DB", None)
    return env


def cli_writer(db: Path, env: dict[str, str], writer: int, keep_going: threading.Event, calls: Calls,
               pause: float, limit: int | None) -> None:  # fmt: skip
    """Spawn `recall add` again and again until ``keep_going`` is cleared (or ``limit`` calls)."""
    n = 0
    while keep_going.is_set() and (limit is None or n < limit):
        argv = [sys.executable, "-m", "recall", "--db", str(db), "add", "learning",
                f"writer {writer} note {n}: the import lock test", "--project", PROJECT]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode == 0:
            calls.millis.append(elapsed)
        else:
            calls.failures.append(done.stderr.strip().splitlines()[-1][:200] if done.stderr else "exit")
        n += 1
        time.sleep(pause)


def probe_writer(
    db: Path, keep_going: threading.Event, calls: Calls, pause: float, limit: int | None
) -> None:
    """In this process: ``Store.add`` without embedding, i.e. waiting for the lock plus one insert."""
    from recall.models import RecordKind
    from recall.store import NewRecord, Store

    with Store(db) as store:
        n = 0
        while keep_going.is_set() and (limit is None or n < limit):
            started = time.perf_counter()
            try:
                store.add(NewRecord(RecordKind.LEARNING, f"probe note {n} about locks", PROJECT))
                calls.millis.append((time.perf_counter() - started) * 1000)
            except Exception as exc:  # noqa: BLE001 - a failure is a figure here, not a crash
                calls.failures.append(f"{type(exc).__name__}: {exc}"[:200])
            n += 1
            time.sleep(pause)


async def mcp_writer(db: Path, env: dict[str, str], keep_going: threading.Event, calls: Calls,
                     pause: float, limit: int | None) -> None:  # fmt: skip
    """One MCP server, one client calling memory_add until ``keep_going`` is cleared."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "recall", "--db", str(db), "mcp"], env=env
    )
    async with Client(params) as client:
        n = 0
        while keep_going.is_set() and (limit is None or n < limit + 1):
            started = time.perf_counter()
            result = await client.call_tool(
                "memory_add", {"type": "learning", "content": f"mcp note {n} about locks", "project": PROJECT}
            )
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error:
                calls.failures.append(str(result.content)[:200])
            elif n == 0:
                calls.first_ms = elapsed  # store open and model load: not a steady-state call
            else:
                calls.millis.append(elapsed)
            n += 1
            await anyio.sleep(pause)


def run_writers(db: Path, env: dict[str, str], keep_going: threading.Event, pause: float,
                limit: int | None) -> tuple[list[threading.Thread], dict[str, Calls]]:  # fmt: skip
    import anyio

    calls = {"cli": Calls(), "mcp": Calls(), "probe": Calls()}
    threads = [
        threading.Thread(target=cli_writer, args=(db, env, w, keep_going, calls["cli"], pause, limit))
        for w in range(CLI_WRITERS)
    ]
    threads.append(
        threading.Thread(target=anyio.run, args=(mcp_writer, db, env, keep_going, calls["mcp"], pause, limit))
    )
    threads.append(threading.Thread(target=probe_writer, args=(db, keep_going, calls["probe"], pause, limit)))
    for thread in threads:
        thread.start()
    return threads, calls


def start_import(db: Path, corpus: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "recall", "--db", str(db), "import", "--host", "claude",
            "--path", str(corpus), "--json"]  # fmt: skip
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_import(proc: subprocess.Popen[str], started: float) -> dict[str, Any]:
    out, err = proc.communicate()
    seconds = time.perf_counter() - started
    if proc.returncode != 0:  # a figure too: on main, the import itself could wait past the busy timeout
        return {
            "seconds": round(seconds, 1),
            "failed": err.strip().splitlines()[-1][:300] if err.strip() else "exit",
        }
    data = json.loads(out)
    added = data["messages"]["added"]
    return {
        "seconds": round(seconds, 1),
        "messages": added,
        "messages_per_second": round(added / seconds),
        "summaries": data.get("summaries", 0),
        "embedded": (data.get("embedding") or {}).get("embedded", 0),
    }


def combined(calls: dict[str, Calls]) -> dict[str, Any]:
    """The target's figure (CLI and MCP calls together), each writer, and the probe apart."""
    cli, mcp = calls["cli"], calls["mcp"]
    both = Calls(millis=cli.millis + mcp.millis, failures=cli.failures + mcp.failures)
    return both.summary() | {name: part.summary() for name, part in calls.items()}


def idle_run(folder: Path, env: dict[str, str], calls: int, pause: float) -> dict[str, Any]:
    keep_going = threading.Event()
    keep_going.set()
    threads, found = run_writers(folder / "idle.db", env, keep_going, pause, calls)
    for thread in threads:
        thread.join()
    return combined(found)


def contended_run(
    folder: Path, corpus: Path, env: dict[str, str], pause: float, warmup: float
) -> dict[str, Any]:
    db = folder / "contended.db"
    keep_going = threading.Event()
    started = time.perf_counter()
    proc = start_import(db, corpus, env)
    time.sleep(warmup)  # the import's own start-up and file discovery hold no lock
    keep_going.set()
    threads, calls = run_writers(db, env, keep_going, pause, None)
    while proc.poll() is None:
        time.sleep(0.05)
    keep_going.clear()
    figures = finish_import(proc, started)
    for thread in threads:
        thread.join()
    return combined(calls) | {"import": figures}


def lock_holds(folder: Path, corpus: Path) -> dict[str, Any]:
    """How long each write transaction of an import holds the lock: the same corpus imported in this
    process (no writers, no embedding), every ``Store.transaction`` timed from BEGIN to COMMIT."""
    from contextlib import contextmanager

    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.store import Store

    holds: list[float] = []
    plain = Store.transaction

    @contextmanager
    def timed(self: Store) -> Any:
        with plain(self) as writer:
            started = time.perf_counter()
            yield writer
        holds.append((time.perf_counter() - started) * 1000)

    Store.transaction = timed  # type: ignore[method-assign]
    try:
        with Store(folder / "holds.db") as store:
            started = time.perf_counter()
            run_import(store, [get_adapter("claude")], paths=[corpus], embed_budget_seconds=0)
            seconds = time.perf_counter() - started
    finally:
        Store.transaction = plain  # type: ignore[method-assign]
    cuts = statistics.quantiles(holds, n=20, method="inclusive")
    return {"transactions": len(holds), "p50_ms": round(statistics.median(holds), 1),
            "p95_ms": round(cuts[18], 1), "max_ms": round(max(holds), 1),
            "held_share": round(sum(holds) / 1000 / seconds, 2)}  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    load = (round(os.getloadavg()[0], 2),)  # the machine may be shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="write-contention-") as tmp:
        folder = Path(tmp)
        env = _env(folder / "home")
        corpus = folder / "corpus"
        generate(corpus, args.messages, args.sessions)
        if args.big:
            generate(corpus, args.big, 1, seed=8)  # one long session: one file, many messages
        figures: dict[str, Any] = {
            "messages": args.messages,
            "sessions": args.sessions,
            "big_session": args.big,
            "pause_s": args.pause,
            "lock_holds": lock_holds(folder, corpus),
        }
        if not args.no_alone:
            started = time.perf_counter()
            figures["import_alone"] = finish_import(start_import(folder / "alone.db", corpus, env), started)
        figures["idle"] = idle_run(folder, env, args.idle_calls, args.pause)
        figures["during_import"] = contended_run(folder, corpus, env, args.pause, args.warmup)
    during = figures["during_import"]
    worst = [during[writer].get("p95_ms") for writer in ("cli", "mcp")]
    figures["target_met"] = None not in worst and max(worst) <= TARGET_P95_MS
    figures["load_average_1min"] = {"start": load[0], "end": round(os.getloadavg()[0], 2)}
    return figures


def table(figures: dict[str, Any]) -> str:
    holds = figures["lock_holds"]
    corpus = f"{figures['messages']:,} messages in {figures['sessions']} sessions, plus one of {figures['big_session']:,}"
    held = (
        f"{holds['transactions']} write transactions, held p50 {holds['p50_ms']:.0f} ms, p95 {holds['p95_ms']:.0f} ms, "
        f"max {holds['max_ms']:.0f} ms; lock held {holds['held_share']:.0%} of the time"
    )
    lines = [f"corpus: {corpus}", f"import alone in-process: {held}"]
    if "import_alone" in figures:
        alone = figures["import_alone"]
        speed = alone.get("failed") or f"{alone['messages_per_second']:,} messages/s"
        lines.append(f"import alone: {alone['seconds']} s, {speed}")
    for phase in ("idle", "during_import"):
        data = figures[phase]
        for writer in ("cli", "mcp", "probe"):
            part = data[writer]
            if part["calls"] < 2:
                lines.append(f"{phase:>13} {writer}: {part['calls']} calls, {part['failures']} failures")
                continue
            first = f", first call {part['first_call_ms']:.0f} ms" if "first_call_ms" in part else ""
            lines.append(
                f"{phase:>13} {writer}: {part['calls']} calls, p50 {part['p50_ms']:.0f} ms, p95 {part['p95_ms']:.0f} ms, "
                f"max {part['max_ms']:.0f} ms, {part['failures']} failures{first}"
            )
    imported = figures["during_import"]["import"]
    speed = imported.get("failed") or f"{imported['messages_per_second']:,} messages/s"
    lines.append(
        f"import with writers: {imported['seconds']} s, {speed}; "
        f"CLI and MCP p95 each <= {TARGET_P95_MS} ms: {'met' if figures['target_met'] else 'MISSED'}"
    )
    load = figures["load_average_1min"]
    lines.append(f"load average (1 min) at start {load['start']}, at end {load['end']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000, help="messages in the generated corpus")
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--big", type=int, default=5000, help="messages of one more, long session (0: none)")
    parser.add_argument("--pause", type=float, default=0.25, help="seconds each writer waits between calls")
    parser.add_argument("--idle-calls", type=int, default=15, help="calls per writer in the idle run")
    parser.add_argument(
        "--warmup", type=float, default=1.0, help="seconds from starting the import to the writers"
    )
    parser.add_argument("--no-alone", action="store_true", help="skip the import without writers")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args)
    print(json.dumps(figures, indent=2) if args.json else table(figures))


if __name__ == "__main__":
    main()
