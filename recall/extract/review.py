"""Reviewing extracted records: list those awaiting review with the lines they came from, accept, reject.

An accepted record counts as confident (it enters the briefs whatever the rule's confidence); a
rejected one is deleted and its fingerprint remembered, so no later import or rebuild writes it again.
Records are named by their ref, ``kind#id`` (``decision#12``), as everywhere in recall.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from recall.extract.text import clip
from recall.kinds import TYPED, Ref
from recall.rowkinds import KIND_BY_CODE, TABLE_NAMES, RecordKind

if TYPE_CHECKING:
    from recall.store import Store

SOURCE_CHARS = 300


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One message a record came from, as a reviewer reads it."""

    message_id: int
    role: str
    origin: str
    kind: str
    tool_name: str | None
    timestamp: str | None
    excerpt: str


@dataclass(frozen=True, slots=True)
class ReviewItem:
    ref: str  # decision#12
    kind: str
    id: int
    project: str
    content: str
    detail: str | None
    rule: str
    rule_version: int
    confidence: float
    session_id: int | None
    session_title: str | None
    host: str | None
    created_at: str
    sources: tuple[SourceLine, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_ref(text: str) -> tuple[RecordKind, int]:
    ref = Ref.parse(text, allowed=TYPED)
    kind = ref.kind.record
    assert kind is not None
    return kind, ref.id


def awaiting_review(store: Store, project: str | None = None, limit: int = 100) -> list[ReviewItem]:
    """Extracted records nobody accepted yet, most confident first, each with its source lines."""
    scope = "AND r.project = :project" if project else ""
    queries = [
        f"SELECT {code} AS kind_code, r.id AS id, r.project AS project, r.content AS content, "
        f"r.detail AS detail, r.created_at AS created_at, l.rule AS rule, l.rule_version AS rule_version, "
        f"l.confidence AS confidence, l.session_id AS session_id, s.host AS host, coalesce(s.title, "
        f"(SELECT title FROM session_summaries WHERE session_id = s.id)) AS title "
        f"FROM {TABLE_NAMES[kind]} r "
        f"JOIN extraction_lineage l ON l.kind_code = {code} AND l.record_id = r.id "
        f"LEFT JOIN sessions s ON s.id = l.session_id WHERE l.review = 'pending' {scope}"
        for code, kind in KIND_BY_CODE.items()
        if kind in (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB)
    ]
    sql = " UNION ALL ".join(queries) + " ORDER BY confidence DESC, created_at DESC LIMIT :limit"
    with store.reading() as conn:
        rows = conn.execute(sql, {"project": project, "limit": limit}).fetchall()
        return [_item(conn, row) for row in rows]


def _item(conn: Any, row: Any) -> ReviewItem:
    kind = KIND_BY_CODE[row["kind_code"]]
    sources = conn.execute(
        "SELECT m.id, m.role, m.origin, m.kind, m.tool_name, m.timestamp, m.content FROM record_sources rs "
        "JOIN messages m ON m.id = rs.message_id WHERE rs.kind_code = ? AND rs.record_id = ? ORDER BY m.ordinal",
        (row["kind_code"], row["id"]),
    ).fetchall()
    return ReviewItem(
        ref=f"{kind.value}#{row['id']}",
        kind=kind.value,
        id=row["id"],
        project=row["project"],
        content=row["content"],
        detail=row["detail"],
        rule=row["rule"],
        rule_version=row["rule_version"],
        confidence=round(row["confidence"], 2),
        session_id=row["session_id"],
        session_title=row["title"],
        host=row["host"],
        created_at=row["created_at"],
        sources=tuple(
            SourceLine(
                s["id"],
                s["role"],
                s["origin"],
                s["kind"],
                s["tool_name"],
                s["timestamp"],
                clip(s["content"], SOURCE_CHARS),
            )
            for s in sources
        ),
    )


def accept(store: Store, refs: Iterable[str]) -> list[dict[str, Any]]:
    """Accept each named record; all names are checked before anything changes."""
    parsed = [parse_ref(ref) for ref in refs]
    return [store.accept_extracted(kind, row_id) for kind, row_id in parsed]


def reject(store: Store, refs: Iterable[str]) -> list[str]:
    """Reject each named record: deleted, and its wording never extracted again."""
    parsed = [parse_ref(ref) for ref in refs]
    for kind, row_id in parsed:
        store.reject_extracted(kind, row_id)
    return [f"{kind.value}#{row_id}" for kind, row_id in parsed]
