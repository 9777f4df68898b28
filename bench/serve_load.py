"""The team server under load (issue 19, adr/0024, adr/0025), on a real PostgreSQL.

Three measurements, each against `recall serve` started as its own process:

- ``load``: ``--clients`` concurrent MCP clients (one session each, the SDK's streamable HTTP
  client), each making ``--ops`` writes (``memory_add``, a learning with unique words, embedded on
  write as the server does by default) and ``--ops`` keyword searches (``memory_search`` for a word
  the client wrote earlier), interleaved. Then the database is checked: every write is there once
  (no loss, no duplicate), and every call answered without error.
- ``search``: ``--messages`` generated messages are loaded straight into PostgreSQL with COPY
  (triggers off, then the keyword index built in one statement: a data generator, not the write
  path), and keyword search is timed twice: through the library (``Memory.search``, in this
  process) and through the server (``memory_search`` over HTTP). Target: p95 at most 50 ms.
- ``crash``: a client SQLite database with ``--sync-messages`` messages and 50 records runs
  ``recall sync``; the server is killed with SIGKILL once part of the messages arrived, restarted
  on the same port, and the sync run again: the server must then hold every message and record
  exactly once.

    python bench/serve_load.py [--db postgresql://...] [--clients 8] [--ops 1000]
        [--messages 1000000] [--sync-messages 20000] [--only load,search,crash] [--json]

Without ``--db`` a throwaway server is started from the installed PostgreSQL binaries
(tests/postgres.py). Times are wall-clock milliseconds from the caller's side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
_ANNOUNCED = re.compile(rb"(http://\S+)/mcp")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": pct(values, 0.5),
        "p95_ms": pct(values, 0.95),
        "p99_ms": pct(values, 0.99),
        "mean_ms": round(statistics.fmean(values), 2) if values else 0.0,
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(url: str, home: Path, port: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`recall serve` in its own process; yields its base URL and the process."""
    env = {**os.environ, "RECALL_HOME": str(home)}
    env.pop("RECALL_DB", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "recall", "serve", "--db", url, "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        said = b""
        assert process.stderr is not None
        while not (found := _ANNOUNCED.search(said)):
            chunk = process.stderr.read1(4096)  # type: ignore[attr-defined]
            if not chunk:
                raise RuntimeError(f"recall serve did not start: {said.decode(errors='replace')}")
            said += chunk
        yield found.group(1).decode(), process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def make_token(url: str, name: str, projects: tuple[str, ...]) -> str:
    from recall.memory import Memory
    from recall.team.server import TeamServer

    with Memory(url) as memory:
        return TeamServer(memory).add_token(name, projects)


def pg_count(url: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(sql.encode()).fetchone()
    return int(row[0]) if row else 0


# -- load: concurrent writes and searches over MCP -------------------------------------------------

WORDS = [f"{a}{b}{c}" for a in "bcdfgklmnprstvz" for b in "aeiou" for c in "bdgklmnprstvxz"]


def unique_text(rng: random.Random, client: int, op: int) -> tuple[str, str]:
    """A learning whose content words no other write shares (so no near-duplicate refresh), and a
    word of it to search for later."""
    words = rng.sample(WORDS, 4)
    marker = f"w{client}x{op}q"
    return f"load {marker} {' '.join(words)}", marker


async def one_client(base: str, token: str, client: int, ops: int, out: dict[str, Any]) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(client)
    written: list[str] = []
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300)
    async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as mcp:
        for op in range(ops):
            text, marker = unique_text(rng, client, op)
            started = time.perf_counter()
            added = await mcp.call_tool(
                "memory_add", {"kind": "learning", "content": text, "project": "load", "force": True}
            )
            out["write_ms"].append((time.perf_counter() - started) * 1000)
            if added.is_error:
                out["errors"].append(f"add: {added.content}")
            else:
                out["refs"].append((added.structured_content or {}).get("ref"))
            written.append(marker)
            query = rng.choice(written)
            started = time.perf_counter()
            found = await mcp.call_tool("memory_search", {"query": query, "project": "load", "limit": 5})
            out["search_ms"].append((time.perf_counter() - started) * 1000)
            hits = (found.structured_content or {}).get("results", [])
            if found.is_error or not any(query in hit.get("preview", "") for hit in hits):
                out["errors"].append(f"search {query}: {'error' if found.is_error else 'not found'}")


def run_load(url: str, home: Path, clients: int, ops: int) -> dict[str, Any]:
    token = make_token(url, "loader", ("load",))
    out: dict[str, Any] = {"write_ms": [], "search_ms": [], "errors": [], "refs": []}
    with serve(url, home, free_port()) as (base, _):
        started = time.perf_counter()

        async def everyone() -> None:
            await asyncio.gather(*(one_client(base, token, n, ops, out) for n in range(clients)))

        asyncio.run(everyone())
        wall = time.perf_counter() - started
    stored = pg_count(url, "SELECT count(*) FROM learnings WHERE project = 'load'")
    distinct = pg_count(url, "SELECT count(DISTINCT content) FROM learnings WHERE project = 'load'")
    return {
        "clients": clients,
        "ops_per_client": ops,
        "wall_s": round(wall, 1),
        "calls_per_s": round(2 * clients * ops / wall, 1),
        "writes": summary(out["write_ms"]),
        "searches": summary(out["search_ms"]),
        "errors": len(out["errors"]),
        "first_errors": out["errors"][:5],
        "expected_rows": clients * ops,
        "stored_rows": stored,
        "distinct_rows": distinct,
        "distinct_refs": len(set(out["refs"])),
        "lost": clients * ops - distinct,
        "duplicated": stored - distinct,
    }


# -- search at scale: a million messages through COPY ----------------------------------------------


def vocabulary() -> list[str]:
    """Real words, from recall's own code and docs (ranked by how often they occur there)."""
    counts: dict[str, int] = {}
    for path in [
        *(HERE.parent / "recall").rglob("*.py"),
        HERE.parent / "README.md",
        HERE.parent / "CONTEXT.md",
    ]:
        for word in re.findall(r"[a-z]{3,14}", path.read_text(encoding="utf-8").lower()):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: -counts[w])


def zipf_picker(words: list[str], rng: random.Random) -> Any:
    weights = [1.0 / (rank + 10) for rank in range(len(words))]
    return lambda k: rng.choices(words, weights=weights, k=k)


def load_messages(url: str, total: int, projects: int = 10, per_session: int = 200) -> dict[str, Any]:
    import psycopg

    from recall.memory import Memory

    Memory(url).open().close()  # the schema
    rng = random.Random(7)
    pick = zipf_picker(vocabulary(), rng)
    now = "2026-12-01T00:00:00.000000+00:00"
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE messages DISABLE TRIGGER USER")
        sessions = max(1, total // per_session)
        with conn.cursor().copy(
            "COPY sessions (id, project, created_at, updated_at, provenance, host, external_id, meta) FROM STDIN"
        ) as copy:
            for s in range(1, sessions + 1):
                copy.write_row((s, f"proj{s % projects}", now, now, "verbatim", "claude", f"bench-{s}", "{}"))
        conn.execute("SELECT setval(pg_get_serial_sequence('sessions', 'id'), %s)", (sessions,))
        columns = (
            "project, created_at, updated_at, provenance, session_id, external_id, ordinal, role, origin, "
            "kind, content, content_hash, meta"
        )
        with conn.cursor().copy(f"COPY messages ({columns}) FROM STDIN") as copy:
            for n in range(total):
                session = n % sessions + 1
                text = " ".join(pick(rng.randint(8, 40)))
                role, origin = ("user", "human") if n % 2 == 0 else ("assistant", "agent")
                copy.write_row(
                    (f"proj{session % projects}", now, now, "verbatim", session, f"m{n}", n // sessions,
                     role, origin, "text", text, f"h{n}", "{}")
                )  # fmt: skip
        copied = time.perf_counter() - started
        conn.execute(
            "INSERT INTO search_index (rowid, kind, project, words, tokens) SELECT id * 8 + 5, 'message', "
            "project, recall_words(content, coalesce(tool_name, ''), '') || recall_scope('message', project), "
            "recall_code_tokens(content || ' ' || coalesce(tool_name, '')) FROM messages "
            "ON CONFLICT (rowid) DO NOTHING"
        )
        conn.execute("ALTER TABLE messages ENABLE TRIGGER USER")
        conn.execute("VACUUM ANALYZE")
    return {"messages": total, "copy_s": round(copied, 1), "load_s": round(time.perf_counter() - started, 1)}


def search_queries(count: int) -> list[tuple[str, str]]:
    rng = random.Random(11)
    pick = zipf_picker(vocabulary(), rng)
    return [(" ".join(pick(rng.randint(1, 3))), f"proj{rng.randrange(10)}") for _ in range(count)]


def run_search(url: str, home: Path, total: int, queries: int) -> dict[str, Any]:
    from recall.memory import Memory

    loaded = (
        load_messages(url, total) if total else {"messages": pg_count(url, "SELECT count(*) FROM messages")}
    )
    asked = search_queries(queries)
    library: list[float] = []
    with Memory(url) as memory:
        memory.search("warm up", mode="keyword", project="proj0")
        for query, project in asked:
            started = time.perf_counter()
            memory.search(query, mode="keyword", project=project)
            library.append((time.perf_counter() - started) * 1000)
    served, plain = asyncio.run(_served_searches(url, home, asked))
    return {
        **loaded,
        "queries": queries,
        "library": summary(library),
        "server_json": summary(plain),
        "server_mcp": summary(served),
    }


async def _served_searches(
    url: str, home: Path, asked: list[tuple[str, str]]
) -> tuple[list[float], list[float]]:
    """Through the server: MCP ``memory_search`` (the SDK's transport costs about 50 ms a call on this
    machine for any tool, profile_get included, on SQLite too), and the plain JSON ``/sync/search``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    token = make_token(url, "searcher", ("*",))
    times: list[float] = []
    plain: list[float] = []
    with serve(url, home, free_port()) as (base, _):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300)
        async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as mcp:
            await mcp.call_tool("memory_search", {"query": "warm up", "project": "proj0"})
            for query, project in asked:
                started = time.perf_counter()
                await mcp.call_tool("memory_search", {"query": query, "project": project, "limit": 10})
                times.append((time.perf_counter() - started) * 1000)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300) as client:
            for query, project in asked:
                started = time.perf_counter()
                answer = await client.get(f"{base}/sync/search", params={"q": query, "project": project})
                plain.append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200, answer.text
    return times, plain


# -- crash: kill -9 the server mid-sync, restart, sync again ---------------------------------------


def client_database(path: Path, messages: int, records: int = 50) -> None:
    from recall.memory import Memory
    from recall.search.embedder import FakeEmbedder
    from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

    rng = random.Random(3)
    pick = zipf_picker(vocabulary(), rng)
    per_session = 500
    with Memory(path, embedder=FakeEmbedder(), embed_on_write=False) as memory:
        items = []
        for s in range(max(1, messages // per_session)):
            turns = tuple(
                TranscriptMessage(
                    key=f"s{s}-m{n}",
                    role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
                    text=" ".join(pick(rng.randint(8, 40))),
                    origin=Origin.HUMAN if n % 2 == 0 else Origin.AGENT,
                    kind=MessageKind.TEXT,
                )
                for n in range(per_session)
            )
            items.append(
                Transcript(host="claude", external_id=f"crash-{s}", messages=turns, cwd="/work/crash")
            )
        memory.store.import_transcripts(items, project="crash")
        for n in range(records):
            memory.add("decision", f"crash decision {n} {' '.join(pick(6))}", project="crash", force=True)


def run_crash(url: str, home: Path, messages: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="recall-crash-"))
    local = folder / "client.db"
    client_database(local, messages)
    token = make_token(url, "crasher", ("crash",))
    port = free_port()
    env = {**os.environ, "RECALL_HOME": str(home), "RECALL_TOKEN": token}
    env.pop("RECALL_DB", None)
    command = [
        sys.executable,
        "-m",
        "recall",
        "--db",
        str(local),
        "sync",
        "--remote",
        f"http://127.0.0.1:{port}",
        "--json",
    ]
    seen_at_kill = 0
    with serve(url, home, port) as (_, process):
        syncing = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            seen_at_kill = pg_count(url, "SELECT count(*) FROM messages WHERE project = 'crash'")
            if seen_at_kill >= messages // 3 or syncing.poll() is not None:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        _, first_err = syncing.communicate(timeout=300)
    with serve(url, home, port):
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)
    stored = pg_count(url, "SELECT count(*) FROM messages WHERE project = 'crash'")
    distinct = pg_count(
        url,
        "SELECT count(*) FROM (SELECT DISTINCT session_id, external_id FROM messages WHERE project = 'crash') d",
    )
    decisions = pg_count(url, "SELECT count(*) FROM decisions WHERE project = 'crash'")
    return {
        "messages": messages,
        "records": 50,
        "stored_at_kill": seen_at_kill,
        "first_sync_exit": syncing.returncode,
        "first_sync_said": first_err.decode(errors="replace").strip()[-200:],
        "resync_exit": again.returncode,
        "resync_report": json.loads(again.stdout) if again.returncode == 0 else again.stderr[-300:],
        "stored_messages": stored,
        "distinct_messages": distinct,
        "stored_decisions": decisions,
        "lost": messages - distinct + max(0, 50 - decisions),
        "duplicated": stored - distinct + max(0, decisions - 50),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", help="an empty PostgreSQL database (default: a throwaway server)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sync-messages", type=int, default=20_000)
    parser.add_argument("--only", default="load,search,crash")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="recall-bench-home-"))
    server = None
    if args.db is None:
        from postgres import start_server

        server = start_server()
    results: dict[str, Any] = {"load_average": os.getloadavg()}
    try:
        for phase in args.only.split(","):
            url = args.db or server.create_database(f"bench_{phase}")  # type: ignore[union-attr]
            started = time.perf_counter()
            if phase == "load":
                results["load"] = run_load(url, home, args.clients, args.ops)
            elif phase == "search":
                results["search"] = run_search(url, home, args.messages, args.queries)
            elif phase == "crash":
                results["crash"] = run_crash(url, home, args.sync_messages)
            results.setdefault("phase_s", {})[phase] = round(time.perf_counter() - started, 1)
            print(json.dumps({phase: results.get(phase)}, default=str), file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
    results["load_average_after"] = os.getloadavg()
    print(json.dumps(results, indent=None if args.json else 2, default=str))


if __name__ == "__main__":
    main()
