"""`recall serve` for real: a subprocess on a throwaway PostgreSQL, reached over HTTP by MCP and `recall sync`."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.servers import announced_server

TIMEOUT = 90


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def recall(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=env,
    )


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RECALL_TOKEN", "RECALL_DB", "RECALL_REMOTE")}
    env["RECALL_HOME"] = str(home)
    env.update(extra)
    return env


def team_server(pg_url: str, home: Path) -> AbstractAsyncContextManager[str]:
    return announced_server(
        [sys.executable, "-m", "recall", "serve", "--db", pg_url, "--port", "0"], environment(home)
    )


def make_token(pg_url: str, home: Path, name: str, projects: str) -> str:
    done = recall(
        "serve", "token", "add", name, "--projects", projects, "--db", pg_url, env=environment(home)
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_tokens_are_made_listed_and_revoked_and_stored_hashed(pg_url: str, isolated_home: Path) -> None:
    token = make_token(pg_url, isolated_home, "alice", "shop,infra")
    assert len(token) > 40
    listed = recall("serve", "token", "list", "--db", pg_url, env=environment(isolated_home))
    assert "alice\tshop,infra" in listed.stdout and token not in listed.stdout
    import psycopg

    with psycopg.connect(pg_url) as conn:
        stored = conn.execute("SELECT token_hash FROM team_tokens").fetchone()
    assert stored is not None and token not in stored[0]
    revoked = recall("serve", "token", "revoke", "alice", "--db", pg_url, env=environment(isolated_home))
    assert revoked.returncode == 0 and "revoked 1 token" in revoked.stdout
    missing = recall(
        "serve", "token", "add", "bob", "--projects", " ", "--db", pg_url, env=environment(isolated_home)
    )
    assert missing.returncode != 0 and "--projects" in missing.stderr


@pytest.mark.anyio
async def test_two_machines_share_a_decision_through_recall_serve(
    pg_url: str, isolated_home: Path, tmp_path: Path
) -> None:
    token_a = make_token(pg_url, isolated_home, "alice", "shop")
    token_b = make_token(pg_url, isolated_home, "bob", "shop")
    laptop, desktop = tmp_path / "laptop.db", tmp_path / "desktop.db"
    with anyio.fail_after(TIMEOUT * 2):
        async with team_server(pg_url, isolated_home) as url:
            added = recall(
                "--db", str(laptop), "add", "decision", "Use Stripe for payments", "--project", "shop",
                env=environment(isolated_home),
            )  # fmt: skip
            assert added.returncode == 0, added.stderr
            env_a = environment(isolated_home, RECALL_TOKEN=token_a, RECALL_REMOTE=url)
            pushed = await anyio.to_thread.run_sync(lambda: recall("--db", str(laptop), "sync", env=env_a))
            assert pushed.returncode == 0, pushed.stderr
            env_b = environment(isolated_home, RECALL_TOKEN=token_b)
            pulled = await anyio.to_thread.run_sync(
                lambda: recall("--db", str(desktop), "sync", "--remote", url, "--json", env=env_b)
            )
            assert pulled.returncode == 0, pulled.stderr
            assert '"pulled_added": 1' in pulled.stdout
            brief = recall(
                "--db", str(desktop), "context", "--project", "shop", env=environment(isolated_home)
            )
            assert "Use Stripe for payments" in brief.stdout

            # an agent pointed at the server directly sees it too, and its writes are recorded as its member's
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token_b}"}, timeout=TIMEOUT)
            async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                recalled = await client.call_tool("memory_recall", {"project": "shop"})
                assert not recalled.is_error and "Use Stripe" in str(recalled.structured_content)
                wrote = await client.call_tool(
                    "memory_add",
                    {"type": "learning", "content": "Stripe webhooks retry for 3 days", "project": "shop"},
                )
                assert not wrote.is_error
                other = await client.call_tool(
                    "memory_add", {"type": "learning", "content": "x", "project": "other"}
                )
                assert other.is_error and "not open to this token" in str(other.content)
            async with httpx2.AsyncClient(timeout=TIMEOUT) as anonymous:
                refused = await anonymous.get(f"{url}/sync/pull?since=0")
                assert refused.status_code == 401
                wrong = await anonymous.get(
                    f"{url}/sync/pull?since=0", headers={"Authorization": "Bearer nope"}
                )
                assert wrong.status_code == 401
    import psycopg

    with psycopg.connect(pg_url) as conn:
        authors = dict(
            conn.execute("SELECT kind_code, created_by FROM team_rows WHERE kind_code IN (1, 2)").fetchall()
        )
    assert authors == {1: "alice", 2: "bob"}
