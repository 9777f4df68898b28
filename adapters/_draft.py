"""Mutable drafts of messages and sessions, frozen into the contract's immutable objects at the end.

Why drafts: one host message can be spread over several lines (Claude Code writes one line per
content block of a response; Codex writes most text twice, in two channels), and session facts such
as the working directory or the model are only known once the whole file is read. Readers collect
parts here and build the frozen ``TranscriptMessage`` / ``Transcript`` when the file is done.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapters._text import TEXT_CAP, clean
from recall.transcript import Cut, MessageKind, Origin, Role, ToolCall, Transcript, TranscriptMessage


@dataclass(slots=True, eq=False)
class Draft:
    """One message being assembled; ``limit`` is the most text the store keeps of it."""

    key: str
    role: Role
    origin: Origin
    kind: MessageKind = MessageKind.TEXT
    timestamp: datetime | None = None
    tool_name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    limit: int = TEXT_CAP
    parts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)

    def add(self, text: object) -> None:
        if isinstance(text, str) and text.strip():
            self.parts.append(text)

    def add_once(self, text: object) -> None:
        """Add ``text`` unless this message already has it: hosts rewrite streamed blocks."""
        if isinstance(text, str) and text.strip() and text not in self.parts:
            self.parts.append(text)

    def freeze(self) -> TranscriptMessage | None:
        """The finished message, or None when it has no text at all."""
        text = clean("\n\n".join(self.parts)).strip("\r\n")  # keep a first line's indentation
        if not text.strip():
            return None
        return TranscriptMessage(
            key=self.key,
            role=self.role,
            text=text,
            cuts=(Cut(0, len(text), self.limit),),
            timestamp=self.timestamp,
            origin=self.origin,
            kind=self.kind,
            tool_name=self.tool_name,
            meta={k: v for k, v in self.meta.items() if v is not None},
            tool_calls=tuple(self.calls),
        )


@dataclass(slots=True, eq=False)
class SessionDraft:
    """One transcript being assembled; messages are unique by key and kept in first-seen order."""

    host: str
    external_id: str
    source_path: str
    parent_external_id: str | None = None
    agent_id: str | None = None
    title: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    cwds: Counter[str] = field(default_factory=Counter)
    branches: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)
    meta: dict[str, Any] = field(default_factory=dict)
    drafts: dict[str, Draft] = field(default_factory=dict)

    def touch(self, when: datetime | None) -> None:
        """Widen the session's time span to include ``when``."""
        if when is None:
            return
        if self.started_at is None or when < self.started_at:
            self.started_at = when
        if self.ended_at is None or when > self.ended_at:
            self.ended_at = when

    def add(self, draft: Draft) -> bool:
        """Keep ``draft`` unless a message with its key exists already (a replayed or repeated line)."""
        if draft.key in self.drafts:
            return False
        self.drafts[draft.key] = draft
        return True

    def freeze(self) -> Transcript | None:
        """The finished transcript, or None when no message has any text."""
        messages = tuple(m for d in self.drafts.values() if (m := d.freeze()) is not None)
        if not messages:
            return None
        return Transcript(
            host=self.host,
            external_id=self.external_id,
            messages=messages,
            cwd=_most_common(self.cwds),
            git_branch=_most_common(self.branches),
            started_at=self.started_at,
            ended_at=self.ended_at,
            model=_most_common(self.models),
            title=self.title,
            parent_external_id=self.parent_external_id,
            agent_id=self.agent_id,
            source_path=self.source_path,
            meta={k: v for k, v in self.meta.items() if v is not None},
        )


def _most_common(counts: Counter[str]) -> str | None:
    """The most frequent value; ties go to the one seen first."""
    return counts.most_common(1)[0][0] if counts else None
