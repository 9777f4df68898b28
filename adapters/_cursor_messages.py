"""How one Cursor message, whatever its era, becomes one ``TranscriptMessage``.

Every Cursor storage era wraps the same few things differently: visible text (sometimes only as
Lexical rich-text JSON), tool calls with their results (arguments and results often JSON *strings*),
model thinking, and images. Each era's reader collects them into ``Parts``, and ``Parts.message``
renders one host message (a bubble, a transcript line, a Store leaf) as one ``TranscriptMessage``
with the same rules as the other hosts (``adapters._text``): a tool call is its name and a one-line
gist, tool output is marked to be cut to ``ReadOptions.tool_text_cap`` (the store cuts it after
scrubbing), data URLs become ``[image]``, and thinking is kept only when
``ReadOptions.include_thinking`` asks for it.

Agent transcripts and the Store wrap what the person typed in ``<user_query>…</user_query>``; the
wrapper goes, and a user turn that is only a host-written ``<tag>…</tag>`` block is marked injected.

Values come from SQLite rows and JSONL lines that may be NULL, bytes, not JSON or JSON ``null``;
``parse_json`` counts each of those in the ParseReport and returns None, so callers only see data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from adapters._facts import tool_facts
from adapters._text import IMAGE_MARKER, TEXT_CAP, clean, tool_call_limit, tool_call_text
from adapters.base import ReadOptions
from recall.transcript import Cut, MessageKind, Origin, ParseReport, Role, ToolCall, TranscriptMessage

HOST = "cursor"

_USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_ONLY_TAG_BLOCK = re.compile(r"\s*<([a-z][a-z_]*)>.*</\1>\s*", re.DOTALL)
_WINDOWS_DRIVE = re.compile(r"^/?[A-Za-z]:[\\/]")
_RESULT_TEXT_KEYS = ("output", "contents", "content", "result", "text", "stdout")


@dataclass(slots=True)
class Parts:
    """What one host message holds before it is rendered; calls and results keep their tool name."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[tuple[str, object]] = field(default_factory=list)  # (tool name, arguments)
    results: list[tuple[str | None, str]] = field(default_factory=list)  # (tool name, output)

    def message(
        self,
        key: str,
        role: Role,
        options: ReadOptions,
        report: ParseReport,
        *,
        timestamp: datetime | None = None,
        origin: Origin | None = None,
        meta: dict[str, Any] | None = None,
    ) -> TranscriptMessage | None:
        """The rendered message, or None (counted) when nothing readable is left."""
        text = _non_empty(clean(t).strip() for t in self.text)
        calls = [tool_call_text(name, args) for name, args in self.calls]
        results = _non_empty(clean(out).strip() for _, out in self.results)
        thinking = _non_empty(clean(t).strip() for t in self.thinking) if options.include_thinking else []
        if text:
            kind = MessageKind.TEXT
        elif calls:
            kind = MessageKind.TOOL_CALL
        elif results:
            kind = MessageKind.TOOL_RESULT
        elif thinking:
            kind = MessageKind.THINKING
        else:
            omitted = self.thinking and not options.include_thinking
            report.skip("thinking_omitted" if omitted else "empty_message")
            return None
        if kind is not MessageKind.THINKING:
            thinking = [f"[thinking] {t}" for t in thinking]
        names = [name for name, _ in self.calls] + [name for name, _ in self.results if name]
        limits = [
            *(None for _ in thinking),
            *(TEXT_CAP for _ in text),
            *(tool_call_limit(name, options.tool_text_cap) for name, _ in self.calls),
            *(options.tool_text_cap for _ in results),
        ]
        joined, cuts = _joined(thinking + text + calls + results, limits)
        return TranscriptMessage(
            key=key,
            role=role,
            text=joined,
            cuts=cuts,
            timestamp=timestamp,
            origin=origin or _default_origin(role, kind),
            kind=kind,
            tool_name=names[0] if names else None,
            meta={k: v for k, v in {**(meta or {}), **self.facts()}.items() if v not in (None, "")},
            tool_calls=tuple(ToolCall(name, args) for name, args in self.calls),
        )

    def facts(self) -> dict[str, Any]:
        """What the calls carry beyond their gists (adapters._facts); the last call's win."""
        found: dict[str, Any] = {}
        for name, args in self.calls:
            found.update(tool_facts(name, args))
        return found


def _joined(parts: list[str], limits: list[int | None]) -> tuple[str, tuple[Cut, ...]]:
    """Parts joined by blank lines, and where each may be cut (the store cuts after scrubbing)."""
    cuts: list[Cut] = []
    position = 0
    for part, limit in zip(parts, limits, strict=True):
        if limit is not None:
            cuts.append(Cut(position, position + len(part), limit))
        position += len(part) + 2
    return "\n\n".join(parts), tuple(cuts)


def turn_message(
    key: str,
    role: Role,
    parts: Parts,
    options: ReadOptions,
    report: ParseReport,
    meta: dict[str, Any] | None = None,
) -> TranscriptMessage | None:
    """One agent-transcript line or Store leaf: user turns lose their wrapper, tool output is a result."""
    origin = None
    if role is Role.USER and parts.results and not parts.text:
        role = Role.TOOL  # a "user" turn made only of tool_result blocks is the tool speaking
    elif role is Role.USER:
        said = [user_text(t) for t in parts.text]
        human = [text for text, who in said if who is Origin.HUMAN]
        origin = Origin.HUMAN if human or not said else Origin.INJECTED
        parts.text = human or [text for text, _ in said]
    if role is Role.TOOL and parts.text:
        parts.results.extend((None, text) for text in parts.text)
        parts.text = []
    return parts.message(key, role, options, report, origin=origin, meta=meta)


def _default_origin(role: Role, kind: MessageKind) -> Origin:
    if role is Role.USER:
        return Origin.HUMAN
    if role is Role.SYSTEM:
        return Origin.INJECTED
    if role is Role.TOOL or kind is MessageKind.TOOL_RESULT:
        return Origin.TOOL
    return Origin.AGENT


def _non_empty(texts: Iterable[str]) -> list[str]:
    return [t for t in texts if t]


def tool_output(result: object) -> str:
    """The readable part of a tool result: stored as text, a JSON string, a dict or content blocks."""
    if isinstance(result, str):
        decoded = _json_or_text(result)
        if decoded is result or not isinstance(decoded, dict | list):
            return result
        result = decoded
    if isinstance(result, list):
        texts = [b.get("text") if isinstance(b, dict) else b for b in result]
        strings = [t for t in texts if isinstance(t, str)]
        if len(strings) == len(texts):
            return "\n".join(strings)
    if isinstance(result, dict):
        for key in _RESULT_TEXT_KEYS:
            if isinstance(result.get(key), str):
                return result[key]
    return "" if result is None else _compact(result)


def _json_or_text(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def user_text(text: str) -> tuple[str, Origin]:
    """What the person typed, and who wrote the message, from an agent transcript's user text."""
    queries = _USER_QUERY.findall(text)
    if queries:
        return "\n\n".join(queries), Origin.HUMAN
    if _ONLY_TAG_BLOCK.fullmatch(text):
        return text, Origin.INJECTED
    return text, Origin.HUMAN


def content_parts(content: object, report: ParseReport, where: str) -> Parts:
    """Parts of a ``message.content`` value: a string or a list of typed blocks (several dialects)."""
    parts = Parts()
    if isinstance(content, str):
        parts.text.append(content)
        return parts
    if not isinstance(content, list):
        report.skip("unknown_shape", f"{where}: content is {type(content).__name__}")
        return parts
    for block in content:
        if isinstance(block, str):
            parts.text.append(block)
            continue
        if not isinstance(block, dict):
            report.skip("unknown_shape", f"{where}: content block is {type(block).__name__}")
            continue
        kind = block.get("type")
        name = block.get("name") or block.get("toolName")
        name = name if isinstance(name, str) and name else "tool"
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.text.append(block["text"])
        elif kind in ("thinking", "reasoning", "redacted_thinking"):
            thought = block.get("thinking") or block.get("text")
            parts.thinking.append(thought if isinstance(thought, str) else "")
        elif kind in ("tool_use", "tool_call", "tool-call", "function_call"):
            parts.calls.append((name, _first(block, "input", "args", "arguments")))
        elif kind in ("tool_result", "tool-result", "function_call_output"):
            out = _first(block, "content", "result", "output")
            parts.results.append((None if name == "tool" else name, tool_output(out)))
        elif kind in ("image", "image_url", "input_image"):
            parts.text.append(IMAGE_MARKER)
        elif isinstance(block.get("text"), str):
            parts.text.append(block["text"])  # unknown blocks from newer versions that carry text
        else:
            report.skip("unknown_shape", f"{where}: content block type {kind!r}")
    return parts


def _first(block: dict[str, Any], *keys: str) -> object:
    return next((block[k] for k in keys if block.get(k) is not None), None)


def parse_json(raw: object, report: ParseReport, where: str) -> Any:
    """One stored JSON value; NULL, undecodable and non-JSON values are counted and give None."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    if raw is None:
        report.skip("null_value", where)
        return None
    if not isinstance(raw, str):
        report.skip("unknown_shape", f"{where}: {type(raw).__name__} value")
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        report.skip("bad_json", where)
        return None
    if value is None:
        report.skip("null_value", where)
    return value


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def first_list(data: object, *keys: str) -> list[Any] | None:
    """The first of ``keys`` whose value is a list: builds renamed fields (``tabs``/``chatSessions``)."""
    if not isinstance(data, dict):
        return None
    return next((data[k] for k in keys if isinstance(data.get(k), list)), None)


def time_span(
    messages: Iterable[TranscriptMessage], started: datetime | None, ended: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """Session start and end: the host's own values, else the first and last message times."""
    stamps = [m.timestamp for m in messages if m.timestamp is not None]
    return started or (min(stamps) if stamps else None), ended or (max(stamps) if stamps else None)


def lexical_text(raw: object) -> str:
    """Plain text of a Lexical editor state (Cursor's ``richText``/``initText``), one block a line."""
    state = _json_or_text(raw) if isinstance(raw, str) else raw
    root = state.get("root") if isinstance(state, dict) else None
    if not isinstance(root, dict) or not isinstance(root.get("children"), list):
        return ""
    return "\n".join(_lexical_inline(child) for child in root["children"]).strip()


def _lexical_inline(node: object) -> str:
    if not isinstance(node, dict):
        return ""
    if isinstance(node.get("text"), str):
        return node["text"]
    children = node.get("children")
    return "".join(_lexical_inline(c) for c in children) if isinstance(children, list) else ""


def uri_to_path(uri: str) -> str | None:
    """A filesystem path from a VS Code URI (``file://``, ``vscode-remote://``) or a plain path."""
    uri = uri.strip()
    if not uri:
        return None
    if _WINDOWS_DRIVE.match(uri) or "://" not in uri:
        return uri
    path = unquote(urlsplit(uri).path)
    return path[1:] if _WINDOWS_DRIVE.match(path) and path.startswith("/") else path or None


def parent_path(path: str) -> str:
    return str(PurePosixPath(path.replace("\\", "/")).parent)
