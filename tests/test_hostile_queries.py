"""Any query gives results or a one-line error, in every mode and through every interface.

The inputs are what shells, agents and pasted logs really send: bytes that are not UTF-8 (a shell
hands them to Python as lone surrogates), NUL and other controls, terminal escapes, a megabyte of
text, punctuation only, and FTS5 syntax that is not valid FTS5. The real model is used because its
tokenizer is what refused lone surrogates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from recall.errors import InvalidInput
from recall.memory import Memory
from recall.search.hybrid import MODES
from recall.search.query import MAX_QUERY_CHARS, clean_query
from recall.store import Store

MEGABYTE = 1_000_000
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
TEXT_QUERIES = [
    "a\x00b",
    "\x00",
    "\x01\x02\x07\x1b[31mred\x1b[0m\x7f",
    "x" * MEGABYTE,
    "sqlite " * (MEGABYTE // 7),
    "!!!...???---",
    '"unbalanced',
    "AND OR NOT",
    "NEAR(a b",
    "(((",
    "*",
    "^x",
    "col:foo",
    "a AND",
    '"a" NEAR/3 "b"',
    "{a b}: c",
    "-x + y",
    '""',
    "\u202e\u200bwal\u2060",
    "🙂" * 1000,
]
SURROGATE_QUERIES = ["caf\udce9 \udcff\udcfe", "\ud800", "a\udc80b sqlite"]
BYTE_QUERIES = [b"caf\xe9 \xff\xfe sqlite", b"\xc3\x28", b"\x00\xff"]
ALL_QUERIES: list[str | bytes] = [*TEXT_QUERIES, *SURROGATE_QUERIES, *BYTE_QUERIES]


def short(query: str | bytes) -> str:
    return repr(query[:20])


@pytest.fixture
def filled(real_memory: Memory) -> Memory:
    for content in ("Use SQLite with WAL for the store", "x marks the cache key", "red build after lint"):
        real_memory.add("decision", content, project="p")
    return real_memory


def test_a_cleaned_query_is_text_every_mode_can_take() -> None:
    for query in ALL_QUERIES:
        cleaned = clean_query(query)
        assert isinstance(cleaned, str) and len(cleaned) <= MAX_QUERY_CHARS
        cleaned.encode("utf-8")  # no lone surrogates left
        assert "\x00" not in cleaned and "\x1b" not in cleaned
        assert clean_query(cleaned) == cleaned
    assert clean_query(b"caf\xc3\xa9") == "café"
    assert clean_query("pass\u200bword") == "password"  # as the scrubber stores it


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_answers_every_query(filled: Memory, mode: str) -> None:
    for query in ALL_QUERIES:
        found = filled.search(query, mode=mode, project="*")  # type: ignore[arg-type]
        assert isinstance(found.hits, tuple) and isinstance(found.query, str), short(query)
    assert filled.search(b"caf\xe9 SQLite WAL", mode=mode, project="*").hits  # type: ignore[arg-type]


def test_a_subagent_brief_answers_every_task(filled: Memory) -> None:
    for query in ALL_QUERIES:
        try:
            brief = filled.context_for_agent(query, project="*")
        except InvalidInput as exc:  # a task that is empty once cleaned
            assert "\n" not in str(exc), short(query)
            continue
        assert brief.tokens <= brief.max_tokens, short(query)


# -- through the real command ----------------------------------------------------------------------


def recall_process(db_path: Path, home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if key != "RECALL_DB"}
    env["RECALL_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "recall", "--db", str(db_path), *args],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_the_command_answers_every_query_in_every_mode(filled: Store, isolated_home: Path) -> None:
    """argv is bytes on POSIX: what a shell passes, bytes that are not UTF-8 included.

    Each process loads the model, so the inputs are combined into few runs. An argument cannot
    hold NUL, and one holds at most 128 KiB on Linux, so the megabyte is cut to 100,000 bytes
    (mid-character, one more way not to be UTF-8).
    """
    filled.close()
    runs: list[tuple[bytes, tuple[str, ...]]] = [
        (b"caf\xe9 \xff\xfe sqlite", MODES),
        (b"\xc3\x28 " + "\ud800 a\udc80b".encode("utf-8", "surrogatepass"), ("hybrid",)),
        ('"unbalanced NEAR(a b !!!...??? \x01\x07\x1b[31mred\x1b[0m -x + y 🙂'.encode(), ("hybrid",)),
        (("x" * MEGABYTE).encode()[:100_000], ("hybrid",)),
        (("🙂" * MEGABYTE).encode()[:100_001], ("keyword",)),
    ]
    for query, modes in runs:
        for mode in modes:
            done = recall_process(
                filled.path, isolated_home, "search", "--all-projects", "--mode", mode, "--json", "--", query
            )
            assert done.returncode == 0, (short(query), mode, done.stderr[-500:])
            answer = json.loads(done.stdout)
            assert isinstance(answer["results"], list)
            answer["query"].encode("utf-8")
    plain = recall_process(filled.path, isolated_home, "search", "--all-projects", b"caf\xe9 \xff SQLite")
    assert plain.returncode == 0 and b"SQLite" in plain.stdout


# -- through the real MCP server -------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def spawned(db_path: Path, home: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recall", "--db", str(db_path), "mcp"],
        env={"RECALL_HOME": str(home)},
    )
    async with Client(params) as client:
        yield client


@pytest.mark.anyio
async def test_the_mcp_tools_answer_every_query(filled: Store, isolated_home: Path) -> None:
    """JSON cannot carry bytes or lone surrogates; everything else reaches the tools as sent."""
    filled.close()
    calls = [
        ("memory_search", "query"),
        ("memory_hybrid_search", "query"),
        ("context_for_agent", "agent_task"),
    ]
    with anyio.fail_after(240):
        async with spawned(filled.path, isolated_home) as client:
            for query in TEXT_QUERIES:
                for tool, argument in calls:
                    result = await client.call_tool(tool, {argument: query, "project": "*"})
                    text = "\n".join(block.text for block in result.content if block.type == "text")
                    if result.is_error:
                        assert tool == "context_for_agent" and "\n" not in text, (tool, short(query), text)
                    else:
                        assert result.structured_content is not None, (tool, short(query))
            found = await client.call_tool("memory_search", {"query": "\x00SQLite\x1b[0m", "project": "*"})
            assert found.structured_content is not None and found.structured_content["results"]


def test_mcp_over_http_answers_bytes_json_cannot_hold_with_a_parse_error(
    filled: Store, isolated_home: Path
) -> None:
    """Bytes that are not UTF-8 and escaped lone surrogates are not JSON text: one error line each,
    and the server goes on answering."""
    filled.close()
    server = subprocess.Popen(
        [sys.executable, "-m", "recall", "--db", str(filled.path), "mcp", "--http", "--port", "0"],
        env={**os.environ, "RECALL_HOME": str(isolated_home)},
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        url = server.stderr.readline().decode().split(" on ", 1)[1].split()[0]
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        with httpx2.Client(headers=headers, timeout=60) as http:
            opened = http.post(url, json=_INITIALIZE)
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"%s","arguments":{"%s":"%s"}}}'
            for tool, argument in (
                (b"memory_search", b"query"),
                (b"memory_hybrid_search", b"query"),
                (b"context_for_agent", b"agent_task"),
            ):
                for query in (b"caf\xe9 \xff sqlite", b"a\\udcffb sqlite", b"\\ud800"):
                    answer = http.post(url, content=call % (tool, argument, query), headers=session)
                    assert answer.status_code == 400, (tool, query)
                    assert "\n" not in answer.json()["error"]["message"]
            after = http.post(url, content=call % (b"memory_search", b"query", b"sqlite"), headers=session)
            assert after.status_code == 200 and b'"isError":false' in after.content
    finally:
        server.terminate()
        server.wait(timeout=30)
