"""The Cursor 3.x / cursor-agent Store stack: ``~/.cursor/chats/<md5(cwd)>/<agentId>/{store.db,meta.json}``.

Ground truth (``shared/ref/transcript-formats.md`` §3.3; fixtures ``built-examples/dot-cursor`` and
``agent-sessions/test-store.db``):

- ``meta.json``: ``{"schemaVersion": 1, "createdAtMs", "updatedAtMs", "hasConversation", "cwd"}``; the
  ACP variant (``acp-sessions/<id>/``) has ``{"cwd", "title"?}``. ``cwd`` is the project (§6.1).
- ``store.db``: ``meta(key TEXT PRIMARY KEY, value TEXT)`` where key ``'0'`` is *hex-encoded* JSON
  ``{"agentId", "latestRootBlobId", "name", "mode", "createdAt", "lastUsedModel"?}``, and
  ``blobs(id TEXT PRIMARY KEY, data BLOB)``, a content-addressed graph (id = sha256 hex).
- A tree blob is protobuf wire format: field 1 (``0x0a 0x20`` + 32 bytes) references a message leaf,
  field 2 (``0x12 0x20`` + 32 bytes) a subtree; frame order is message order. Other fields are
  skipped. A leaf is JSON ``{"role": "system"|"user"|"assistant"|"tool", "content": str | [blocks]}``
  (OpenAI-style ``tool_calls`` also occur).
- No per-message time, tokens or model. A root that points at no blob (the ``test-store.db`` case)
  leaves an empty session.

The message key is the leaf's blob id (§7.1), suffixed ``#<n>`` when the same leaf recurs. Cursor's
own system prompt is the same in every session and is skipped, counted as ``system_prompt``.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters._cursor_messages import HOST, as_str, content_parts, parse_json, time_span, turn_message
from adapters._files import read_side_file
from adapters._jsonl import parse_timestamp
from adapters._sqlite import Unreadable, open_readonly
from adapters.base import ReadOptions
from recall.transcript import ParseReport, Role, Transcript, TranscriptMessage

STORE_TABLES = frozenset({"blobs", "meta"})

_LEAF_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "tool": Role.TOOL}
_CHILD_FIELDS = (1, 2)  # 1 = message leaf, 2 = subtree
_HASH_BYTES = 32


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What the Store stack records about a session besides its messages."""

    cwd: str | None = None
    title: str | None = None
    model: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None


def _session_info(chat_dir: Path, store_meta: dict[str, Any]) -> SessionInfo:
    data = read_side_file(chat_dir / "meta.json")
    try:
        meta = json.loads(data.decode("utf-8")) if data is not None else {}
    except ValueError:
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    return SessionInfo(
        cwd=as_str(meta.get("cwd")),
        title=as_str(store_meta.get("name")) or as_str(meta.get("title")),
        model=as_str(store_meta.get("lastUsedModel")),
        started_at=parse_timestamp(meta.get("createdAtMs")) or parse_timestamp(store_meta.get("createdAt")),
        ended_at=parse_timestamp(meta.get("updatedAtMs")),
    )


def chat_session_info(chat_dir: Path) -> SessionInfo:
    """Session facts for another source (an agent transcript) of the same session; best effort."""
    store_meta: dict[str, Any] = {}
    if (chat_dir / "store.db").is_file():
        try:
            with open_readonly(chat_dir / "store.db") as conn:
                store_meta = _store_meta(conn, ParseReport(), "")  # counted when read as a source itself
        except (Unreadable, sqlite3.Error):
            pass
    return _session_info(chat_dir, store_meta)


def read_store_db(
    conn: sqlite3.Connection, path: Path, options: ReadOptions, report: ParseReport
) -> Iterator[Transcript]:
    where = str(path)
    store_meta = _store_meta(conn, report, where)
    info = _session_info(path.parent, store_meta)
    root = as_str(store_meta.get("latestRootBlobId"))
    messages: list[TranscriptMessage] = []
    seen: Counter[str] = Counter()
    for blob_id, data in _leaves(conn, root, report, where) if root else []:
        report.lines_read += 1
        key = f"{blob_id}#{seen[blob_id]}" if seen[blob_id] else blob_id
        seen[blob_id] += 1
        message = _leaf_message(key, data, options, report, f"{where}: blob {blob_id}")
        if message is not None:
            messages.append(message)
    if not messages:
        report.skip("empty_session", where)
        return
    started, ended = time_span(messages, info.started_at, info.ended_at)
    yield Transcript(
        host=HOST,
        external_id=as_str(store_meta.get("agentId")) or path.parent.name,
        messages=tuple(messages),
        cwd=info.cwd,
        started_at=started,
        ended_at=ended,
        model=info.model,
        title=info.title,
        source_path=str(path),
    )


def _store_meta(conn: sqlite3.Connection, report: ParseReport, where: str) -> dict[str, Any]:
    row = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    if row is None:
        report.skip("unknown_shape", f"{where}: no meta row '0'")
        return {}
    value = row[0]
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError:
            pass  # not hex: read it as the JSON itself
    data = parse_json(value, report, f"{where}: meta")
    if data is not None and not isinstance(data, dict):
        report.skip("unknown_shape", f"{where}: meta is {type(data).__name__}")
    return data if isinstance(data, dict) else {}


def _leaves(conn: sqlite3.Connection, root: str, report: ParseReport, where: str) -> list[tuple[str, bytes]]:
    """Message leaves under ``root`` in conversation order (depth first, frames in order)."""
    leaves: list[tuple[str, bytes]] = []
    on_path: set[str] = set()  # a lying id could close a loop; content addressing never does
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack:
        blob_id, leaving = stack.pop()
        if leaving:
            on_path.discard(blob_id)
            continue
        row = conn.execute("SELECT data FROM blobs WHERE id = ?", (blob_id,)).fetchone()
        data = row[0] if row else None
        data = data.encode() if isinstance(data, str) else data
        if not isinstance(data, bytes):
            report.skip("missing_blob", f"{where}: {blob_id}")
            continue
        if data.lstrip().startswith(b"{"):
            leaves.append((blob_id, data))
            continue
        try:
            children = [p.hex() for f, p in _frames(data) if f in _CHILD_FIELDS and len(p) == _HASH_BYTES]
        except ValueError:
            report.skip("unknown_shape", f"{where}: blob {blob_id} is neither JSON nor a tree")
            continue
        if any(child in on_path for child in children):
            report.skip("unknown_shape", f"{where}: blob {blob_id} refers back to itself")
            continue
        on_path.add(blob_id)
        stack.append((blob_id, True))
        stack.extend((child, False) for child in reversed(children))
    return leaves


def _frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(field number, bytes) of each length-delimited protobuf field; other wire types are skipped."""
    index = 0
    while index < len(data):
        tag, index = _varint(data, index)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            _, index = _varint(data, index)
        elif wire == 2:
            size, index = _varint(data, index)
            if index + size > len(data):
                raise ValueError("truncated field")
            yield field, data[index : index + size]
            index += size
        elif wire in (1, 5):
            index += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    if index != len(data):
        raise ValueError("truncated tree blob")


def _varint(data: bytes, index: int) -> tuple[int, int]:
    value = shift = 0
    while index < len(data):
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index
        shift += 7
    raise ValueError("truncated varint")


def _leaf_message(
    key: str, data: bytes, options: ReadOptions, report: ParseReport, where: str
) -> TranscriptMessage | None:
    leaf = parse_json(data, report, where)
    if leaf is None:
        return None
    role_name = leaf.get("role") if isinstance(leaf, dict) else None
    if role_name == "system":
        report.skip("system_prompt")
        return None
    role = _LEAF_ROLES.get(role_name) if isinstance(role_name, str) else None
    if role is None:
        report.skip("unknown_shape", f"{where}: leaf role {role_name!r}")
        return None
    parts = content_parts(leaf.get("content"), report, where)
    calls = leaf.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.calls.append((as_str(function.get("name")) or "tool", function.get("arguments")))
    return turn_message(key, role, parts, options, report, meta={"blob_id": key.split("#")[0]})
