"""`recall mcp --http` against a real server process: Host and Origin checked on every bind, a good
token beyond the plain loopback names, 401 without it, 413 past the body limit."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from recall.cli import cli
from recall.errors import InvalidInput
from recall.http_guard import MAX_BODY_BYTES, addressed_safely, check_token, token_required
from tests.servers import announced_server

TIMEOUT = 60
TOKEN = "Zk3q9V_r8mWb2xTn-Lp4sYc7HdQe1uJo6AfGiK0"
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


def http_server(
    db_path: Path, home: Path, *options: str, token: str | None = None
) -> AbstractAsyncContextManager[str]:
    """Start `recall mcp --http --port 0 OPTIONS` and yield the URL it announces on stderr once bound."""
    return announced_server(command(db_path, "--port", "0", *options), environment(home, token), "/mcp")


def refused_start(
    db_path: Path, home: Path, host: str, token: str | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(db_path, "--host", host, "--port", "0"),
        env=environment(home, token),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def port_of(url: str) -> str:
    return url.rsplit(":", 1)[1].split("/")[0]


# -- the rules, on their own ------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost"])
def test_only_the_plain_loopback_names_go_without_a_token(host: str) -> None:
    assert not token_required(host)
    check_token(host, None)


@pytest.mark.parametrize(
    "host", ["127.0.0.2", "LOCALHOST", "0:0:0:0:0:0:0:1", "0.0.0.0", "::", "192.168.1.20", "my-laptop"]
)
def test_every_other_bind_needs_a_token(host: str) -> None:
    assert token_required(host)
    with pytest.raises(InvalidInput, match="RECALL_TOKEN"):
        check_token(host, None)
    check_token(host, TOKEN)


@pytest.mark.parametrize(
    "token", ["x", "a" * 31, "a" * 40, "correct horse battery staple and more", "tök" * 12, "ab\tcd" * 8]
)
def test_weak_or_unsendable_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidInput, match=r"secrets\.token_urlsafe\(32\)") as refused:
        check_token("127.0.0.1", token)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "authority",
    [
        "127.0.0.1:8765", "127.0.0.2:80", "127.8.8.8", "localhost:8765", "LOCALHOST:1", "LocalHost",
        "[::1]:8765", "[0:0:0:0:0:0:0:1]:8765", "[::1]", "192.168.1.20:8765", "10.0.0.1",
    ],
)  # fmt: skip
def test_ip_literals_and_localhost_are_addressed_safely(authority: str) -> None:
    assert addressed_safely(authority)


@pytest.mark.parametrize(
    "authority",
    [
        "evil.example", "evil.example:8765", "localhost.evil.example:8765", "127.0.0.1.evil.example",
        "localhost.", "::1", "[::1", "[fe80::1%25eth0]:80", "127.0.0.1:99999", "127.0.0.1:8765@evil.example",
        "127.0.0.1/x", "", " 127.0.0.1", "[127.0.0.1]", "0x7f.1",
    ],
)  # fmt: skip
def test_names_that_dns_can_rebind_are_not(authority: str) -> None:
    assert not addressed_safely(authority)


def test_a_listed_name_is_accepted_in_any_case() -> None:
    assert addressed_safely("Memory.Example:8765", frozenset({"memory.example"}))
    assert not addressed_safely("other.example:8765", frozenset({"memory.example"}))


# -- starting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.20", "127.0.0.2", "LOCALHOST", "0:0:0:0:0:0:0:1"]
)
def test_listening_anywhere_but_plain_loopback_without_a_token_is_refused(
    db_path: Path, isolated_home: Path, host: str
) -> None:
    done = refused_start(db_path, isolated_home, host, None)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "refusing to listen" in done.stderr and "RECALL_TOKEN" in done.stderr
    assert "secrets.token_urlsafe(32)" in done.stderr
    assert not db_path.exists()


def test_a_short_token_is_refused_at_start_with_how_to_make_one(db_path: Path, isolated_home: Path) -> None:
    done = refused_start(db_path, isolated_home, "127.0.0.1", "x")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "RECALL_TOKEN is 1 characters long" in done.stderr
    assert 'python -c "import secrets; print(secrets.token_urlsafe(32))"' in done.stderr
    assert not db_path.exists()


def test_host_and_port_without_http_are_a_usage_error(db_path: Path) -> None:
    for options in (["--port", "9999"], ["--allow-host", "memory.example"]):
        result = CliRunner().invoke(cli, ["--db", str(db_path), "mcp", *options])
        assert result.exit_code == 2
        assert "--http" in result.output


# -- serving ----------------------------------------------------------------------------------------


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


@pytest.mark.anyio
async def test_with_a_token_set_every_request_must_carry_it(db_path: Path, isolated_home: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home, token=TOKEN) as url:
            async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
                for headers in (
                    {},
                    {"Authorization": "Bearer wrong"},
                    {"Authorization": f"Bearer {TOKEN[:-1]}"},
                    {"Authorization": f"Basic {TOKEN}"},
                ):
                    answer = await http.post(url, json=_INITIALIZE, headers={"Accept": _ACCEPT, **headers})
                    assert answer.status_code == 401, headers
                    assert answer.headers["www-authenticate"].startswith("Bearer")
                accepted = await http.post(
                    url, json=_INITIALIZE, headers={"Accept": _ACCEPT, "Authorization": f"bearer {TOKEN}"}
                )
                assert accepted.status_code == 200

            authorised = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=TIMEOUT)
            async with authorised, Client(streamable_http_client(url, http_client=authorised)) as client:
                stats = await client.call_tool("memory_stats", {})
                assert not stats.is_error and stats.structured_content is not None
                assert stats.structured_content["database"] == str(db_path)


@pytest.mark.anyio
@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "LOCALHOST", "::1", "0:0:0:0:0:0:0:1"])
async def test_dns_rebinding_is_refused_on_every_loopback_bind(
    db_path: Path, isolated_home: Path, bind: str
) -> None:
    """A page on evil.example whose name now resolves to this machine: its Host or Origin gives it away."""
    token = TOKEN if token_required(bind) else None
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home, "--host", bind, token=token) as url:
            port = port_of(url)
            async with httpx2.AsyncClient(headers={"Accept": _ACCEPT, **auth}, timeout=TIMEOUT) as http:
                for host in ("evil.example", f"evil.example:{port}", f"localhost.evil.example:{port}"):
                    answer = await http.post(url, json=_INITIALIZE, headers={"Host": host})
                    assert answer.status_code == 421, host
                for origin in (
                    f"http://evil.example:{port}",
                    "null",
                    f"http://127.0.0.1.evil.example:{port}",
                ):
                    answer = await http.post(url, json=_INITIALIZE, headers={"Origin": origin})
                    assert answer.status_code == 403, origin
                for host in (f"LOCALHOST:{port}", f"[::1]:{port}", f"127.0.0.1:{port}"):
                    answer = await http.post(
                        url, json=_INITIALIZE, headers={"Host": host, "Origin": f"http://{host}"}
                    )
                    assert answer.status_code == 200, host


@pytest.mark.anyio
async def test_a_name_given_with_allow_host_is_answered(db_path: Path, isolated_home: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home, "--allow-host", "memory.example") as url:
            port = port_of(url)
            async with httpx2.AsyncClient(headers={"Accept": _ACCEPT}, timeout=TIMEOUT) as http:
                allowed = await http.post(url, json=_INITIALIZE, headers={"Host": f"Memory.Example:{port}"})
                other = await http.post(url, json=_INITIALIZE, headers={"Host": f"other.example:{port}"})
            assert (allowed.status_code, other.status_code) == (200, 421)


@pytest.mark.anyio
async def test_bodies_over_the_limit_get_413(db_path: Path, isolated_home: Path) -> None:
    oversized = b"{" + b" " * MAX_BODY_BYTES + b"}"

    async def chunks() -> AsyncIterator[bytes]:
        for offset in range(0, len(oversized), 1 << 20):
            yield oversized[offset : offset + (1 << 20)]

    headers = {"Accept": _ACCEPT, "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    with anyio.fail_after(TIMEOUT):
        async with http_server(db_path, isolated_home, token=TOKEN) as url:
            async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http:
                declared = await http.post(url, content=oversized)
                streamed = await http.post(url, content=chunks())  # chunked: no Content-Length to trust
                fits = await http.post(url, json={**_INITIALIZE, "padding": "x" * (MAX_BODY_BYTES // 2)})
            assert (declared.status_code, streamed.status_code) == (413, 413)
            assert fits.status_code == 200
