"""LoCoMo through the MCP tools, as an agent would use recall (``bench/locomo.py --via-mcp``).

All ten conversations go into one database, each its own project: every session is stored with
``memory_dump`` (source ``mcp``, the turns as messages, so each session gets its summary as a dumped
session does), then ``recall.Memory.embed`` embeds the messages the dumps left pending (what
``recall embed`` or the next import's budget does), and every question is asked with
``memory_hybrid_search`` (project = its conversation, ``limit`` 50) through the MCP SDK's client
against the real server, in process. A result's message maps back to its turn by session and
position; a summary takes a slot and names no turn, exactly as an agent receives it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from timing import percentiles

from recall.mcp_server import create_server
from recall.memory import Memory
from recall.search.embedder import Embedder

TOP = 50


def via_mcp(
    conversations: Sequence[Any],
    folder: Path,
    embedder: Embedder,
    summarise: Callable[[Sequence[Any], Sequence[Sequence[str]]], dict[str, dict[str, float]]],
) -> dict[str, Any]:
    """Load, embed and ask through MCP; the metrics of ``locomo.summarise`` for hybrid mode."""
    with Memory(folder / "locomo.db", embedder=embedder) as memory:
        return anyio.run(_run, conversations, memory, summarise)


async def _run(
    conversations: Sequence[Any], memory: Memory, summarise: Callable[..., dict[str, dict[str, float]]]
) -> dict[str, Any]:
    questions = [q for c in conversations for q in c.questions]
    async with Client(create_server(memory)) as client:
        started = time.perf_counter()
        for conv in conversations:
            for transcript in conv.transcripts:
                await _call(client, "memory_dump", title=transcript.title, project=conv.sample_id,
                            session_id=transcript.external_id, source="mcp",
                            messages=[{"role": m.role.value, "content": m.text, "timestamp": m.timestamp.isoformat()}
                                      for m in transcript.messages])  # fmt: skip
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        embedded = memory.embed().embedded
        embed_s = time.perf_counter() - started
        dia_ids = _turns(memory, conversations)
        rankings: list[list[str]] = []
        millis: list[float] = []
        summary_slots: list[int] = []
        for q in questions:
            began = time.perf_counter()
            found = await _call(client, "memory_hybrid_search", query=q.text, project=q.sample_id, limit=TOP)
            millis.append((time.perf_counter() - began) * 1000)
            hits = found["results"]
            summary_slots.append(sum(hit["kind"] == "session_summary" for hit in hits))
            rankings.append([dia_ids[hit["id"]] for hit in hits if hit["kind"] == "message"])
    return {
        "stores": "one database, one project per conversation, loaded with memory_dump (summaries present)",
        "import_s": round(load_s, 2),
        "embed_s": round(embed_s, 2),
        "embedded_per_s": round(embedded / embed_s, 1) if embed_s else 0.0,
        "note": f"summaries in a top {TOP}: mean {statistics.fmean(summary_slots):.2f}, max {max(summary_slots)}",
        "modes": {"hybrid": {"metrics": summarise(questions, rankings), "latency": percentiles(millis)}},
    }


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error or result.structured_content is None:
        raise SystemExit(f"{tool} failed: {result.content}")
    return result.structured_content


def _turns(memory: Memory, conversations: Sequence[Any]) -> dict[int, str]:
    """Message id → dia_id, by the session's external id (conversation/S<n>) and the turn's position."""
    by_session = {
        t.external_id: [m.meta["dia_id"] for m in t.messages] for c in conversations for t in c.transcripts
    }
    with memory.store.reading() as conn:
        rows = conn.execute(
            "SELECT m.id, s.external_id, m.ordinal FROM messages m JOIN sessions s ON s.id = m.session_id"
        ).fetchall()
    return {row_id: by_session[external][ordinal] for row_id, external, ordinal in rows}
