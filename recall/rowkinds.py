"""What every row is, in names and numbers: its kind, provenance and status, and the codes and tables
of the kinds.

Kept apart from the SQLModel classes (recall.models) because nearly every module needs these and
importing SQLModel and SQLAlchemy costs a short command most of its start-up (adr/0030).
"""

from __future__ import annotations

from enum import StrEnum


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


JSON_COLUMNS = ("tags", "meta")

TABLE_NAMES: dict[RecordKind, str] = {
    RecordKind.DECISION: "decisions",
    RecordKind.LEARNING: "learnings",
    RecordKind.BREADCRUMB: "breadcrumbs",
    RecordKind.SESSION_SUMMARY: "session_summaries",
    RecordKind.MESSAGE: "messages",
    RecordKind.NOTE: "notes",
}
