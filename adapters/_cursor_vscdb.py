"""Cursor IDE chats in ``state.vscdb``: the chat panel, inline composers and split composers.

Ground truth (``shared/ref/transcript-formats.md`` §3.2–3.5 and the fixtures under
``tests/fixtures/transcripts/cursor/``):

- ``ItemTable`` and ``cursorDiskKV`` are ``(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``; values
  are UTF-8 JSON, except those that are NULL or not JSON at all.
- Era A, chat panel (≤ 2024), workspace ``ItemTable['workbench.panel.aichat.view.aichat.chatdata']``:
  ``{"tabs": [{"tabId", "chatTitle", "lastSendTime", "bubbles": [{"type": "user"|"ai", "id", "text" |
  "rawText" | "delegate": {"a"} | "initText" (Lexical JSON), "image", "modelType"}]}]}``. Some builds
  write ``chatSessions``/``messages``, ``id``/``title``, ``role``/``content``, ``timestamp``.
- Era B, inline composer (late 2024): the conversation sits inside the composer record, as
  ``composerData:<id>.conversation[]`` in the global ``cursorDiskKV`` or, in the oldest builds, as
  ``allComposers[].conversation`` in the workspace ``ItemTable['composer.composerData']``. That key
  otherwise lists only heads (``composerId``, ``name``) whose content is in the global database.
- Era C, split composer (2025+): global ``composerData:<id>`` keeps the order in
  ``fullConversationHeadersOnly`` (optionally with bubbles inline in ``conversationMap``); each message
  is a ``bubbleId:<id>:<bubbleId>`` row. Rows no header lists are orphans (edits, regenerations): they
  are dropped and counted. A row's JSON ``bubbleId`` can differ from its key or be empty; an empty id
  becomes ``msg:<index in the conversation>``.
- Bubble ``type`` 1 = user, 2 = assistant. Bubble time is ``createdAt`` (ISO, from ~2025-09), else
  ``timingInfo.clientStartTime`` or ``timestamp`` (epoch ms); composer ``createdAt``/``lastUpdatedAt``
  are epoch ms. Tool calls are ``toolFormerData`` (``name``, ``params``/``rawArgs`` and ``result`` as
  JSON strings); ``latestConversationSummary`` is a compaction summary, kept as session metadata.
- The working directory comes from ``adapters._cursor_workspace`` (§6.1).
- ``aiService.prompts``/``aiService.generations`` repeat prompt text without answers and are not read.

The global database can pass 100 MB: keys are listed by prefix range (which uses the key index) and
only one composer's rows are in memory at a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapters._cursor_messages import (
    HOST,
    Parts,
    as_str,
    first_list,
    lexical_text,
    parse_json,
    time_span,
    tool_output,
)
from adapters._cursor_workspace import (
    COMPOSERS_KEY,
    declared_folder,
    request_context_root,
    workspace_folder,
    workspace_folders,
)
from adapters._jsonl import parse_timestamp
from adapters._sqlite import prefix_range
from adapters._text import IMAGE_MARKER
from adapters.base import ReadOptions
from recall.transcript import ParseReport, Role, Transcript, TranscriptMessage

CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
COMPOSER_PREFIX = "composerData:"

_ROLES: dict[object, Role] = {
    1: Role.USER,
    "user": Role.USER,
    2: Role.ASSISTANT,
    "ai": Role.ASSISTANT,
    "assistant": Role.ASSISTANT,
}

Bubble = tuple[str, dict[str, Any], dict[str, Any]]  # (message key, bubble, its header or {})


def read_state_db(
    conn: sqlite3.Connection, tables: frozenset[str], path: Path, options: ReadOptions, report: ParseReport
) -> Iterator[Transcript]:
    if "ItemTable" in tables:
        folder = workspace_folder(path.parent)
        chat = _item(conn, CHAT_KEY, path, report)
        if chat is not None:
            yield from _chat_tabs(chat, folder, path, options, report)
        heads = _item(conn, COMPOSERS_KEY, path, report)
        if heads is not None:
            yield from _workspace_composers(heads, folder, path, options, report)
    if "cursorDiskKV" in tables:
        yield from _global_composers(conn, path, options, report)


def composer_ids(conn: sqlite3.Connection) -> list[str]:
    """Ids of the composers a database holds, from keys alone (no value is parsed)."""
    rows = conn.execute(
        "SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key", prefix_range(COMPOSER_PREFIX)
    ).fetchall()
    return [key[len(COMPOSER_PREFIX) :] for (key,) in rows]


def _item(conn: sqlite3.Connection, key: str, path: Path, report: ParseReport) -> Any:
    row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    report.lines_read += 1
    return parse_json(row[0], report, f"{path}: {key}")


# Era A: the chat panel.


def _chat_tabs(
    data: object, folder: str | None, path: Path, options: ReadOptions, report: ParseReport
) -> Iterator[Transcript]:
    tabs = first_list(data, "tabs", "chatSessions")
    if tabs is None:
        report.skip("unknown_shape", f"{path}: {CHAT_KEY} has no tabs")
        return
    for tab in tabs:
        tab_id = (as_str(tab.get("tabId")) or as_str(tab.get("id"))) if isinstance(tab, dict) else None
        bubbles = first_list(tab, "bubbles", "messages")
        if tab_id is None or bubbles is None:
            report.skip("unknown_shape", f"{path}: chat tab without id or bubbles")
            continue
        where = f"{path}: tab {tab_id}"
        report.lines_read += len(bubbles)
        messages = [
            message
            for index, bubble in _dicts(bubbles, where, report)
            if (
                message := _tab_message(
                    as_str(bubble.get("id")) or f"msg:{index}", bubble, options, report, where
                )
            )
        ]
        title = as_str(tab.get("chatTitle")) or as_str(tab.get("title"))
        started, ended = time_span(
            messages,
            parse_timestamp(tab.get("createdAt")),
            parse_timestamp(tab.get("lastSendTime") or tab.get("lastUpdatedAt")),
        )
        yield from _transcript(
            tab_id,
            messages,
            report,
            where,
            cwd=folder,
            title=title.splitlines()[0].strip() if title else None,
            started_at=started,
            ended_at=ended,
            model=_last_meta(messages, "model"),
            source_path=str(path),
        )


def _tab_message(
    key: str, bubble: dict[str, Any], options: ReadOptions, report: ParseReport, where: str
) -> TranscriptMessage | None:
    role = _role(bubble.get("type")) or _role(bubble.get("role"))
    if role is None:
        report.skip("unknown_shape", f"{where}: bubble {key} has no known type or role")
        return None
    delegate = bubble.get("delegate")
    text = (
        as_str(bubble.get("text"))
        or as_str(bubble.get("rawText"))
        or as_str(bubble.get("content"))
        or (as_str(delegate.get("a")) if isinstance(delegate, dict) else None)
        or lexical_text(bubble.get("initText"))
    )
    parts = Parts(text=[text] if text else [])
    parts.text.extend(_image_markers(bubble))
    return parts.message(
        key,
        role,
        options,
        report,
        timestamp=parse_timestamp(bubble.get("timestamp") or bubble.get("createdAt")),
        meta={"bubble_id": as_str(bubble.get("id")), "model": as_str(bubble.get("modelType"))},
    )


# Eras B and C: composers.


def _workspace_composers(
    data: object, folder: str | None, path: Path, options: ReadOptions, report: ParseReport
) -> Iterator[Transcript]:
    """Composers whose conversation is inline in the workspace list; heads alone live in the global DB."""
    heads = data if isinstance(data, list) else first_list(data, "allComposers")
    if heads is None:
        report.skip("unknown_shape", f"{path}: {COMPOSERS_KEY} has no composer list")
        return
    for _, head in _dicts(heads, f"{path}: {COMPOSERS_KEY}", report):
        composer_id = as_str(head.get("composerId"))
        if composer_id and isinstance(head.get("conversation"), list) and head["conversation"]:
            bubbles = _inline_bubbles(head["conversation"], f"{path}: composer {composer_id}", report)
            yield from _composer(composer_id, head, bubbles, folder, path, options, report)


def _global_composers(
    conn: sqlite3.Connection, path: Path, options: ReadOptions, report: ParseReport
) -> Iterator[Transcript]:
    folders: dict[str, str] | None = None  # built on first need: it opens every workspace database
    for composer_id in composer_ids(conn):
        where = f"{path}: composer {composer_id}"
        row = conn.execute(
            "SELECT value FROM cursorDiskKV WHERE key = ?", (COMPOSER_PREFIX + composer_id,)
        ).fetchone()
        report.lines_read += 1
        data = parse_json(row[0] if row else None, report, where)
        if data is None:
            continue
        if not isinstance(data, dict):
            report.skip("unknown_shape", f"{where}: composerData is {type(data).__name__}")
            continue
        bubbles = _composer_bubbles(conn, composer_id, data, where, report)
        if bubbles is None:
            continue
        cwd = declared_folder(data)
        if cwd is None:
            folders = workspace_folders(path) if folders is None else folders
            cwd = folders.get(composer_id) or request_context_root(conn, composer_id)
        yield from _composer(composer_id, data, bubbles, cwd, path, options, report)


def _composer(
    composer_id: str,
    data: dict[str, Any],
    bubbles: list[Bubble],
    cwd: str | None,
    path: Path,
    options: ReadOptions,
    report: ParseReport,
) -> Iterator[Transcript]:
    where = f"{path}: composer {composer_id}"
    messages = [
        message
        for key, bubble, header in bubbles
        if (message := _bubble_message(key, bubble, header, composer_id, options, report, where))
    ]
    model_config = data.get("modelConfig")
    meta = {"mode": as_str(data.get("unifiedMode")), "summary": _summary(data)}
    started, ended = time_span(
        messages, parse_timestamp(data.get("createdAt")), parse_timestamp(data.get("lastUpdatedAt"))
    )
    yield from _transcript(
        composer_id,
        messages,
        report,
        where,
        cwd=cwd,
        title=as_str(data.get("name")),
        started_at=started,
        ended_at=ended,
        model=(as_str(model_config.get("modelName")) if isinstance(model_config, dict) else None)
        or _last_meta(messages, "model"),
        source_path=str(path),
        meta={key: value for key, value in meta.items() if value},
    )


def _summary(data: dict[str, Any]) -> str | None:
    """The host's compaction summary: session metadata, never a turn (§5)."""
    outer = data.get("latestConversationSummary")
    inner = outer.get("summary") if isinstance(outer, dict) else None
    return as_str(inner.get("summary")) if isinstance(inner, dict) else None


def _composer_bubbles(
    conn: sqlite3.Connection, composer_id: str, data: dict[str, Any], where: str, report: ParseReport
) -> list[Bubble] | None:
    """The composer's bubbles in conversation order, or None (counted) for a shape we do not know."""
    conversation = data.get("conversation")
    headers = data.get("fullConversationHeadersOnly")
    if isinstance(conversation, list) and conversation:
        return _inline_bubbles(conversation, where, report)
    if isinstance(headers, list) and headers:
        return _split_bubbles(conn, composer_id, headers, data.get("conversationMap"), where, report)
    if conversation in (None, []) and headers in (None, []):
        return []  # a composer opened and never used
    report.skip("unknown_shape", f"{where}: neither conversation nor fullConversationHeadersOnly")
    return None


def _inline_bubbles(conversation: list[Any], where: str, report: ParseReport) -> list[Bubble]:
    report.lines_read += len(conversation)
    return [(as_str(b.get("bubbleId")) or f"msg:{i}", b, {}) for i, b in _dicts(conversation, where, report)]


def _split_bubbles(
    conn: sqlite3.Connection,
    composer_id: str,
    headers: list[Any],
    inline: object,
    where: str,
    report: ParseReport,
) -> list[Bubble]:
    prefix = f"bubbleId:{composer_id}:"
    rows = conn.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", prefix_range(prefix)
    ).fetchall()
    raw = {key[len(prefix) :]: value for key, value in rows}
    inline = inline if isinstance(inline, dict) else {}
    used: set[str] = set()
    bubbles: list[Bubble] = []
    for index, header in _dicts(headers, where, report):
        bubble_id = header.get("bubbleId")
        if not isinstance(bubble_id, str):
            report.skip("unknown_shape", f"{where}: header {index} has no bubbleId")
            continue
        key = bubble_id or f"msg:{index}"
        if isinstance(inline.get(bubble_id), dict):
            bubbles.append((key, inline[bubble_id], header))
            continue
        row_id = _row_for(bubble_id, raw, used)
        if row_id is None:
            report.skip("missing_bubble", f"{where}: {key}")
            continue
        used.add(row_id)
        report.lines_read += 1
        bubble = parse_json(raw[row_id], report, f"{where}: bubble {row_id}")
        if isinstance(bubble, dict):
            bubbles.append((key, bubble, header))
        elif bubble is not None:
            report.skip("unknown_shape", f"{where}: bubble {row_id} is {type(bubble).__name__}")
    for _ in range(len(raw) - len(used)):
        report.skip("orphan_bubble")
    return bubbles


def _row_for(bubble_id: str, raw: dict[str, object], used: set[str]) -> str | None:
    """The row holding a header's bubble: by key, else by the ``bubbleId`` inside an unclaimed row."""
    if bubble_id in raw:
        return bubble_id
    for row_id, value in raw.items():
        if row_id not in used:
            bubble = parse_json(value, ParseReport(), "")  # quiet: the row is counted when it is read
            if isinstance(bubble, dict) and bubble.get("bubbleId") == bubble_id:
                return row_id
    return None


def _bubble_message(
    key: str,
    bubble: dict[str, Any],
    header: dict[str, Any],
    composer_id: str,
    options: ReadOptions,
    report: ParseReport,
    where: str,
) -> TranscriptMessage | None:
    role = _role(bubble.get("type")) or _role(header.get("type"))
    if role is None:
        report.skip("unknown_shape", f"{where}: bubble {key} type {bubble.get('type')!r}")
        return None
    parts = Parts()
    text = as_str(bubble.get("text")) or lexical_text(bubble.get("richText")) or _code_blocks(bubble)
    if text:
        parts.text.append(text)
    parts.text.extend(_image_markers(bubble))
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and as_str(thinking.get("text")):
        parts.thinking.append(thinking["text"])
    tool = bubble.get("toolFormerData")
    tool = tool if isinstance(tool, dict) else {}
    if tool:
        name = as_str(tool.get("name")) or "tool"
        parts.calls.append((name, tool.get("params") or tool.get("rawArgs")))
        if tool.get("result") not in (None, ""):
            parts.results.append((name, tool_output(tool["result"])))
    timing = bubble.get("timingInfo")
    tokens = bubble.get("tokenCount")
    tokens = tokens if isinstance(tokens, dict) else {}
    model_info = bubble.get("modelInfo")
    return parts.message(
        key,
        role,
        options,
        report,
        timestamp=parse_timestamp(bubble.get("createdAt"))
        or (parse_timestamp(timing.get("clientStartTime")) if isinstance(timing, dict) else None)
        or parse_timestamp(bubble.get("timestamp")),
        meta={
            "composer_id": composer_id,
            "bubble_id": as_str(bubble.get("bubbleId")),
            "server_bubble_id": as_str(header.get("serverBubbleId")),
            "tool_call_id": as_str(tool.get("toolCallId")),
            "tool_status": as_str(tool.get("status")),
            "model": as_str(model_info.get("modelName")) if isinstance(model_info, dict) else None,
            "input_tokens": tokens.get("inputTokens") or None,
            "output_tokens": tokens.get("outputTokens") or None,
        },
    )


def _code_blocks(bubble: dict[str, Any]) -> str:
    blocks = bubble.get("codeBlocks")
    if not isinstance(blocks, list):
        return ""
    code = [b["content"] for b in blocks if isinstance(b, dict) and as_str(b.get("content"))]
    return "\n\n".join(f"```\n{c}\n```" for c in code)


# Small shared pieces.


def _transcript(
    external_id: str, messages: list[TranscriptMessage], report: ParseReport, where: str, **fields: Any
) -> Iterator[Transcript]:
    """The session, unless it has no message; a key seen twice (a repeated header) is kept once."""
    unique: dict[str, TranscriptMessage] = {}
    for message in messages:
        if message.key in unique:
            report.skip("duplicate_bubble", f"{where}: {message.key}")
        else:
            unique[message.key] = message
    if not unique:
        report.skip("empty_session", where)
        return
    yield Transcript(host=HOST, external_id=external_id, messages=tuple(unique.values()), **fields)


def _role(value: object) -> Role | None:
    return _ROLES.get(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _dicts(items: list[Any], where: str, report: ParseReport) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, item in enumerate(items):
        if isinstance(item, dict):
            yield index, item
        else:
            report.skip("unknown_shape", f"{where}: item {index} is {type(item).__name__}")


def _image_markers(bubble: dict[str, Any]) -> list[str]:
    images = bubble.get("images")
    count = len(images) if isinstance(images, list) else 0
    return [IMAGE_MARKER] * (count + (1 if isinstance(bubble.get("image"), dict) else 0))


def _last_meta(messages: list[TranscriptMessage], key: str) -> str | None:
    return next((m.meta[key] for m in reversed(messages) if key in m.meta), None)
