"""Plain transcript objects: what every host adapter produces and the store consumes.

Adapters parse and classify host data once, at the boundary; they never touch the database. The
store is the only writer, so every message passes the scrubber and gets its provenance there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Origin(StrEnum):
    """Who actually wrote a message's text; only HUMAN text is the user's own words."""

    HUMAN = "human"  # typed by the person
    AGENT = "agent"  # written by the model
    TOOL = "tool"  # output of a tool the agent ran
    INJECTED = "injected"  # put in by the host: system reminders, AGENTS.md, environment, commands
    COMPACTION = "compaction"  # a summary the host wrote when it compacted the context


class MessageKind(StrEnum):
    TEXT = "text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    THINKING = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the host wrote it: the name and the full arguments (an object, list or text).

    The stored message keeps only a one-line gist of a call; the arguments travel beside it so the
    import can read what the call touched (the files an edit changed, the definitions it added)
    without storing whole file bodies. They are never written to the database as they are.
    """

    name: str
    arguments: Any = None


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One message; ``key`` is its natural key, unique within its session and stable across re-reads.

    ``tool_calls`` are the calls a tool-call message made, in order (Cursor puts several in one
    message); they take no part in the message's identity or stored text.
    """

    key: str
    role: Role
    text: str
    timestamp: datetime | None = None
    origin: Origin = Origin.HUMAN
    kind: MessageKind = MessageKind.TEXT
    tool_name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    tool_calls: tuple[ToolCall, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Transcript:
    """One session of one host, as read from its files."""

    host: str
    external_id: str
    messages: tuple[TranscriptMessage, ...]
    cwd: str | None = None
    git_branch: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    model: str | None = None
    title: str | None = None
    parent_external_id: str | None = None
    agent_id: str | None = None
    source_path: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ParseReport:
    """What a reader had to skip, by reason; nothing bad in a file is dropped silently."""

    lines_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def skip(self, reason: str, detail: str | None = None) -> None:
        self.skipped[reason] += 1
        if detail and len(self.errors) < 50:
            self.errors.append(detail)

    def merge(self, other: ParseReport) -> None:
        self.lines_read += other.lines_read
        self.skipped.update(other.skipped)
        self.errors.extend(other.errors[: max(0, 50 - len(self.errors))])
