"""Import throughput: generated host transcripts through the real `recall import` path.

Generates a corpus (default 100,000 messages over 400 sessions: prose of realistic lengths that
now and then names a file, tool calls (test runs, edits adding a function and an import, file reads)
and tool output, one test run in ten failing with a traceback, a planted secret in about one message
in fifty), imports it into a fresh database with embeddings off (the issue's figure excludes them),
and reports messages per second end to end: discovery, parsing, scrubbing, SQLite and FTS5 writes,
and connecting messages to the entities they touched (adr/0019). A second run over the same files
measures the unchanged-file skip.

``--host`` picks the format (default Claude Code JSONL): ``opencode`` writes an ``opencode.db`` of
the 1.2+ schema, ``pi`` v3 session files, ``gemini`` append-only JSONL chats in which every message
with tool calls is written twice (running, then finished) and ``$set`` lines follow each turn,
``codex`` rollouts of the envelope era (each prompt and answer also written as its event twin),
``cursor`` agent transcripts (no timestamps; outputs as ``tool-result`` turns).

    python bench/import_bench.py [--messages 100000] [--host claude|codex|cursor|opencode|pi|gemini] [--json]
    python bench/import_bench.py --without-connections   # the same import with the connect stage off
    python bench/import_bench.py --read-ahead on   # force the read-ahead worker (adr/0033) on or off
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
import subprocess
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


Turn = tuple[str, str]  # ("user" | "assistant" | "call" | "result", text or command or output)


def _turns(rng: random.Random, count: int) -> list[Turn]:
    """One session's messages: prompts, answers, and shell calls each followed by its output."""
    turns: list[Turn] = []
    while len(turns) < count:
        text = _prose(rng, 8, 60)
        if rng.random() < 0.02:
            text += " key " + rng.choice(SECRETS)(rng)
        turns.append(("user", text))
        for _ in range(rng.randint(0, 3)):
            turns.append(("call", f"pytest -q tests/test_{rng.choice(WORDS)}.py"))
            output = "\n".join(_prose(rng, 5, 20) for _ in range(rng.randint(2, 60)))
            if rng.random() < 0.05:
                output += "\nexport TOKEN=" + rng.choice(SECRETS)(rng)
            turns.append(("result", output))
        turns.append(("assistant", _prose(rng, 20, 200)))
    return turns[:count]


def _iso(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def generate_pi(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """Pi v3 session files: a header, then one entry per message in a parentId chain."""
    rng = random.Random(seed)
    start, written = datetime(2026, 6, 1, tzinfo=UTC), 0
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        begun = start + timedelta(minutes=s * 300)
        lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": _iso(begun),
                  "cwd": f"/home/dev/proj{s % 12}"}]  # fmt: skip
        parent = None
        for i, (kind, text) in enumerate(_turns(rng, max(2, messages // sessions))):
            when = begun + timedelta(seconds=i)
            stamp = int(when.timestamp() * 1000)
            if kind == "user":
                message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": stamp}
            elif kind == "assistant":
                message = {"role": "assistant", "content": [{"type": "text", "text": text}], "model": "m-1",
                           "stopReason": "stop", "timestamp": stamp}  # fmt: skip
            elif kind == "call":
                message = {"role": "assistant", "model": "m-1", "stopReason": "toolUse", "timestamp": stamp,
                           "content": [{"type": "toolCall", "id": f"call_{s}_{i}", "name": "bash",
                                        "arguments": {"command": text}}]}  # fmt: skip
            else:
                message = {"role": "toolResult", "toolCallId": f"call_{s}_{i - 1}", "toolName": "bash",
                           "content": [{"type": "text", "text": text}], "isError": False, "timestamp": stamp}  # fmt: skip
            entry_id = f"{rng.getrandbits(32):08x}"
            lines.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": _iso(when),
                          "message": message})  # fmt: skip
            parent = entry_id
            written += 1
        path = (
            folder
            / "sessions"
            / f"--home-dev-proj{s % 12}--"
            / f"{_iso(begun).replace(':', '-')}_{session_id}.jsonl"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return written


def generate_gemini(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """Gemini CLI v0.39+ chats: metadata, messages (tool calls written running, then finished), $set."""
    rng = random.Random(seed)
    start, written = datetime(2026, 6, 1, tzinfo=UTC), 0
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        begun = start + timedelta(minutes=s * 300)
        lines: list[dict[str, object]] = [{"sessionId": session_id, "projectHash": f"{s % 12:064x}",
                                           "startTime": _iso(begun), "lastUpdated": _iso(begun), "kind": "main"}]  # fmt: skip
        turns = _turns(rng, max(2, messages // sessions))
        for i, (kind, text) in enumerate(turns):
            when = _iso(begun + timedelta(seconds=i))
            if kind == "user":
                lines.append(
                    {"id": f"u{s}-{i}", "timestamp": when, "type": "user", "content": [{"text": text}]}
                )
            elif kind == "assistant":
                lines.append({"id": f"g{s}-{i}", "timestamp": when, "type": "gemini", "content": text,
                              "model": "gemini-3-flash-preview"})  # fmt: skip
                lines.append({"$set": {"lastUpdated": when}})
            elif kind == "call":
                call = {"id": f"c{s}-{i}", "name": "run_shell_command", "args": {"command": text},
                        "status": "executing", "timestamp": when}  # fmt: skip
                message = {
                    "id": f"g{s}-{i}",
                    "timestamp": when,
                    "type": "gemini",
                    "content": "",
                    "toolCalls": [call],
                }
                lines.append(message)
                output = turns[i + 1][1] if i + 1 < len(turns) else ""
                finished = {**call, "status": "success", "result": [
                    {"functionResponse": {"id": call["id"], "name": call["name"], "response": {"output": output}}}]}  # fmt: skip
                lines.append({**message, "toolCalls": [finished]})
            written += 1
        chats = folder / "tmp" / f"proj{s % 12}" / "chats"
        chats.mkdir(parents=True, exist_ok=True)
        name = f"session-{_iso(begun)[:16].replace(':', '-')}-{session_id[:8]}.jsonl"
        (chats / name).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return written


def generate_codex(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """Codex rollouts of the envelope era: session_meta, turn_context, then response items (each
    prompt and answer with its event twin, as Codex writes them) and ``exec_command`` calls with their
    outputs."""
    rng = random.Random(seed)
    start, written = datetime(2026, 6, 1, tzinfo=UTC), 0
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        begun = start + timedelta(minutes=s * 300)
        cwd = f"/home/dev/proj{s % 12}"
        lines: list[dict[str, object]] = [
            {"timestamp": _iso(begun), "type": "session_meta", "payload": {"id": session_id,
             "timestamp": _iso(begun), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.135.0",
             "source": "cli", "model_provider": "openai", "git": {"branch": "main"}}},
            {"timestamp": _iso(begun), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.5"}},
        ]  # fmt: skip
        for i, (kind, text) in enumerate(_turns(rng, max(2, messages // sessions))):
            when = _iso(begun + timedelta(seconds=i))
            if kind in ("user", "assistant"):
                role, part = ("user", "input_text") if kind == "user" else ("assistant", "output_text")
                event = {"type": "user_message", "message": text, "images": []} if kind == "user" else {
                    "type": "agent_message", "message": text}  # fmt: skip
                lines.append({"timestamp": when, "type": "event_msg", "payload": event})
                lines.append({"timestamp": when, "type": "response_item", "payload": {"type": "message",
                              "role": role, "content": [{"type": part, "text": text}]}})  # fmt: skip
            elif kind == "call":
                arguments = json.dumps({"cmd": text, "workdir": cwd})
                lines.append({"timestamp": when, "type": "response_item", "payload": {"type": "function_call",
                              "name": "exec_command", "arguments": arguments, "call_id": f"call_{s}_{i}"}})  # fmt: skip
            else:
                lines.append({"timestamp": when, "type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": f"call_{s}_{i - 1}", "output": text}})  # fmt: skip
            written += 1
        day = folder / "sessions" / begun.strftime("%Y/%m/%d")
        day.mkdir(parents=True, exist_ok=True)
        name = f"rollout-{begun.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl"
        (day / name).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return written


def generate_cursor(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """Cursor agent transcripts (``~/.cursor/projects/*/agent-transcripts/<id>/<id>.jsonl``): one line
    a message, prompts wrapped in ``<user_query>``, ``Shell`` calls, outputs as ``tool-result`` turns."""
    rng = random.Random(seed)
    written = 0
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        lines: list[dict[str, object]] = []
        for kind, text in _turns(rng, max(2, messages // sessions)):
            if kind == "user":
                block: dict[str, object] = {"type": "text", "text": f"<user_query>\n{text}\n</user_query>"}
            elif kind == "assistant":
                block = {"type": "text", "text": text}
            elif kind == "call":
                block = {"type": "tool_use", "name": "Shell", "input": {"command": text}}
            else:
                block = {"type": "tool-result", "name": "Shell", "content": text}
            role = {"user": "user", "result": "user"}.get(kind, "assistant")
            lines.append({"role": role, "message": {"content": [block]}})
            written += 1
        folder_ = folder / "projects" / f"home-dev-proj{s % 12}" / "agent-transcripts" / session_id
        folder_.mkdir(parents=True, exist_ok=True)
        (folder_ / f"{session_id}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
        )
    return written


_OPENCODE_SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, time_created integer NOT NULL,
  time_updated integer NOT NULL, sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_session_idx ON part (session_id);
"""


def generate_opencode(folder: Path, messages: int, sessions: int, seed: int = 7) -> int:
    """An OpenCode 1.2+ ``opencode.db``: a user or assistant message per turn, a tool part per call."""
    import sqlite3

    rng = random.Random(seed)
    start_ms, written = int(datetime(2026, 6, 1, tzinfo=UTC).timestamp() * 1000), 0
    folder.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(folder / "opencode.db")
    conn.executescript(_OPENCODE_SCHEMA)
    conn.execute("INSERT INTO project VALUES ('p', '/home/dev', 'git', NULL, 0, 0, '[]')")
    for s in range(sessions):
        session_id, begun = f"ses_{s:026d}", start_ms + s * 18_000_000
        conn.execute("INSERT INTO session VALUES (?, 'p', NULL, ?, ?, ?, '1.2.0', ?, ?)",
                     (session_id, f"s{s}", f"/home/dev/proj{s % 12}", f"session {s}", begun, begun))  # fmt: skip
        turns = _turns(rng, max(2, messages // sessions))
        for i, (kind, text) in enumerate(turns):
            when, message_id, part_id = begun + i * 1000, f"msg_{s:08d}{i:08d}", f"prt_{s:08d}{i:08d}"
            if kind == "result":
                continue  # written with its call, as one tool part
            role = "user" if kind == "user" else "assistant"
            info = {"role": role, "time": {"created": when}, "modelID": "m-1", "agent": "build"}
            if kind == "call":
                output = turns[i + 1][1] if i + 1 < len(turns) else ""
                part = {"type": "tool", "callID": f"call_{s}_{i}", "tool": "bash",
                        "state": {"status": "completed", "input": {"command": text}, "output": output}}  # fmt: skip
                written += 1
            else:
                part = {"type": "text", "text": text}
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                         (message_id, session_id, when, when, json.dumps(info)))  # fmt: skip
            conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (part_id, message_id, session_id, when, when, json.dumps(part)))  # fmt: skip
            written += 1
    conn.commit()
    conn.close()
    return written


GENERATORS = {
    "claude": generate,
    "codex": generate_codex,
    "cursor": generate_cursor,
    "opencode": generate_opencode,
    "pi": generate_pi,
    "gemini": generate_gemini,
}


def run(
    messages: int,
    sessions: int,
    embed: bool = False,
    host: str = "claude",
    connections: bool = True,
    read_ahead: bool | None = None,
) -> dict[str, object]:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.store import Store

    # What the connect stage costs the importing process: the same import without it. A read-ahead
    # worker still reads new sessions' mentions for it (adr/0045), which the wall time includes.
    if not connections:
        import recall.store.entities
        import recall.store.transcripts

        recall.store.transcripts.connect_written = lambda *args: 0  # type: ignore[assignment]
        recall.store.entities.connect_pending = lambda *args, **kwargs: 0  # type: ignore[assignment]

    with tempfile.TemporaryDirectory(prefix="recall-import-bench-") as tmp:
        root = Path(tmp)
        source = root / host
        t0 = time.perf_counter()
        lines = GENERATORS[host](source, messages, sessions)
        generated = time.perf_counter() - t0
        store = Store(root / "bench.db")
        adapter = get_adapter(host)
        t1, cpu1 = time.perf_counter(), time.process_time()
        first = run_import(store, [adapter], paths=[source], embed_budget_seconds=0, read_ahead=read_ahead)
        first_seconds, first_cpu = time.perf_counter() - t1, time.process_time() - cpu1
        t2 = time.perf_counter()
        second = run_import(store, [adapter], paths=[source], embed_budget_seconds=0)
        second_seconds = time.perf_counter() - t2
        embedding: dict[str, object] = {}
        if embed:
            embedding = _embed(store)
        size = (root / "bench.db").stat().st_size
        store.close()
    return {
        **embedding,
        "host": host,
        "lines_generated": lines,
        "generate_seconds": round(generated, 2),
        "messages_added": first.messages_added,
        "sessions": first.sessions_new,
        "import_seconds": round(first_seconds, 2),
        "messages_per_second": round(first.messages_added / first_seconds),
        "import_cpu_seconds": round(
            first_cpu, 2
        ),  # this process's CPU time: what a shared machine leaves out
        "messages_per_cpu_second": round(first.messages_added / first_cpu),
        # the read-ahead worker's CPU time (recall.read_ahead), which this process's leaves out
        "read_ahead": first.read_ahead,
        "messages_per_cpu_second_with_worker": round(
            first.messages_added / (first_cpu + first.read_ahead.get("worker_cpu_seconds", 0.0))
        ),
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
    parser.add_argument("--host", choices=sorted(GENERATORS), default="claude", help="transcript format")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--without-connections", action="store_true", help="turn the connect stage off")
    parser.add_argument(
        "--read-ahead",
        choices=("auto", "on", "off"),
        default="auto",
        help="the read-ahead worker (adr/0033): on, off, or as an import decides (a core idle)",
    )
    parser.add_argument(
        "--embed", action="store_true", help="then embed the text messages with the real model"
    )
    args = parser.parse_args()
    # As a pip install does: otherwise, with PYTHONDONTWRITEBYTECODE set (as on the bench machine),
    # the modules an import loads on first use are compiled from source inside the timed run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "recall"), str(REPO / "adapters")],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    result = run(
        args.messages,
        args.sessions,
        args.embed,
        args.host,
        connections=not args.without_connections,
        read_ahead={"auto": None, "on": True, "off": False}[args.read_ahead],
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"generated {result['lines_generated']:,} {result['host']} messages in {result['generate_seconds']} s"
    )
    print(
        f"imported {result['messages_added']:,} messages in {result['sessions']} sessions in "
        f"{result['import_seconds']} s: {result['messages_per_second']:,} messages/s (target 5,000); "
        f"{result['messages_per_cpu_second']:,} messages per CPU second"
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
