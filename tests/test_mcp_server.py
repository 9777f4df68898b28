"""The MCP server, driven by the SDK's real client: in process for the tools, over stdio against a
spawned `recall mcp` process for the transport (tests/test_mcp_http.py covers Streamable HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from recall.mcp_server import create_server
from recall.memory import Memory
from recall.search.embedder import Embedder, FakeEmbedder

TIMEOUT = 90  # seconds for one spawned server's whole conversation, model load included

WAL = "Use WAL journal mode for the SQLite store"

# The tool surface agents are written against: names, parameters (type = default) and output shapes.
# Changing it is a decision; update this dict in the same change, on purpose.
CONTRACT = MappingProxyType({
    "memory_search": {
        "params": {
            "query": "string", "project": "string? = null", "kind": "string? = null", "table": "string? = null",
            "bias_type": "string? = null", "limit": "integer = 10", "tags": "list[string]? = null",
        },
        "output": {
            "query": "string", "project": "string?", "mode": "keyword|semantic|hybrid",
            "retried_as_hybrid": "boolean", "results": "list[#SearchHit]",
        },
    },
    "memory_hybrid_search": {
        "params": {
            "query": "string", "project": "string? = null", "limit": "integer = 10", "min_score": "number = 0",
            "tags": "list[string]? = null",
        },
        "output": {
            "query": "string", "project": "string?", "mode": "keyword|semantic|hybrid",
            "retried_as_hybrid": "boolean", "results": "list[#SearchHit]",
        },
    },
    "memory_recall": {
        "params": {"project": "string? = null", "limit": "integer = 5"},
        "output": {
            "project": "string?", "profile": "dict[string]", "session_summaries": "list[#BriefEntry]",
            "decisions": "list[#BriefEntry]",
            "breadcrumbs": "list[#BriefEntry]", "learnings": "list[#BriefEntry]",
        },
    },
    "context_for_agent": {
        "params": {"agent_task": "string", "project": "string? = null", "max_tokens": "integer = 1500"},
        "output": {
            "task": "string", "project": "string?", "text": "string", "tokens": "integer",
            "max_tokens": "integer", "sufficiency": "#Sufficiency", "items": "list[#BriefEntry]",
            "omitted": "integer",
        },
    },
    "memory_list": {
        "params": {
            "kind": "list[string]|string? = null", "project": "string? = null", "status": "string? = null",
            "provenance": "string? = null", "tags": "list[string]? = null", "since": "string? = null",
            "limit": "integer = 20", "cursor": "string? = null",
        },
        "output": {"records": "list[#Record]", "next_cursor": "string?"},
    },
    "memory_add": {
        "params": {
            "content": "string",
            "kind": "string? = null",
            "type": "string? = null",
            "detail": "string? = null",
            "project": "string? = null",
            "tags": "list[string]? = null",
            "confidence": "high|medium|low? = null",
            "importance": "integer = 5",
            "valid_until": "string? = null",
            "source": "string? = null",
            "metadata": "object? = null",
            "force": "boolean = false",
        },
        "output": {
            "ref": "string", "kind": "string", "id": "integer", "record": "#Record", "redacted": "dict[integer]",
            "refreshed": "#Likeness? = null",
        },
    },
    "memory_get": {
        "params": {"id": "integer|string", "kind": "string? = null", "table": "string? = null"},
        "output": {"found": "boolean", "ref": "string", "kind": "string", "id": "integer", "record": "#Record?"},
    },
    "memory_update": {
        "params": {
            "id": "integer|string",
            "kind": "string? = null",
            "table": "string? = null",
            "content": "string? = null",
            "detail": "string? = null",
            "tags": "list[string]? = null",
            "importance": "integer? = null",
            "valid_until": 'string? = ""',
            "source": "string? = null",
            "metadata": "object? = null",
            "project": "string? = null",
        },
        "output": {"found": "boolean", "ref": "string", "kind": "string", "id": "integer", "record": "#Record?"},
    },
    "memory_forget": {
        "params": {
            "id": "integer|string", "kind": "string? = null", "table": "string? = null", "project": "string? = null",
        },
        "output": {
            "found": "boolean", "ref": "string", "kind": "string", "id": "integer", "deleted": "dict[integer]",
            "skipped_on_import": "integer", "source_path": "string?",
        },
    },
    "memory_forget_many": {
        "params": {
            "tags": "list[string]? = null", "older_than_days": "number? = null", "project": "string? = null",
            "confirm": "integer? = null",
        },
        "output": {
            "matched": "integer", "confirmed": "boolean", "deleted": "dict[integer]", "total": "integer",
            "sample": "list[#ForgetMatch]",
        },
    },
    "decision_update": {
        "params": {
            "id": "integer|string", "action": "supersede|revert", "superseded_by": "integer|string? = null",
            "project": "string? = null",
        },
        "output": {
            "found": "boolean", "ref": "string", "id": "integer", "action": "supersede|revert", "record": "#Record?",
        },
    },
    "memory_dump": {
        "params": {
            "title": "string",
            "project": "string? = null",
            "session_id": "string? = null",
            "source": 'claude|cursor|codex|opencode|pi|gemini|grok|jcode|omp|mcp = "mcp"',
            "messages": "list[#DumpMessage]? = null",
        },
        "output": {
            "session_id": "integer", "external_id": "string", "project": "string", "summary_id": "integer",
            "summary_ref": "string", "messages_added": "integer", "sessions": "integer",
            "redactions": "dict[integer]", "skipped": "dict[integer]",
        },
    },
    "loa_show": {
        "params": {"id": "integer|string"},
        "output": {"found": "boolean", "ref": "string", "id": "integer", "summary": "#Record?", "session": "#Record?"},
    },
    "memory_review": {
        "params": {
            "action": 'list|accept|reject = "list"', "records": "list[string]? = null", "project": "string? = null",
            "limit": "integer = 20",
        },
        "output": {
            "action": "list|accept|reject", "project": "string?", "records": "list[#ReviewEntry]",
            "done": "list[string]",
        },
    },
    "memory_stats": {
        "params": {},
        "output": {
            "database": "string", "size_bytes": "integer", "schema_version": "integer", "schema_latest": "integer",
            "counts": "dict[integer]", "projects": "dict[dict[integer]]", "decisions_by_status": "dict[integer]",
            "breadcrumbs_expired": "integer", "entities": "dict[integer]", "sessions_unconnected": "integer",
            "embeddings": "#EmbeddingStats", "keyword_index": "#KeywordIndex",
        },
    },
    "profile_get": {
        "params": {"project": "string? = null"},
        "output": {"project": "string", "profile": "dict[string]", "updated_at": "string?", "redacted": "dict[integer]"},
    },
    "profile_set": {
        "params": {"key": "string", "value": "string?", "project": "string? = null"},
        "output": {"project": "string", "profile": "dict[string]", "updated_at": "string?", "redacted": "dict[integer]"},
    },
    "find_connections": {
        "params": {"entity": "string", "project": "string? = null", "limit": "integer = 10"},
        "output": {
            "query": "string", "project": "string?", "entities": "list[#EntityOut]",
            "decisions": "list[#LinkedRecord]", "learnings": "list[#LinkedRecord]",
            "breadcrumbs": "list[#LinkedRecord]", "sessions": "list[#SessionTouchOut]",
            "related": "list[#RelatedOut]",
        },
    },
    "get_knowledge_graph": {
        "params": {
            "project": "string? = null", "limit": "integer = 100", "offset": "integer = 0",
            "types": "list[file|symbol|package|command|error|host|url]? = null",
        },
        "output": {
            "project": "string", "nodes": "list[object]", "edges": "list[object]", "total_entities": "integer",
            "offset": "integer", "next_offset": "integer?", "truncated_edges": "boolean", "types": "list[string]",
        },
    },
    "note_write": {
        "params": {"path": "string", "content": "string", "project": "string? = null"},
        "output": {"found": "boolean", "path": "string", "note": "#Note?"},
    },
    "note_read": {
        "params": {"path": "string", "project": "string? = null"},
        "output": {"found": "boolean", "path": "string", "note": "#Note?"},
    },
    "note_edit": {
        "params": {
            "path": "string", "mode": "replace|append|prepend|str_replace", "content": "string? = null",
            "old": "string? = null", "new": "string? = null", "project": "string? = null",
        },
        "output": {"found": "boolean", "path": "string", "note": "#Note?"},
    },
    "note_list": {
        "params": {"folder": "string? = null", "project": "string? = null"},
        "output": {"project": "string?", "folder": "string", "notes": "list[#Note]"},
    },
    "note_delete": {
        "params": {"path": "string", "project": "string? = null"},
        "output": {"found": "boolean", "path": "string", "ref": "string?"},
    },
    "memory_dedup": {
        "params": {"project": "string? = null", "dry_run": "boolean = true"},
        "output": {
            "project": "string?", "dry_run": "boolean", "merged": "integer", "model": "boolean",
            "groups": "list[#MergeGroupOut]",
        },
    },
    "memory_export": {
        "params": {
            "project": "string? = null", "kinds": "list[decision|learning|breadcrumb|note]? = null",
            "limit": "integer = 1000",
        },
        "output": {"project": "string?", "count": "integer", "records": "list[object]"},
    },
    "memory_import": {
        "params": {"records": "list[object]", "project": "string? = null"},
        "output": {
            "added": "dict[integer]", "already_there": "integer", "supersession_links": "integer",
            "unlinked": "integer", "refused": "integer", "problems": "list[string]",
        },
    },
})  # fmt: skip

SHAPES = MappingProxyType({
    "SearchHit": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "created_at": "string",
        "provenance": "string", "score": "number", "preview": "string", "keyword_rank": "integer?",
        "cosine": "number?", "extra": "object",
    },
    "BriefEntry": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "created_at": "string",
        "provenance": "string", "trusted": "boolean", "content": "string", "detail": "string?", "title": "string?",
        "importance": "integer?", "status": "string?", "confidence": "string?", "valid_until": "string?",
        "score": "number?", "cosine": "number?", "session": "string?", "conflicts_with": "list[integer]",
    },
    "ReviewEntry": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "content": "string",
        "detail": "string?", "rule": "string", "rule_version": "integer", "confidence": "number",
        "session_id": "integer?", "session_title": "string?", "host": "string?", "created_at": "string",
        "sources": "list[#ReviewSource]",
    },
    "ReviewSource": {
        "message_id": "integer", "role": "string", "origin": "string", "kind": "string", "tool_name": "string?",
        "timestamp": "string?", "excerpt": "string",
    },
    "Sufficiency": {
        "verdict": "sufficient|partial|insufficient", "best_cosine": "number", "coverage": "number",
        "task_terms": "integer", "matched_terms": "integer", "records": "integer", "line": "string",
    },
    "Record": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "created_at": "string",
        "updated_at": "string", "provenance": "string",
    },
    "Likeness": {"overlap": "number", "cosine": "number? = null", "numbers_differ": "boolean"},
    "MergeGroupOut": {"kind": "string", "project": "string", "keep": "string", "merged": "list[#MergedRecord]"},
    "MergedRecord": {"ref": "string", "overlap": "number", "cosine": "number?", "numbers_differ": "boolean"},
    "Note": {
        "ref": "string", "id": "integer", "project": "string", "path": "string", "title": "string",
        "created_at": "string", "updated_at": "string", "provenance": "string", "content": "string? = null",
        "frontmatter": "object (optional)", "chars": "integer? = null",
    },
    "DumpMessage": {"role": "user|assistant|system|tool", "content": "string", "timestamp": "string? = null"},
    "EmbeddingStats": {
        "model": "string? = null", "model_hash": "string? = null", "embedded": "dict[integer] (optional)",
        "pending": "dict[integer] (optional)", "not_embedded": "dict[integer] (optional)", "error": "string? = null",
    },
    "KeywordIndex": {"rows": "integer", "indexed": "integer", "complete": "boolean"},
    "EntityOut": {"id": "integer", "project": "string", "type": "string", "name": "string"},
    "LinkedRecord": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "created_at": "string",
        "provenance": "string", "content": "string", "detail": "string?", "status": "string?",
        "importance": "integer?",
    },
    "RelatedOut": {"entity": "#EntityOut", "how": "string", "count": "integer"},
    "SessionTouchOut": {
        "ref": "string", "session_id": "integer", "project": "string", "host": "string", "title": "string?",
        "started_at": "string?", "last_at": "string", "did": "dict[integer]", "summary_id": "integer?",
    },
    "ForgetMatch": {
        "ref": "string", "kind": "string", "id": "integer", "project": "string", "created_at": "string",
        "preview": "string",
    },
})  # fmt: skip

READ_ONLY = {
    "memory_search", "memory_hybrid_search", "memory_recall", "context_for_agent", "memory_list", "memory_get",
    "loa_show", "memory_stats", "find_connections", "get_knowledge_graph", "profile_get", "note_read", "note_list",
    "memory_export",
}  # fmt: skip
DESTRUCTIVE = {
    "memory_update", "memory_forget", "memory_forget_many", "memory_review", "profile_set", "note_write", "note_edit",
    "note_delete", "memory_dedup",
}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The server's working directory: outside git, so its project is this folder's name."""
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@asynccontextmanager
async def connected(db_path: Path, embedder: Embedder) -> AsyncIterator[Client]:
    """The real server and the SDK's client in one process: the server's project is "shop"."""
    with Memory(db_path, project="shop", embedder=embedder) as memory:
        async with Client(create_server(memory)) as client:
            yield client


@asynccontextmanager
async def spawned(db_path: Path, home: Path, cwd: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recall", "--db", str(db_path), "mcp"],
        env={"RECALL_HOME": str(home)},
        cwd=cwd,
    )
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; return its structured content after checking the readable text."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert text_of(result).strip()
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def shape(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return "#" + schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        kinds = [shape(option) for option in schema["anyOf"] if option.get("type") != "null"]
        return "|".join(kinds) + ("?" if len(kinds) < len(schema["anyOf"]) else "")
    if "enum" in schema:
        return "|".join(schema["enum"])
    if schema.get("type") == "array":
        return f"list[{shape(schema['items'])}]"
    if schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"dict[{shape(schema['additionalProperties'])}]"
    return schema["type"]


def fields(schema: dict[str, Any]) -> dict[str, str]:
    required = set(schema.get("required", []))
    out = {}
    for name, prop in schema.get("properties", {}).items():
        text = shape(prop)
        if name not in required:
            text += f" = {json.dumps(prop['default'])}" if "default" in prop else " (optional)"
        out[name] = text
    return out


@pytest.mark.anyio
async def test_the_tool_surface_matches_the_contract(db_path: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, FakeEmbedder()) as client:
            tools = (await client.list_tools()).tools

    surface = {
        tool.name: {"params": fields(tool.input_schema), "output": fields(tool.output_schema or {})}
        for tool in tools
    }
    assert surface == CONTRACT
    shapes: dict[str, dict[str, str]] = {}
    for tool in tools:
        for schema in (tool.input_schema, tool.output_schema or {}):
            shapes.update({name: fields(d) for name, d in schema.get("$defs", {}).items()})
    assert shapes == SHAPES
    for tool in tools:
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, tool.name
        assert bool(hints.read_only_hint) is (tool.name in READ_ONLY), tool.name
        assert bool(hints.destructive_hint) is (tool.name in DESTRUCTIVE), tool.name
        others = [name for name in CONTRACT if name != tool.name and name in (tool.description or "")]
        assert others, f"{tool.name}'s description should say which tool to use instead, when"
        assert tool.input_schema.get("additionalProperties") is False, tool.name
    assert not db_path.exists(), "listing tools must not open the database"


@pytest.mark.anyio
async def test_records_are_added_read_corrected_and_forgotten(db_path: Path, minilm: Embedder) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, minilm) as client:
            added = await call(
                client,
                "memory_add",
                type="decision",
                content=WAL,
                detail="readers never block",
                tags=["DB", "db ", "Ops"],
                confidence="high",
                importance=8,
            )
            record = added["record"]
            assert added["kind"] == "decision" and record["project"] == "shop"  # the server's own project
            assert record["provenance"] == "user_authored" and record["tags"] == ["db", "ops"]

            got = await call(client, "memory_get", table="decision", id=added["id"])
            assert got["found"] is True and got["record"]["detail"] == "readers never block"

            fixed = await call(
                client,
                "memory_update",
                table="decision",
                id=added["id"],
                content="Use WAL mode; checkpoint hourly",
            )
            assert fixed["found"] is True and fixed["record"]["content"] == "Use WAL mode; checkpoint hourly"
            assert fixed["record"]["created_at"] == record["created_at"]
            assert fixed["record"]["updated_at"] > record["updated_at"]
            found = await call(client, "memory_search", query="checkpoint hourly")
            assert [hit["id"] for hit in found["results"]] == [added["id"]]

            for tool, args in [
                ("memory_get", {"table": "learning"}),
                ("memory_update", {"table": "learning", "content": "x"}),
                ("memory_forget", {"table": "breadcrumb"}),
            ]:
                missing = await client.call_tool(tool, {**args, "id": 404})
                assert not missing.is_error and missing.structured_content["found"] is False, tool
                assert "found: false" in text_of(missing)

            assert (await call(client, "memory_forget", table="decision", id=added["id"]))["found"] is True
            assert (await call(client, "memory_get", table="decision", id=added["id"]))["found"] is False

            await call(client, "memory_add", type="learning", content="temporary note", tags=["scratch"])
            await call(
                client,
                "memory_add",
                type="breadcrumb",
                content="also temporary",
                tags=["scratch"],
                valid_until="2d",
            )
            await call(client, "memory_add", type="learning", content="keep me")
            assert "give tags" in await refused(client, "memory_forget_many")
            counted = await call(client, "memory_forget_many", tags=["scratch"])
            assert (counted["matched"], counted["total"], len(counted["sample"])) == (2, 0, 2)
            gone = await call(client, "memory_forget_many", tags=["scratch"], confirm=2)
            assert gone["deleted"] == {"decision": 0, "learning": 1, "breadcrumb": 1} and gone["total"] == 2

            assert "cannot read the time" in await refused(
                client, "memory_add", type="decision", content="x", valid_until="someday"
            )
            assert "importance" in await refused(
                client, "memory_add", type="learning", content="x", importance=11
            )
            assert "must not be empty" in await refused(client, "memory_add", type="learning", content="   ")
            assert "nothing to change" in await refused(client, "memory_update", table="learning", id=1)


@pytest.mark.anyio
async def test_search_recall_and_context_answer_through_the_server(db_path: Path, minilm: Embedder) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, minilm) as client:
            decision = (
                await call(
                    client,
                    "memory_add",
                    type="decision",
                    content=WAL,
                    detail="readers never block the writer",
                )
            )["id"]
            await call(client, "memory_add", type="decision", content="Ship the command line with click")
            await call(
                client,
                "memory_add",
                type="learning",
                content="The SQLite WAL file grows until a checkpoint",
                importance=9,
            )
            await call(
                client, "memory_add", type="breadcrumb", content="Halfway through the WAL checkpoint test"
            )
            await call(
                client,
                "memory_add",
                type="learning",
                content="SQLite WAL in another repository",
                project="other",
            )

            found = await call(client, "memory_search", query="WAL", table="decision")
            assert found["mode"] == "keyword" and [hit["id"] for hit in found["results"]] == [decision]
            everywhere = await call(client, "memory_search", query="WAL", project="*")
            assert {hit["project"] for hit in everywhere["results"]} == {"shop", "other"}
            biased = await call(client, "memory_search", query="WAL checkpoint", bias_type="breadcrumb")
            assert biased["results"][0]["kind"] == "breadcrumb"

            retried = await call(client, "memory_search", query="crash resilience")
            assert retried["retried_as_hybrid"] is True and retried["mode"] == "hybrid"
            assert (await call(client, "memory_search", query="crash resilience", table="learning"))[
                "results"
            ] == []

            hybrid = await call(
                client, "memory_hybrid_search", query="how do readers and the writer share the database?"
            )
            scores = [hit["score"] for hit in hybrid["results"]]
            assert (
                len(scores) > 1
                and scores == sorted(scores, reverse=True)
                and 0 <= scores[-1] <= scores[0] <= 1
            )
            assert hybrid["results"][0]["id"] == decision and hybrid["results"][0]["kind"] == "decision"
            strong = await call(
                client,
                "memory_hybrid_search",
                query="how do readers and the writer share the database?",
                min_score=0.5,
            )
            assert 0 < len(strong["results"]) < len(scores)
            assert all(hit["score"] >= 0.5 for hit in strong["results"])

            recalled = await call(client, "memory_recall")
            assert recalled["project"] == "shop"
            assert [entry["content"] for entry in recalled["learnings"]] == [
                "The SQLite WAL file grows until a checkpoint"
            ]
            assert len(recalled["decisions"]) == 2 and len(recalled["breadcrumbs"]) == 1

            result = await client.call_tool(
                "context_for_agent",
                {"agent_task": "Fix the flaky WAL test of the SQLite store", "max_tokens": 300},
            )
            brief = result.structured_content
            assert not result.is_error and brief is not None
            assert (brief["items"][0]["kind"], brief["items"][0]["id"]) == ("decision", decision)
            assert brief["tokens"] <= 300 and text_of(result) == brief["text"]
            assert brief["sufficiency"]["line"] in brief["text"]
            assert "max_tokens" in await refused(client, "context_for_agent", agent_task="x", max_tokens=50)


@pytest.mark.anyio
async def test_decisions_dumps_summaries_and_stats_answer_through_the_server(
    db_path: Path, minilm: Embedder
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, minilm) as client:
            old = (await call(client, "memory_add", type="decision", content="Use tabs"))["id"]
            new = (await call(client, "memory_add", type="decision", content="Use spaces"))["id"]

            superseded = await call(client, "decision_update", id=old, action="supersede", superseded_by=new)
            assert superseded["found"] is True and superseded["record"]["status"] == "superseded"
            assert superseded["record"]["superseded_by"] == new
            assert "only active decisions" in await refused(
                client, "decision_update", id=old, action="revert"
            )
            assert "successor" in await refused(
                client, "decision_update", id=new, action="revert", superseded_by=old
            )
            missing = await call(client, "decision_update", id=404, action="revert")
            assert missing == {
                "found": False,
                "ref": "decision#404",
                "id": 404,
                "action": "revert",
                "record": None,
            }
            assert (await call(client, "decision_update", id=new, action="revert"))["record"][
                "status"
            ] == "reverted"

            messages = [
                {"role": "user", "content": "The checkout test is flaky"},
                {
                    "role": "assistant",
                    "content": "Root cause: an expiring token. We decided to mint one per test.",
                },
            ]
            dumped = await call(
                client, "memory_dump", title="flaky checkout", session_id="s-1", messages=messages
            )
            assert dumped["messages_added"] == 2 and dumped["project"] == "shop"
            again = await call(
                client, "memory_dump", title="flaky checkout", session_id="s-1", messages=messages
            )
            assert again["messages_added"] == 0 and again["summary_id"] == dumped["summary_id"]
            assert "messages" in await refused(client, "memory_dump", title="nothing to store")

            shown = await client.call_tool("loa_show", {"id": dumped["summary_id"]})
            summary = shown.structured_content
            assert summary is not None and summary["found"] is True
            assert summary["summary"]["provenance"] == "derived" and summary["session"]["message_count"] == 2
            assert "  > " in text_of(shown) and "treat as data" in text_of(shown)
            assert (await call(client, "loa_show", id=404))["found"] is False
            session = await call(client, "memory_get", table="session", id=dumped["session_id"])
            assert session["record"]["host"] == "mcp"

            stats = await call(client, "memory_stats")
            # Two added by hand, one extracted from the dump ("We decided to mint one per test.").
            assert stats["counts"]["decision"] == 3 and stats["counts"]["message"] == 2
            assert stats["decisions_by_status"] == {"superseded": 1, "reverted": 1, "active": 1}
            assert stats["keyword_index"]["complete"] is True
            assert stats["database"] == str(db_path)

            # Hosts recall has no reader for dump their messages and are stored as themselves;
            # hosts it reads take no messages, and a reader-less host without messages is refused.
            grok = await call(
                client, "memory_dump", title="grok run", source="grok", session_id="g-1", messages=messages
            )
            session = await call(client, "memory_get", table="session", id=grok["session_id"])
            assert grok["messages_added"] == 2 and session["record"]["host"] == "grok"
            assert "no omp reader" in await refused(client, "memory_dump", title="t", source="omp")
            assert "explicit messages need --source mcp" in await refused(
                client, "memory_dump", title="t", source="gemini", messages=messages
            )


@pytest.mark.anyio
async def test_forget_takes_every_kind_and_bulk_deletes_wait_for_a_confirmed_count(
    db_path: Path, minilm: Embedder
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, minilm) as client:
            messages = [
                {"role": "user", "content": "rotate the staging keys"},
                {"role": "assistant", "content": "ok"},
            ]
            dumped = await call(client, "memory_dump", title="keys", session_id="s-9", messages=messages)
            gone = await call(client, "memory_forget", kind="session", id=dumped["session_id"])
            assert (
                gone["found"] is True and gone["deleted"]["message"] == 2 and gone["skipped_on_import"] == 1
            )
            assert "was forgotten" in await refused(
                client, "memory_dump", title="keys", session_id="s-9", messages=messages
            )
            assert "name the same thing" in await refused(
                client, "memory_forget", kind="session", table="decision", id=1
            )

            for n in range(3):
                await call(client, "memory_add", type="learning", content=f"note {n}", tags=["tmp", "ci"])
            await call(client, "memory_add", type="learning", content="only one tag", tags=["tmp"])
            await call(
                client, "memory_add", type="learning", content="elsewhere", tags=["tmp", "ci"], project="q"
            )
            assert "greater than or equal to 1" in await refused(
                client, "memory_forget_many", older_than_days=0, project="*", confirm=5
            )
            here = await call(client, "memory_forget_many", tags=["tmp", "ci"])
            assert (here["matched"], here["total"], here["confirmed"]) == (3, 0, False)
            everywhere = await call(client, "memory_forget_many", tags=["tmp", "ci"], project="*", confirm=4)
            assert everywhere["total"] == 4 and everywhere["confirmed"] is True
            left = await call(client, "memory_search", query="tag", project="*")
            assert [hit["preview"] for hit in left["results"]] == ["only one tag"]


def test_starting_the_server_loads_no_database_layer_or_model(tmp_path: Path) -> None:
    db = tmp_path / "lazy.db"
    code = (
        "import sys\n"
        "from recall.cli import cli\n"
        "from recall import Memory\n"
        "from recall.mcp_server import create_server\n"
        f"create_server(Memory({str(db)!r}))\n"
        "heavy = {'sqlalchemy', 'sqlmodel', 'numpy', 'onnxruntime', 'tokenizers', 'detect_secrets'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert not db.exists()


@pytest.mark.anyio
async def test_the_stdio_server_answers_a_real_client_and_opens_the_database_on_first_use(
    db_path: Path, isolated_home: Path, workdir: Path
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with spawned(db_path, isolated_home, workdir) as client:
            assert len((await client.list_tools()).tools) == len(CONTRACT)
            assert not db_path.exists(), "listing tools must not open the database"
            added = await call(client, "memory_add", kind="decision", content=WAL)
            assert added["ref"] == "decision#1" and added["record"]["project"] == "shop"  # its folder's name
            found = await call(client, "memory_search", query="journal mode")
            assert [hit["ref"] for hit in found["results"]] == ["decision#1"]


@pytest.mark.anyio
async def test_an_unknown_argument_is_refused_with_the_accepted_ones(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        text = await refused(client, "memory_search", query="wal", all_projects=True)
        assert text == (
            "memory_search does not take all_projects; it accepts: bias_type, kind, limit, project, query, table, "
            "tags"
        )
        assert "take colour" in await refused(
            client, "memory_add", kind="learning", content="x", colour="red"
        )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "memory_add",
            {"kind": "learning", "content": "x", "importance": 11},
            "memory_add: importance should be",
        ),
        ("memory_add", {"kind": "learning"}, "memory_add: content is required"),
        ("memory_search", {"query": "x", "limit": "lots"}, "memory_search: limit should be a valid integer"),
        ("memory_get", {"id": 3}, "memory_get: id 3 needs its kind"),
        ("memory_get", {"id": 1, "kind": "tables"}, "memory_get: unknown kind 'tables'; use one of"),
    ],
    ids=["out-of-range", "missing", "wrong-type", "bare-id", "bad-kind"],
)
async def test_a_bad_call_gets_one_sentence_that_names_the_argument(
    db_path: Path, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        text = await refused(client, tool, **arguments)
    assert text.startswith(expected), text
    assert "\n" not in text and "http" not in text and "pydantic" not in text


@pytest.mark.anyio
async def test_kind_is_the_word_and_the_recall_shape_names_and_refs_still_work(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        by_type = await call(client, "memory_add", type="decision", content="Use WAL")
        by_kind = await call(client, "memory_add", kind="learning", content="WAL grows until a checkpoint")
        assert (by_type["ref"], by_kind["ref"]) == ("decision#1", "learning#1")
        assert "name the same thing" in await refused(
            client, "memory_add", kind="decision", type="learning", content="x"
        )
        for arguments in (
            {"table": "decisions", "id": 1},
            {"kind": "decision", "id": "1"},
            {"id": "decision#1"},
        ):
            assert (await call(client, "memory_get", **arguments))["record"]["content"] == "Use WAL", (
                arguments
            )
        hits = (await call(client, "memory_search", query="wal", table="learnings"))["results"]
        assert [hit["ref"] for hit in hits] == ["learning#1"]
        dumped = await call(
            client, "memory_dump", title="t", messages=[{"role": "user", "content": "hello there"}]
        )
        summary = await call(client, "memory_get", table="loa", id=dumped["summary_id"])
        assert summary["ref"] == dumped["summary_ref"] and summary["record"]["provenance"] == "derived"
        assert (await call(client, "loa_show", id=dumped["summary_ref"]))["found"] is True
        fixed = await call(client, "memory_update", id="learning#1", importance=9)
        assert fixed["record"]["importance"] == 9
        changed = await call(client, "decision_update", id="decision#1", action="revert")
        assert changed["record"]["status"] == "reverted"
        assert (await call(client, "memory_forget", id="learning#1"))["found"] is True


@pytest.mark.anyio
async def test_memory_list_filters_and_pages_with_a_cursor(db_path: Path) -> None:
    async with connected(db_path, FakeEmbedder()) as client:
        for n in range(5):
            await call(
                client,
                "memory_add",
                kind="learning",
                content=f"note {n}",
                tags=["ci"] if n % 2 else ["ci", "x"],
            )
        await call(client, "memory_add", kind="decision", content="elsewhere", project="other")
        page = await call(client, "memory_list", kind="learning", tags=["ci", "x"])
        assert [row["ref"] for row in page["records"]] == ["learning#5", "learning#3", "learning#1"]
        seen: list[str] = []
        cursor = None
        while True:
            page = await call(client, "memory_list", limit=2, cursor=cursor)
            seen += [row["ref"] for row in page["records"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == [f"learning#{n}" for n in range(5, 0, -1)]
        everything = await call(client, "memory_list", project="*", kind=["decision"])
        assert [row["project"] for row in everything["records"]] == ["other"]


@pytest.mark.anyio
async def test_extracted_memory_is_reviewed_through_the_server(
    db_path: Path,
) -> None:
    messages = [
        {"role": "user", "content": "Never commit the generated protobuf files."},
        {"role": "assistant", "content": "Understood, they stay out of git."},
    ]
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, FakeEmbedder()) as client:
            await call(client, "memory_dump", title="protobuf", session_id="s-2", messages=messages)

            listed = await call(client, "memory_review")
            [entry] = listed["records"]
            record = await call(client, "memory_get", table="decision", id=entry["id"])
            rejected = await call(client, "memory_review", action="reject", records=[entry["ref"]])
            await call(client, "memory_dump", title="protobuf", session_id="s-3", messages=messages)
            after = await call(client, "memory_review")
            refusal = await refused(client, "memory_review", action="accept")

    assert entry["content"] == "Never commit the generated protobuf files." and entry["rule"] == "user_rule"
    assert entry["sources"][0]["excerpt"] == "Never commit the generated protobuf files."
    assert record["record"]["provenance"] == "extracted"
    assert record["record"]["sources"] == [entry["sources"][0]["message_id"]]
    assert rejected["done"] == [entry["ref"]]
    assert after["records"] == []  # a second session saying it again does not bring it back
    assert "name the records" in refusal


@pytest.mark.anyio
async def test_connections_and_the_graph_answer_through_the_server(
    db_path: Path,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connected(db_path, FakeEmbedder()) as client:
            messages = [
                {"role": "user", "content": "Why does src/billing/invoice.py fail?"},
                {
                    "role": "assistant",
                    "content": "It reads the tax table before src/billing/tax.py loads it.",
                },
            ]
            dumped = await call(client, "memory_dump", title="billing", session_id="s-9", messages=messages)
            decision = await call(
                client, "memory_add", type="decision", content="src/billing/invoice.py keeps amounts in cents"
            )

            found = await call(client, "find_connections", entity="invoice.py")
            assert [e["name"] for e in found["entities"]] == ["src/billing/invoice.py"]
            assert [d["id"] for d in found["decisions"]] == [decision["id"]]
            assert found["sessions"][0]["session_id"] == dumped["session_id"]
            assert found["sessions"][0]["did"] == {"mentions": 1}
            none = await client.call_tool("find_connections", {"entity": "nothing.py"})
            assert not none.is_error and none.structured_content is not None
            assert none.structured_content["entities"] == [] and "no file" in text_of(none)

            graph = await call(client, "get_knowledge_graph", limit=1)
            assert graph["total_entities"] == 2 and graph["next_offset"] == 1
            assert {n["kind"] for n in graph["nodes"]} >= {"entity", "session"}
            rest = await call(client, "get_knowledge_graph", limit=1, offset=1)
            assert rest["next_offset"] is None
            assert "one project" in await refused(client, "get_knowledge_graph", project="*")

            got = await call(client, "memory_get", table="session", id=dumped["session_id"])
            assert {e["name"] for e in got["record"]["entities"]} == {
                "src/billing/invoice.py",
                "src/billing/tax.py",
            }
            stats = await call(client, "memory_stats")
            assert stats["entities"]["file"] == 2
