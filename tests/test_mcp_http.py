"""`recall mcp --http`: Streamable HTTP on loopback, a token beyond it, and 401 without the right one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from recall.cli import cli
from recall.cli.mcp_cmd import is_loopback

TIMEOUT = 60
TOKEN = "s3cret-token-for-tests"
_ANNOUNCED = re.compile(rb"(http://\S+/mcp)")
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
_ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def command(db_path: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "recall", "--db", str(db_path), "mcp", "--http", *options]


def environment(home: Path, token: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("RECALL_TOKEN", "RECALL_DB")}
    env["RECALL_HOME"] = str(home)
    if token is not None:
        env["RECALL_TOKEN"] = token
    return env


@asynccontextmanager
async def http_server(db_path: Path, home: Path, token: str | None = None) -> AsyncIterator[str]:
    """Start `recall mcp --http --port 0` and yield the URL it announces on stderr once bound."""
    process = await anyio.open_process(
        command(db_path, "--port", "0"),
        env=environment(home, token),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        said = b""
        while not (found := _ANNOUNCED.search(said)):
            try:
                said += await process.stderr.receive()
            except anyio.EndOfStream:
                pytest.fail(f"the server exited before listening: {said.decode(errors='replace')}")
        yield found.group(1).decode()
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.8.8", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_hosts_are_recognised(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "my-laptop", "localhost.evil.com"]
)
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.anyio
async def test_loopback_without_a_token_serves_the_real_client(db_path: Path, isolated_home: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home) as url, Client(url) as client:
            assert url.startswith("http://127.0.0.1:")
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"memory_search", "context_for_agent", "memory_stats"} <= names
            added = await client.call_tool(
                "memory_add", {"type": "learning", "content": "served over http", "project": "p"}
            )
            assert not added.is_error and added.structured_content is not None
            assert added.structured_content["record"]["provenance"] == "user_authored"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_listening_beyond_loopback_without_a_token_is_refused(
    db_path: Path, isolated_home: Path, host: str
) -> None:
    done = subprocess.run(
        command(db_path, "--host", host, "--port", "0"),
        env=environment(isolated_home, None),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 1
    assert "refusing to listen" in done.stderr and "RECALL_TOKEN" in done.stderr
    assert not db_path.exists()


@pytest.mark.anyio
async def test_with_a_token_set_every_request_must_carry_it(db_path: Path, isolated_home: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home, token=TOKEN) as url:
            async with httpx2.AsyncClient() as http:
                for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
                    answer = await http.post(url, json=_INITIALIZE, headers={"Accept": _ACCEPT, **headers})
                    assert answer.status_code == 401, headers
                    assert answer.headers["www-authenticate"].startswith("Bearer")
                accepted = await http.post(
                    url, json=_INITIALIZE, headers={"Accept": _ACCEPT, "Authorization": f"bearer {TOKEN}"}
                )
                assert accepted.status_code == 200

            authorised = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
            async with authorised, Client(streamable_http_client(url, http_client=authorised)) as client:
                stats = await client.call_tool("memory_stats", {})
                assert not stats.is_error and stats.structured_content is not None
                assert stats.structured_content["database"] == str(db_path)


def test_host_and_port_without_http_are_a_usage_error(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db_path), "mcp", "--port", "9999"])
    assert result.exit_code == 2
    assert "--http" in result.output
