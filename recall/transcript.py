"""Plain transcript objects: what every host adapter produces and the store consumes.

Adapters parse and classify host data once, at the boundary; they never touch the database. The
store is the only writer, so every message passes the scrubber and gets its provenance there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from recall.pickled import pickled_as_call


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


class Cut(NamedTuple):
    """A part of a message's text (``text[start:end]``) and the most characters of it to keep.

    Adapters hand over whole text and say where it may be cut; the store cuts only after
    scrubbing, so no cut can leave the first part of a secret behind (adr/0013).
    """

    start: int
    end: int
    limit: int


@pickled_as_call
@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the host wrote it: the name and the full arguments (an object, list or text).

    The stored message keeps only a one-line gist of a call; the arguments travel beside it so the
    import can read what the call touched (the files an edit changed, the definitions it added)
    without storing whole file bodies. They are never written to the database as they are.
    """

    name: str
    arguments: Any = None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One message; ``key`` is its natural key, unique within its session and stable across re-reads.

    ``text`` is whole; ``cuts`` (ordered, not overlapping) are the parts the store shortens.
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
    cuts: tuple[Cut, ...] = ()
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


# Why a reader skips something, in words a user reads in a warning. A reason without words of its
# own (``unknown_type:x``) falls back to its family's; ``_``-joined names read as words otherwise.
WHY_SKIPPED: dict[str, str] = {
    "bad_record": "a record of a shape no known version of the host writes; the rest of the file imports",
    "bad_timestamp": "a timestamp that cannot be read; the message keeps no time",
    "bad_json": "text that is not valid JSON",
    "bad_agent_meta": "a subagent's side file that cannot be read; its messages import without it",
    "unknown_shape": "a shape recall does not know yet; the rest imports",
    "unknown_type": "a record type recall does not know yet; the rest imports",
    "unknown_block": "a content block recall does not know yet; the rest of the message imports",
    "unknown_role": "a role recall does not know yet",
    "unreadable": "the file cannot be read (permissions, or it vanished)",
    "read_error": "the file stops being readable here (damaged or truncated)",
    "oversized_line": "a line too long to be a real record",
    "host_error": "the host logged an error here, not a message",
    "missing_blob": "the host's database refers to a part it does not hold",
    "missing_bubble": "the host's database refers to a message it does not hold",
    "zstd_unavailable": "a compressed file and no zstandard package to open it",
    "null_value": "an empty value where a message should be",
    "not_object": "a line that is JSON but not an object",
    "locked": "the host holds the database locked; the next import reads it",
    "empty_file": "the file is empty",
}


def why_skipped(reason: str) -> str:
    return WHY_SKIPPED.get(reason) or WHY_SKIPPED.get(reason.split(":", 1)[0]) or reason.replace("_", " ")


@dataclass(slots=True)
class ParseReport:
    """What a reader had to skip, by reason; nothing bad in a file is dropped silently.

    Every skip is counted. Those worth a warning also carry a detail (where in the file), which is kept
    with the reason in words; routine ones (a summary line pointing into another file, a message a
    resumed session copied) are passed without a detail and only counted.
    """

    lines_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def skip(self, reason: str, detail: str | None = None) -> None:
        self.skipped[reason] += 1
        if detail and len(self.errors) < 50:
            self.errors.append(f"{detail}: {why_skipped(reason)}")

    def merge(self, other: ParseReport) -> None:
        self.lines_read += other.lines_read
        self.skipped.update(other.skipped)
        self.errors.extend(other.errors[: max(0, 50 - len(self.errors))])
