"""The tables, as SQLModel classes: the typed shape of every row.

The schema itself is created by the numbered migrations in ``recall/migrations`` (FTS5 tables and
triggers cannot be expressed here); a test checks these classes against the migrated file so the two
never drift. Rows are written only through ``recall.store`` so every text passes the scrubber and
every row gets its provenance from the write path.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from recall.rowkinds import (  # noqa: F401 - the names every row carries, re-exported
    JSON_COLUMNS,
    KIND_BY_CODE,
    KIND_CODES,
    TABLE_NAMES,
    TYPED_KINDS,
    Confidence,
    DecisionStatus,
    Provenance,
    RecordKind,
    index_rowid,
    split_rowid,
)


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
    valid_until: datetime | None = None
    source: str | None = None  # the caller's own note of where it came from (a URL, a ticket)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Learning(_Row, table=True):
    __tablename__ = "learnings"

    content: str
    detail: str | None = None
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    confidence: Confidence = Confidence.MEDIUM
    importance: int = 5
    session_id: int | None = Field(default=None, foreign_key="sessions.id")
    valid_until: datetime | None = None
    source: str | None = None  # the caller's own note of where it came from (a URL, a ticket)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Breadcrumb(_Row, table=True):
    __tablename__ = "breadcrumbs"

    content: str
    detail: str | None = None
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    importance: int = 5
    valid_until: datetime | None = None
    session_id: int | None = Field(default=None, foreign_key="sessions.id")
    source: str | None = None  # the caller's own note of where it came from (a URL, a ticket)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class SessionSummary(_Row, table=True):
    __tablename__ = "session_summaries"

    session_id: int | None = Field(default=None, foreign_key="sessions.id")
    title: str
    content: str
    importance: int = 5
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Note(_Row, table=True):
    """A markdown document a person or agent keeps at a path inside a project (m0012_notes)."""

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
