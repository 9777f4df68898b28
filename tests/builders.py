"""Transcripts written in each host's on-disk format, for signals the recorded fixtures do not hold.

The real fixtures (tests/fixtures/transcripts) have no TodoWrite, task tools, update_plan text, Cursor
todos, memory-file edits or stated user rules, so tests of those signals write small sessions here,
line for line in the shapes of shared/ref/transcript-formats.md (Claude Code §2.4-2.6, Codex §4,
Cursor agent transcripts §3.3) and adapters/_facts.py. Timestamps start where the test says, so
breadcrumbs can be made live (recent) or old.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def _time(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class ClaudeSession:
    """A Claude Code ``<sessionId>.jsonl`` under ``projects/<encoded cwd>/``."""

    root: Path
    cwd: str = "/home/dev/shop"
    start: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(hours=1))
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    lines: list[dict[str, Any]] = field(default_factory=list)
    _clock: int = 0
    _parent: str | None = None

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        self._clock += 1
        line_id = str(uuid.uuid4())
        self.lines.append(
            {"parentUuid": self._parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
             "sessionId": self.session_id, "version": "2.1.39", "gitBranch": "main", "type": kind,
             "message": message, "uuid": line_id,
             "timestamp": _time(self.start + timedelta(seconds=10 * self._clock)), **extra}
        )  # fmt: skip
        self._parent = line_id
        return line_id

    def user(self, text: str) -> ClaudeSession:
        self._line("user", {"role": "user", "content": text})
        return self

    def assistant(self, text: str) -> ClaudeSession:
        message_id = f"msg_{uuid.uuid4().hex[:20]}"
        self._line("assistant", {"id": message_id, "role": "assistant", "model": "claude-opus-4-6",
                                 "content": [{"type": "text", "text": text}]})  # fmt: skip
        return self

    def tool(
        self, name: str, arguments: dict[str, Any], result: str, *, error: bool = False
    ) -> ClaudeSession:
        """A tool_use line, then the user line carrying its tool_result."""
        tool_id = f"toolu_{uuid.uuid4().hex[:22]}"
        self._line("assistant", {"id": f"msg_{uuid.uuid4().hex[:20]}", "role": "assistant",
                                 "model": "claude-opus-4-6",
                                 "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}]})  # fmt: skip
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if error:
            block["is_error"] = True
        self._line("user", {"role": "user", "content": [block]}, toolUseResult=result)
        return self

    def bash(self, command: str, output: str, *, exit_code: int = 0) -> ClaudeSession:
        failed = exit_code != 0
        text = f"Exit code {exit_code}\n{output}" if failed else output
        return self.tool("Bash", {"command": command, "description": "run"}, text, error=failed)

    def todos(self, *items: tuple[str, str]) -> ClaudeSession:
        todos = [{"content": text, "status": status, "activeForm": text} for text, status in items]
        return self.tool("TodoWrite", {"todos": todos}, "Todos have been modified successfully.")

    def interrupted(self) -> ClaudeSession:
        self._line(
            "user", {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}
        )
        return self

    def write(self) -> Path:
        folder = self.root / "projects" / ("-" + self.cwd.strip("/").replace("/", "-"))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in self.lines) + "\n", encoding="utf-8")
        return path


@dataclass
class CodexSession:
    """A Codex ``rollout-*.jsonl`` (envelope era): session_meta, then response_item lines."""

    root: Path
    cwd: str = "/home/dev/shop"
    start: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(hours=1))
    thread_id: str = "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"
    lines: list[dict[str, Any]] = field(default_factory=list)
    _clock: int = 0

    def __post_init__(self) -> None:
        self._item("session_meta", {"id": self.thread_id, "timestamp": _time(self.start), "cwd": self.cwd,
                                    "originator": "codex_cli_rs", "cli_version": "0.104.0", "source": "cli"})  # fmt: skip

    def _item(self, kind: str, payload: dict[str, Any]) -> None:
        self._clock += 1
        when = _time(self.start + timedelta(seconds=10 * self._clock))
        self.lines.append({"timestamp": when, "type": kind, "payload": payload})

    def user(self, text: str) -> CodexSession:
        self._item("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": text}]})  # fmt: skip
        return self

    def assistant(self, text: str, phase: str = "final_answer") -> CodexSession:
        self._item("response_item", {"type": "message", "role": "assistant", "phase": phase,
                                     "content": [{"type": "output_text", "text": text}]})  # fmt: skip
        return self

    def call(self, name: str, arguments: dict[str, Any], output: str) -> CodexSession:
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        self._item("response_item", {"type": "function_call", "name": name,
                                     "arguments": json.dumps(arguments), "call_id": call_id})  # fmt: skip
        self._item("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})
        return self

    def plan(self, *steps: tuple[str, str]) -> CodexSession:
        plan = [{"step": text, "status": status} for text, status in steps]
        return self.call("update_plan", {"explanation": "tracking", "plan": plan}, "Plan updated")

    def write(self) -> Path:
        day = self.start.strftime("%Y/%m/%d")
        folder = self.root / "sessions" / day
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-{self.start:%Y-%m-%dT%H-%M-%S}-{self.thread_id}.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in self.lines) + "\n", encoding="utf-8")
        return path


@dataclass
class CursorTranscript:
    """A Cursor agent transcript: ``projects/<sanitized cwd>/agent-transcripts/<id>/<id>.jsonl``."""

    root: Path
    session_id: str = "d5c2d589-0000-4000-8000-0000000000aa"
    lines: list[dict[str, Any]] = field(default_factory=list)

    def user(self, text: str) -> CursorTranscript:
        self.lines.append({"role": "user", "message": {"content": [
            {"type": "text", "text": f"<user_query>\n{text}\n</user_query>"}]}})  # fmt: skip
        return self

    def assistant(self, text: str, *calls: tuple[str, dict[str, Any]]) -> CursorTranscript:
        blocks = [{"type": "text", "text": text}] + [
            {"type": "tool_use", "name": name, "input": arguments} for name, arguments in calls
        ]
        self.lines.append({"role": "assistant", "message": {"content": blocks}})
        return self

    def write(self) -> Path:
        folder = self.root / "projects" / "home-dev-shop" / "agent-transcripts" / self.session_id
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in self.lines) + "\n", encoding="utf-8")
        return path
