"""Import throughput: generated Claude Code and Codex transcripts through the real `recall import` path.

Generates a corpus (default 100,000 messages over 400 sessions: prose of realistic lengths that
now and then names a file, tool calls (test runs, edits adding a function and an import, file reads)
and tool output, one test run in ten failing with a traceback, a planted secret in about one message
in fifty), imports it into a fresh database with embeddings off (the issue's figure excludes them),
and reports messages per second end to end: discovery, parsing, scrubbing, SQLite and FTS5 writes,
and connecting messages to the entities they touched (adr/0019). A second run over the same files
measures the unchanged-file skip.

    python bench/import_bench.py [--messages 100000] [--json]
    python bench/import_bench.py --without-connections   # the same import with the connect stage off
    python bench/import_bench.py --messages 5000 --embed   # then embed the text messages (real model)

``--embed`` adds what the issue's embedding figure measures: after the import, the messages people and
agents wrote are embedded with the real ONNX model through ``semantic.embed_pending`` (what an
import does within its budget and ``recall embed`` does for the rest), reported as messages per
second with their mean length.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from recall.store import Store

WORDS = (  # noqa: SIM905 - a word list reads best as one string
    "the a to of and in is that for it on with as this we be are was by not or an at from function "
    "test error database query index file config server client request response cache token user "
    "session import migration schema table column value string list dict async await return class "
    "module package install build deploy docker kubernetes python rust typescript react sqlite wal "
    "lock timeout retry failure fixed bug refactor rename extract parse json yaml toml path git branch"
).split()
SECRETS = [
    lambda r: "AKIA" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
    lambda r: (
        "ghp_"
        + "".join(
            r.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(36)
        )
    ),
    lambda r: (
        "sk-ant-api03-" + "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789_-") for _ in range(90))
    ),
]


MODULES = ("store", "search", "ingest", "brief", "scrub", "server", "client", "cache", "auth", "billing")


def _prose(rng: random.Random, low: int, high: int) -> str:
    words = [
        WORDS[min(int(rng.paretovariate(1.1)) - 1, len(WORDS) - 1)] for _ in range(rng.randint(low, high))
    ]
    if rng.random() < 0.2:  # people and agents name files now and then
        words.insert(rng.randrange(len(words) + 1), f"src/{rng.choice(MODULES)}/{rng.choice(WORDS)}.py")
    return " ".join(words).capitalize() + "."


def _tool_call(rng: random.Random, s: int, i: int) -> dict[str, object]:
    """A test run, an edit that adds a function and an import, or a read, in Claude Code's shape."""
    path = f"/home/dev/proj{s % 12}/src/{rng.choice(MODULES)}/{rng.choice(WORDS)}.py"
    roll = rng.random()
    if roll < 0.5:
        name, args = "Bash", {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py"}
    elif roll < 0.8:
        body = f"def {rng.choice(WORDS)}_{rng.choice(WORDS)}(value):\n    import {rng.choice(('numpy', 'httpx', 'yaml'))}\n"
        name, args = (
            "Edit",
            {"file_path": path, "old_string": "pass", "new_string": body + "    return value"},
        )
    else:
        name, args = "Read", {"file_path": path}
    return {"type": "tool_use", "id": f"toolu_{s}_{i}", "name": name, "input": args}


def _tool_output(rng: random.Random) -> str:
    output = "\n".join(_prose(rng, 5, 20) for _ in range(rng.randint(2, 60)))
    if rng.random() < 0.1:
        output = (
            f'Exit code 1\n{output}\nTraceback (most recent call last):\n  File "x.py", line 3\n'
            f"KeyError: '{rng.choice(WORDS)}'"
        )
    return output


def generate(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """Write Claude Code JSONL sessions; returns the number of message lines written."""
    rng = random.Random(seed)
    per_session = max(2, messages // sessions)
    written = 0
    start = datetime(2026, 6, 1, tzinfo=UTC)
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        project_dir = folder / "projects" / f"-home-dev-proj{s % 12}"
        project_dir.mkdir(parents=True, exist_ok=True)
        lines = []
        parent = None
        for i in range(per_session):
            ts = (start + timedelta(minutes=s * 300 + i)).isoformat().replace("+00:00", "Z")
            line_id = str(uuid.UUID(int=rng.getrandbits(128)))
            base = {"parentUuid": parent, "isSidechain": False, "type": "user", "cwd": f"/home/dev/proj{s % 12}",
                    "sessionId": session_id, "version": "2.1.40", "gitBranch": "main", "uuid": line_id,
                    "timestamp": ts}  # fmt: skip
            roll = rng.random()
            if i % 2 == 0 and roll < 0.6:
                text = _prose(rng, 8, 60)
                if rng.random() < 0.02:
                    text += " key " + rng.choice(SECRETS)(rng)
                base["message"] = {"role": "user", "content": text}
            elif i % 2 == 0:
                output = _tool_output(rng)
                if rng.random() < 0.05:
                    output += "\nexport TOKEN=" + rng.choice(SECRETS)(rng)
                base["message"] = {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{s}_{i - 1}", "content": output}]}  # fmt: skip
            elif roll < 0.4:
                base["type"] = "assistant"
                base["message"] = {"id": f"msg_{s}_{i}", "role": "assistant", "model": "claude-sonnet-4-5",
                                   "content": [_tool_call(rng, s, i)]}  # fmt: skip
            else:
                base["type"] = "assistant"
                base["message"] = {"id": f"msg_{s}_{i}", "role": "assistant", "model": "claude-sonnet-4-5",
                                   "content": [{"type": "text", "text": _prose(rng, 20, 200)}]}  # fmt: skip
            lines.append(json.dumps(base))
            parent = line_id
            written += 1
        (project_dir / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written


def run(messages: int, sessions: int, embed: bool = False, connections: bool = True) -> dict[str, object]:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.store import Store

    if not connections:  # measure what the connect stage costs: the same import without it
        import recall.store.entities
        import recall.store.transcripts

        recall.store.transcripts.connect_written = lambda *args: 0  # type: ignore[assignment]
        recall.store.entities.connect_pending = lambda *args, **kwargs: 0  # type: ignore[assignment]

    with tempfile.TemporaryDirectory(prefix="recall-import-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        lines = generate(root / "claude", messages, sessions)
        generated = time.perf_counter() - t0
        store = Store(root / "bench.db", embed_on_write=False)
        adapter = get_adapter("claude")
        t1 = time.perf_counter()
        first = run_import(store, [adapter], paths=[root / "claude"], embed_budget_seconds=0)
        first_seconds = time.perf_counter() - t1
        t2 = time.perf_counter()
        second = run_import(store, [adapter], paths=[root / "claude"], embed_budget_seconds=0)
        second_seconds = time.perf_counter() - t2
        embedding: dict[str, object] = {}
        if embed:
            embedding = _embed(store)
        size = (root / "bench.db").stat().st_size
        store.close()
    return {
        **embedding,
        "lines_generated": lines,
        "generate_seconds": round(generated, 2),
        "messages_added": first.messages_added,
        "sessions": first.sessions_new,
        "import_seconds": round(first_seconds, 2),
        "messages_per_second": round(first.messages_added / first_seconds),
        "secrets_redacted": dict(first.redactions),
        "links": first.links,
        "connections": connections,
        "second_run_seconds": round(second_seconds, 3),
        "second_run_messages_added": second.messages_added,
        "second_run_files_unchanged": second.files_unchanged,
        "database_bytes": size,
    }


def _embed(store: Store) -> dict[str, object]:
    from recall.search import semantic
    from recall.search.embedder import get_embedder

    embedder = get_embedder()
    embedder.embed_query("warm up")  # model load is not throughput
    with store.reading() as conn:
        chars = conn.execute(f"SELECT avg(length(text)) FROM ({semantic._message_sql()})").fetchone()[0]
    started = time.perf_counter()
    report = semantic.embed_pending(store, embedder)
    seconds = time.perf_counter() - started
    return {"embedded": report.embedded, "embed_seconds": round(seconds, 2),
            "embedded_per_second": round(report.embedded / seconds, 1),
            "embedded_mean_chars": round(chars or 0)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--without-connections", action="store_true", help="turn the connect stage off")
    parser.add_argument(
        "--embed", action="store_true", help="then embed the text messages with the real model"
    )
    args = parser.parse_args()
    result = run(args.messages, args.sessions, args.embed, connections=not args.without_connections)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"generated {result['lines_generated']:,} transcript lines in {result['generate_seconds']} s")
    print(
        f"imported {result['messages_added']:,} messages in {result['sessions']} sessions in "
        f"{result['import_seconds']} s: {result['messages_per_second']:,} messages/s (target 5,000)"
    )
    print(f"secrets redacted: {result['secrets_redacted']}")
    print(f"entity links: {result['links']:,}" + ("" if result["connections"] else " (connect stage off)"))
    print(
        f"second run: {result['second_run_messages_added']} added, {result['second_run_files_unchanged']} files "
        f"skipped unchanged, {result['second_run_seconds']} s"
    )
    print(f"database: {result['database_bytes'] / 1_048_576:.1f} MiB")
    if "embedded" in result:
        print(
            f"embedded {result['embedded']:,} text messages (mean {result['embedded_mean_chars']} characters) in "
            f"{result['embed_seconds']} s: {result['embedded_per_second']} messages/s (target 250 short messages/s)"
        )


if __name__ == "__main__":
    main()
