"""Cursor agent transcripts: ``~/.cursor/projects/<sanitized-cwd>/agent-transcripts/…``.

Ground truth (``shared/ref/transcript-formats.md`` §3.1, §3.3; fixtures under
``tests/fixtures/transcripts/cursor/``):

- Layouts: nested ``agent-transcripts/<id>/<id>.jsonl``, subagents at
  ``agent-transcripts/<id>/subagents/<subId>.jsonl``, and the older flat ``agent-transcripts/<id>.jsonl``
  or ``<id>.txt``. The session id is the file stem (= composerId or Store ``agentId``); a subagent is
  keyed ``<id>#agent-<subId>`` with a parent link (§5).
- JSONL, one record a line: ``{"role": "user"|"assistant", "message": {"content": [blocks]}}`` with
  ``text`` and ``tool_use`` (``name``, ``input``) blocks; user text wrapped in ``<user_query>``. Newer
  lines add ``model``, ``metadata``, ``annotations`` and blocks ``thinking``, ``tool_call``,
  ``tool-result``, ``custom_block``. Also ``{"type": "error", "error"}`` (counted as ``host_error``)
  and ``{"type": "turn_ended"}`` (a boundary, nothing to keep). Lines are read by
  ``adapters._jsonl.iter_records`` (torn, oversized and invalid lines counted). One line = one
  message, keyed ``<line number>:<sha1 of the record>`` so a rewritten file never reuses a key for
  other text (§7.1).
- ``.txt``: ``user:``/``assistant:`` lines open turns; inside an assistant turn ``[Thinking] …``,
  ``[Tool call] <Name>`` and ``[Tool result] <Name>`` open blocks whose bodies are indented; the first
  unindented line returns to plain text. Each block is one message, keyed by its first line number
  alone: the last block of a live file grows, and a hash in its key would leave each partial copy
  behind instead of updating it.
- No timestamps, tool ids or project path: those come from the Store stack's ``meta.json`` and
  ``store.db`` of the same session when they exist (``chats/*/<id>/``), else the end time is the file's
  modification time. The ``<sanitized-cwd>`` folder name is lossy and never decoded (§6).
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from adapters._cursor_messages import HOST, Parts, as_str, content_parts, time_span, turn_message
from adapters._cursor_store import SessionInfo, chat_session_info
from adapters._files import NotRegularFile, open_regular
from adapters._jsonl import iter_records
from adapters.base import ReadOptions
from recall.transcript import ParseReport, Role, Transcript, TranscriptMessage

TRANSCRIPTS_DIR = "agent-transcripts"

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "tool": Role.TOOL}
_TURN_LINES = {"user:": Role.USER, "assistant:": Role.ASSISTANT}
_BLOCK_MARKER = re.compile(r"\[(Thinking|Tool call|Tool result)\] ?(.*)")


def session_ids(path: Path) -> tuple[str, str | None]:
    """(external id, parent external id) of a transcript file."""
    if path.parent.name == "subagents":
        parent = path.parent.parent.name
        return f"{parent}#agent-{path.stem}", parent
    return path.stem, None


def read_jsonl(path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
    messages: list[TranscriptMessage] = []
    model = None
    for line_no, record in iter_records(path, report):
        where = f"{path}:{line_no}"
        if record.get("type") == "error":
            report.skip("host_error", f"{where}: {str(record.get('error'))[:200]}")
            continue
        if record.get("type") == "turn_ended":
            continue
        role_name, body = record.get("role"), record.get("message")
        role = _ROLES.get(role_name) if isinstance(role_name, str) else None
        if role is None or not isinstance(body, dict):
            report.skip("unknown_shape", f"{where}: record without a known role and message")
            continue
        model = as_str(record.get("model")) or model
        parts = content_parts(body.get("content"), report, where)
        canonical = json.dumps(record, sort_keys=True, ensure_ascii=False).encode()
        key = f"{line_no}:{hashlib.sha1(canonical).hexdigest()[:12]}"
        message = turn_message(key, role, parts, options, report, {"line": line_no})
        if message is not None:
            messages.append(message)
    yield from _transcript(path, messages, model, report)


def read_txt(path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
    lines = _read_lines(path, report)
    if lines is None:
        return
    report.lines_read += len(lines)
    messages: list[TranscriptMessage] = []
    for block in _txt_blocks(lines, report, str(path)):
        message = block.message(options, report)
        if message is not None:
            messages.append(message)
    yield from _transcript(path, messages, None, report)


@dataclass(slots=True)
class _Block:
    """One turn's plain text, or one ``[Thinking]``/``[Tool call]``/``[Tool result]`` block in it."""

    role: Role
    kind: str  # "text", "Thinking", "Tool call" or "Tool result"
    first_line: int
    head: str = ""  # the marker line's rest: the tool name, or the first line of thinking
    lines: list[str] = field(default_factory=list)

    def message(self, options: ReadOptions, report: ParseReport) -> TranscriptMessage | None:
        body = textwrap.dedent("\n".join(self.lines)).strip()
        if self.kind == "text" and not body:
            return None  # blank lines between blocks
        role, parts = self.role, Parts()
        if self.kind == "Thinking":
            parts.thinking.append(f"{self.head}\n{body}".strip())
        elif self.kind == "Tool call":
            parts.calls.append((self.head or "tool", _txt_arguments(body)))
        elif self.kind == "Tool result":
            role = Role.TOOL
            parts.results.append((self.head or None, body))
        else:
            parts.text.append(body)
        return turn_message(str(self.first_line), role, parts, options, report, {"line": self.first_line})


def _txt_blocks(lines: list[str], report: ParseReport, where: str) -> Iterator[_Block]:
    block: _Block | None = None
    preamble = False  # stray text before the first turn is counted once, not once a line
    for line_no, line in enumerate(lines, 1):
        stripped = line.strip()
        marker = _BLOCK_MARKER.fullmatch(stripped)
        if stripped in _TURN_LINES:
            if block:
                yield block
            block = _Block(_TURN_LINES[stripped], "text", line_no + 1)
        elif block is None:
            if stripped and not preamble:
                report.skip("unknown_shape", f"{where}:{line_no}: text before the first user:/assistant:")
            preamble = preamble or bool(stripped)
        elif marker and block.role is Role.ASSISTANT:
            yield block
            block = _Block(block.role, marker[1], line_no, marker[2].strip())
        elif block.kind != "text" and stripped and not line[0].isspace():
            yield block  # an unindented line ends a block's body and is plain text again
            block = _Block(block.role, "text", line_no, lines=[line])
        else:
            block.lines.append(line)
    if block:
        yield block


def _txt_arguments(body: str) -> dict[str, str] | str:
    """``key: value`` argument lines as a dict, so the call's gist names the telling argument."""
    pairs = [line.partition(":") for line in body.splitlines()]
    if pairs and all(sep and key.strip() for key, sep, _ in pairs):
        return {key.strip(): value.strip() for key, _, value in pairs}
    return body


def _read_lines(path: Path, report: ParseReport) -> list[str] | None:
    try:
        with open_regular(path) as stream:
            raw = stream.read()
    except NotRegularFile as exc:
        report.skip(exc.kind, f"{path}: {exc.strerror}")
        return None
    except OSError as exc:
        report.skip("unreadable", f"{path}: {exc}")
        return None
    if not raw.strip():
        report.skip("empty_file", str(path))
        return None
    return raw.decode("utf-8", errors="replace").splitlines()


def _transcript(
    path: Path, messages: list[TranscriptMessage], model: str | None, report: ParseReport
) -> Iterator[Transcript]:
    if not messages:
        report.skip("empty_session", str(path))
        return
    external_id, parent_id = session_ids(path)
    info = _session_info(path, parent_id or external_id)
    if parent_id:
        info = SessionInfo(cwd=info.cwd)  # the parent's title and times are not the subagent's
    started, ended = time_span(messages, info.started_at, info.ended_at or _mtime(path))
    yield Transcript(
        host=HOST,
        external_id=external_id,
        messages=tuple(messages),
        cwd=info.cwd,
        started_at=started,
        ended_at=ended,
        model=model or info.model,
        title=info.title,
        parent_external_id=parent_id,
        agent_id=path.stem if parent_id else None,
        source_path=str(path),
    )


def _session_info(path: Path, session_id: str) -> SessionInfo:
    """Facts from the Store stack's ``chats/*/<id>/`` (or ``acp-sessions/<id>/``) of the same root."""
    parts = path.parts
    if TRANSCRIPTS_DIR not in parts:
        return SessionInfo()
    index = len(parts) - 1 - parts[::-1].index(TRANSCRIPTS_DIR)
    if index < 2 or parts[index - 2] != "projects":
        return SessionInfo()
    root = Path(*parts[: index - 2])
    found = sorted(root.glob(f"chats/*/{glob.escape(session_id)}")) + [root / "acp-sessions" / session_id]
    chat_dir = next((d for d in found if d.is_dir()), None)
    return chat_session_info(chat_dir) if chat_dir else SessionInfo()


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None
