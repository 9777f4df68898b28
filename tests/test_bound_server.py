"""A server bound to a project (`recall mcp --project P` or RECALL_PROJECT) refuses to update,
supersede, review or forget another project's rows unless the call says project '*' (TinyMem's
namespace guard); reading and adding are not guarded."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from recall.mcp_server import create_server
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from tests.test_mcp_server import TIMEOUT, call, connected, refused


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def bound(db_path: Path) -> AsyncIterator[Client]:
    with Memory(db_path, embedder=FakeEmbedder()).bind("shop") as memory:
        async with Client(create_server(memory)) as client:
            yield client


@pytest.mark.anyio
async def test_a_bound_server_changes_only_its_own_project_unless_told_star(db_path: Path) -> None:
    async with bound(db_path) as client:
        ours = (await call(client, "memory_add", kind="decision", content="Ship on Tuesdays"))["ref"]
        theirs = (
            await call(client, "memory_add", kind="decision", content="Ship on Fridays", project="blog")
        )["ref"]
        extra = (
            await call(client, "memory_add", kind="learning", content="blog cache is 1h", project="blog")
        )["ref"]

        assert (await call(client, "memory_update", id=ours, importance=8))["found"]
        message = await refused(client, "memory_update", id=theirs, importance=8)
        assert "belongs to project blog" in message and "bound to project shop" in message
        assert "project='*'" in message
        assert "bound to project shop" in await refused(client, "memory_forget", id=theirs)
        assert "bound to project shop" in await refused(client, "decision_update", id=theirs, action="revert")
        assert "bound to project shop" in await refused(
            client, "memory_forget_many", tags=["x"], project="blog"
        )
        assert "belongs to project blog, not shop" in await refused(
            client, "memory_update", id=theirs, importance=8, project="shop"
        )
        got = await call(client, "memory_get", id=theirs)  # reading is not guarded
        assert got["record"]["importance"] == 5

        assert (await call(client, "memory_update", id=theirs, importance=8, project="*"))["record"][
            "importance"
        ] == 8
        assert (await call(client, "decision_update", id=theirs, action="revert", project="*"))["found"]
        counted = await call(client, "memory_forget_many", older_than_days=1, project="*")
        assert counted["matched"] == 0
        assert (await call(client, "memory_forget", id=extra, project="*"))["found"]
        assert (await call(client, "memory_forget", id=ours))["found"]


@pytest.mark.anyio
async def test_an_unbound_server_still_changes_any_row_but_checks_a_named_project(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        theirs = (await call(client, "memory_add", kind="learning", content="x", project="blog"))["ref"]
        assert (await call(client, "memory_update", id=theirs, importance=3))["record"]["importance"] == 3
        assert "belongs to project blog, not shop" in await refused(
            client, "memory_forget", id=theirs, project="shop"
        )
        assert (await call(client, "memory_forget", id=theirs, project="blog"))["found"]


@pytest.mark.anyio
async def test_recall_project_binds_a_spawned_stdio_server(db_path: Path, tmp_path: Path) -> None:
    with Memory(db_path, embedder=FakeEmbedder()) as memory:
        memory.add("decision", "Ship on Fridays", project="blog")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recall", "--db", str(db_path), "mcp"],
        env={"RECALL_HOME": str(tmp_path / "home"), "RECALL_PROJECT": "shop"},
        cwd=tmp_path,
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            assert "bound to project shop" in await refused(client, "memory_forget", id="decision#1")
    flagged = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recall", "--db", str(db_path), "mcp", "--project", "shop"],
        env={"RECALL_HOME": str(tmp_path / "home")},
        cwd=tmp_path,
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(flagged) as client:
            assert "bound to project shop" in await refused(
                client, "memory_update", id="decision#1", importance=2
            )
            assert (await call(client, "memory_forget", id="decision#1", project="*"))["found"]
