"""The tables, as SQLModel classes: the typed shape of every row.

The schema itself is created by the numbered migrations in ``recall/migrations`` (FTS5 tables and
triggers cannot be expressed here); a test checks these classes against the migrated file so the two
never drift. Rows are written only through ``recall.store`` so every text passes the scrubber and
every row gets its provenance from the write path.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel


class Provenance(StrEnum):
    """Where a row's text came from. Stamped by the write path; no caller can choose it."""

    VERBATIM = "verbatim"  # copied from a transcript or a dump as it was said
    USER_AUTHORED = "user_authored"  # typed by a person or agent through `recall add` / memory_add
    EXTRACTED = "extracted"  # lifted out of verbatim text by recall itself
    DERIVED = "derived"  # composed by recall (session summaries)


class DecisionStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    REVERTED = "reverted"


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class RecordKind(StrEnum):
    """The searchable kinds, in the order results list them. The value is the table's name."""

    DECISION = "decision"
    LEARNING = "learning"
    BREADCRUMB = "breadcrumb"
    SESSION_SUMMARY = "session_summary"
    MESSAGE = "message"
    NOTE = "note"


# FTS rowids are ``id * 8 + code``: one index over every kind keeps bm25 on one scale (adr/0003).
KIND_CODES: dict[RecordKind, int] = {
    RecordKind.DECISION: 1,
    RecordKind.LEARNING: 2,
    RecordKind.BREADCRUMB: 3,
    RecordKind.SESSION_SUMMARY: 4,
    RecordKind.MESSAGE: 5,
    RecordKind.NOTE: 6,
}
KIND_BY_CODE: dict[int, RecordKind] = {code: kind for kind, code in KIND_CODES.items()}
_CODE_SPAN = 8


def index_rowid(code: int, row_id: int) -> int:
    """The search index rowid of row ``row_id`` of the kind with ``code`` (see KIND_CODES)."""
    return row_id * _CODE_SPAN + code


def split_rowid(rowid: int) -> tuple[int, int]:
    """``(kind code, row id)`` of a search index rowid: the inverse of ``index_rowid``."""
    return rowid % _CODE_SPAN, rowid // _CODE_SPAN


TYPED_KINDS = (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB)


class _Row(SQLModel):
    id: int | None = Field(default=None, primary_key=True)
    project: str = Field(index=True)
    created_at: datetime
    updated_at: datetime
    provenance: Provenance


class Session(_Row, table=True):
    __tablename__ = "sessions"

    host: str
    external_id: str
    parent_id: int | None = Field(default=None, foreign_key="sessions.id")
    parent_external_id: str | None = None
    agent_id: str | None = None
    title: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    source_path: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Message(_Row, table=True):
    __tablename__ = "messages"

    session_id: int = Field(foreign_key="sessions.id")
    external_id: str
    ordinal: int
    role: str
    origin: str
    kind: str
    tool_name: str | None = None
    content: str
    timestamp: datetime | None = None
    content_hash: str
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Decision(_Row, table=True):
    __tablename__ = "decisions"

    content: str
    detail: str | None = None
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    status: DecisionStatus = DecisionStatus.ACTIVE
    superseded_by: int | None = Field(default=None, foreign_key="decisions.id")
    confidence: Confidence = Confidence.MEDIUM
    importance: int = 5
    session_id: int | None = Field(default=None, foreign_key="sessions.id")


class Learning(_Row, table=True):
    __tablename__ = "learnings"

    content: str
    detail: str | None = None
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    confidence: Confidence = Confidence.MEDIUM
    importance: int = 5
    session_id: int | None = Field(default=None, foreign_key="sessions.id")


class Breadcrumb(_Row, table=True):
    __tablename__ = "breadcrumbs"

    content: str
    detail: str | None = None
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    importance: int = 5
    valid_until: datetime | None = None
    session_id: int | None = Field(default=None, foreign_key="sessions.id")


class SessionSummary(_Row, table=True):
    __tablename__ = "session_summaries"

    session_id: int | None = Field(default=None, foreign_key="sessions.id")
    title: str
    content: str
    importance: int = 5
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Note(_Row, table=True):
    """A markdown document a person or agent keeps at a path inside a project (m0010_notes)."""

    __tablename__ = "notes"

    path: str
    content: str


TABLES: dict[RecordKind, type[_Row]] = {
    RecordKind.DECISION: Decision,
    RecordKind.LEARNING: Learning,
    RecordKind.BREADCRUMB: Breadcrumb,
    RecordKind.SESSION_SUMMARY: SessionSummary,
    RecordKind.MESSAGE: Message,
    RecordKind.NOTE: Note,
}

JSON_COLUMNS = ("tags", "meta")

TABLE_NAMES: dict[RecordKind, str] = {
    RecordKind.DECISION: "decisions",
    RecordKind.LEARNING: "learnings",
    RecordKind.BREADCRUMB: "breadcrumbs",
    RecordKind.SESSION_SUMMARY: "session_summaries",
    RecordKind.MESSAGE: "messages",
    RecordKind.NOTE: "notes",
}
