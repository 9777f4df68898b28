"""Writing what extraction found: records stamped ``extracted``, with lineage, in one transaction.

The extraction stage (recall.extract) decides what each candidate is: its fingerprint, the live
record it duplicates, the decisions it names as replaced. This module writes it (adr/0018):

* a fingerprint a person rejected is never written again;
* a near-duplicate refreshes the record it duplicates instead of adding one: its sources grow and an
  extracted record's ``updated_at`` moves. A record a person wrote is never edited, it only gains
  sources;
* a new record gets its lineage (rule, version, confidence, fingerprint, session) and sources;
* a decision that names what it replaces supersedes that decision when exactly one active decision
  matches and recall extracted it; the user's own, or several matches, are kept as a conflict;
* breadcrumbs describing where a session ended replace the session's earlier ones, and plan items a
  session closed expire breadcrumbs for the same item from before.

The session's extraction progress is written in the same transaction, so a crash either keeps the
whole result or re-extracts the session.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall.dbtime import to_db_time, utc_now
from recall.errors import InvalidInput, NotFound
from recall.rowkinds import KIND_CODES, TABLE_NAMES, Confidence, DecisionStatus, Provenance, RecordKind
from recall.store.records import check_content
from recall.store.synced import tombstone_records

if TYPE_CHECKING:
    from recall.store import Store
    from recall.store.writer import Writer

_ORDER = {RecordKind.DECISION: 0, RecordKind.LEARNING: 1, RecordKind.BREADCRUMB: 2}


@dataclass(frozen=True, slots=True)
class ExtractedRecord:
    """One record extraction wants written, decided up to what only the transaction can know."""

    kind: RecordKind
    content: str
    rule: str
    version: int
    confidence: float  # 0-1
    fingerprint: str
    sources: tuple[int, ...]  # message ids
    said_at: str | None = None  # becomes created_at
    detail: str | None = None
    valid_until: datetime | None = None
    importance: int = 5
    tail: bool = False  # says where the session ended: replaces the session's earlier such breadcrumbs
    plan_item: bool = False  # an item of the agent's plan: not written if a later session closed it
    duplicate_of: int | None = None  # a live record of the same kind and project saying the same
    replaces: tuple[int, ...] = ()  # decisions: the active decisions it names as replaced


@dataclass(frozen=True, slots=True)
class ExtractionBatch:
    """What extraction found in one session, and how far it read."""

    session_id: int
    project: str
    records: tuple[ExtractedRecord, ...]
    closures: tuple[tuple[str, str], ...]  # (fingerprint, closed_at) of plan items the session closed
    tail_rules: frozenset[str]  # the rules whose breadcrumbs say where a session ended
    read_up_to: int  # the session's last message ordinal


@dataclass(slots=True)
class ExtractionOutcome:
    added: Counter[str] = field(default_factory=Counter)  # per kind
    refreshed: int = 0
    skipped_rejected: int = 0
    superseded: int = 0
    conflicts: int = 0
    expired: int = 0

    def merge(self, other: ExtractionOutcome) -> None:
        self.added.update(other.added)
        self.refreshed += other.refreshed
        self.skipped_rejected += other.skipped_rejected
        self.superseded += other.superseded
        self.conflicts += other.conflicts
        self.expired += other.expired

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": dict(self.added),
            "refreshed": self.refreshed,
            "skipped_rejected": self.skipped_rejected,
            "superseded": self.superseded,
            "conflicts": self.conflicts,
            "expired": self.expired,
        }


def write_extraction(store: Store, batch: ExtractionBatch) -> ExtractionOutcome:
    outcome = ExtractionOutcome()
    with store.transaction() as writer:
        conn = store.connection
        now = to_db_time(utc_now()) or ""
        rejected = {
            (row[0], row[1])
            for row in conn.execute(
                "SELECT kind_code, fingerprint FROM extraction_rejections WHERE project = ?", (batch.project,)
            )
        }
        outcome.expired += _close_items(conn, writer, batch)
        kept_tail: set[int] = set()
        for record in sorted(batch.records, key=lambda r: (_ORDER[r.kind], -r.confidence)):
            if (KIND_CODES[record.kind], record.fingerprint) in rejected:
                outcome.skipped_rejected += 1
                continue
            if record.plan_item and _closed_since(conn, batch.project, record.fingerprint, record.said_at):
                continue
            match = _live(conn, record, now)
            if match is not None:
                outcome.refreshed += _refresh(conn, writer, record, match)
                row_id = int(match["id"])
            else:
                row_id = _insert(writer, batch, record)
                outcome.added[record.kind.value] += 1
                if record.replaces:
                    _supersede_or_flag(conn, writer, row_id, record.replaces, outcome)
            if record.tail:
                kept_tail.add(row_id)
        outcome.expired += _expire_replaced_tail(conn, writer, batch, kept_tail, now)
        writer.remember_extraction(batch.session_id, batch.read_up_to)
    return outcome


def _insert(writer: Writer, batch: ExtractionBatch, record: ExtractedRecord) -> int:
    values: dict[str, Any] = {
        "project": batch.project,
        "content": check_content(record.content),
        "detail": check_content(record.detail, "detail") if record.detail else None,
        "tags": [],
        "importance": record.importance,
        "session_id": batch.session_id,
    }
    if record.said_at:
        values["created_at"] = record.said_at
    if record.kind is RecordKind.BREADCRUMB:
        values["valid_until"] = record.valid_until
    else:
        values["confidence"] = confidence_level(record.confidence)
    row_id = writer.insert(TABLE_NAMES[record.kind], values, Provenance.EXTRACTED)
    code = KIND_CODES[record.kind]
    writer.record_lineage(
        code, row_id, record.rule, record.version, record.confidence, record.fingerprint, batch.session_id
    )
    writer.add_sources(code, row_id, record.sources)
    return row_id


def confidence_level(score: float) -> str:
    """The records' three-level confidence from the rule's 0-1 score."""
    if score >= 0.8:
        return Confidence.HIGH.value
    return Confidence.MEDIUM.value if score >= 0.6 else Confidence.LOW.value


def _live(conn: sqlite3.Connection, record: ExtractedRecord, now: str) -> sqlite3.Row | None:
    """The record this one duplicates, if it is still there and still in force."""
    if record.duplicate_of is None:
        return None
    live = {
        RecordKind.DECISION: "status = 'active' AND (valid_until IS NULL OR valid_until > :now)",
        RecordKind.BREADCRUMB: "(valid_until IS NULL OR valid_until > :now)",
        RecordKind.LEARNING: "(valid_until IS NULL OR valid_until > :now)",
    }[record.kind]
    until = "valid_until" if record.kind is RecordKind.BREADCRUMB else "NULL AS valid_until"
    return conn.execute(
        f"SELECT id, provenance, {until} FROM {TABLE_NAMES[record.kind]} WHERE id = :id AND {live}",
        {"id": record.duplicate_of, "now": now},
    ).fetchone()


def _refresh(conn: sqlite3.Connection, writer: Writer, record: ExtractedRecord, match: sqlite3.Row) -> int:
    """Sources appended; an extracted record's updated_at (and a breadcrumb's expiry) move. 1 if changed."""
    code = KIND_CODES[record.kind]
    if not writer.add_sources(code, int(match["id"]), record.sources):
        return 0
    if match["provenance"] != Provenance.EXTRACTED.value:
        return 1  # never edit what a person wrote: the sources are all it gains
    changes: dict[str, Any] = {}
    if record.kind is RecordKind.BREADCRUMB and record.valid_until is not None:
        later = to_db_time(record.valid_until) or ""
        if match["valid_until"] is not None and later > match["valid_until"]:
            changes["valid_until"] = record.valid_until
    writer.update(TABLE_NAMES[record.kind], int(match["id"]), changes)
    writer.update_lineage(code, int(match["id"]), confidence=record.confidence)
    return 1


def _supersede_or_flag(
    conn: sqlite3.Connection,
    writer: Writer,
    new_id: int,
    replaced: tuple[int, ...],
    outcome: ExtractionOutcome,
) -> None:
    """Supersede the one active decision named as replaced if recall extracted it; else flag a conflict."""
    marks = ", ".join("?" for _ in replaced)
    rows = conn.execute(
        f"SELECT id, provenance FROM decisions WHERE id IN ({marks}) AND status = 'active' AND id != ?",
        (*replaced, new_id),
    ).fetchall()
    if len(rows) == 1 and rows[0]["provenance"] == Provenance.EXTRACTED.value:
        writer.update(
            "decisions",
            int(rows[0]["id"]),
            {"status": DecisionStatus.SUPERSEDED.value, "superseded_by": new_id},
        )
        outcome.superseded += 1
    elif rows:
        writer.update_lineage(
            KIND_CODES[RecordKind.DECISION], new_id, conflicts_with=sorted(int(r["id"]) for r in rows)
        )
        outcome.conflicts += 1


def _close_items(conn: sqlite3.Connection, writer: Writer, batch: ExtractionBatch) -> int:
    """Remember closed plan items and expire live plan breadcrumbs for them said before the closing."""
    expired = 0
    for mark, closed_at in batch.closures:
        writer.remember_closure(batch.project, mark, closed_at, batch.session_id)
        rows = conn.execute(
            "SELECT b.id FROM breadcrumbs b JOIN extraction_lineage l ON l.kind_code = 3 AND l.record_id = b.id "
            "WHERE b.project = ? AND l.fingerprint = ? AND l.rule = 'plan' AND b.created_at <= ? "
            "AND (b.valid_until IS NULL OR b.valid_until > ?)",
            (batch.project, mark, closed_at, closed_at),
        ).fetchall()
        for row in rows:
            writer.update("breadcrumbs", int(row["id"]), {"valid_until": closed_at})
            expired += 1
    return expired


def _closed_since(conn: sqlite3.Connection, project: str, mark: str, said_at: str | None) -> bool:
    row = conn.execute(
        "SELECT closed_at FROM plan_closures WHERE project = ? AND fingerprint = ?", (project, mark)
    ).fetchone()
    return row is not None and (said_at is None or row["closed_at"] > said_at)


def _expire_replaced_tail(
    conn: sqlite3.Connection, writer: Writer, batch: ExtractionBatch, kept: set[int], now: str
) -> int:
    """The session's earlier "where it ended" breadcrumbs that its latest end no longer produces."""
    rules = sorted(batch.tail_rules)
    rows = conn.execute(
        "SELECT b.id FROM breadcrumbs b JOIN extraction_lineage l ON l.kind_code = 3 AND l.record_id = b.id "
        f"WHERE l.session_id = ? AND l.rule IN ({', '.join('?' for _ in rules)}) "
        "AND (b.valid_until IS NULL OR b.valid_until > ?)",
        (batch.session_id, *rules, now),
    ).fetchall()
    stale = [int(row["id"]) for row in rows if int(row["id"]) not in kept]
    for row_id in stale:
        writer.update("breadcrumbs", row_id, {"valid_until": now})
    return len(stale)


# -- reading lineage, review ---------------------------------------------------------------------


def lineage_of(conn: sqlite3.Connection, kind: RecordKind, row_id: int) -> dict[str, Any]:
    """``sources`` (message ids, in order) and ``extraction`` (None unless recall extracted it)."""
    code = KIND_CODES[kind]
    sources = [
        int(row[0])
        for row in conn.execute(
            "SELECT message_id FROM record_sources WHERE kind_code = ? AND record_id = ? ORDER BY message_id",
            (code, row_id),
        )
    ]
    row = conn.execute(
        "SELECT rule, rule_version, confidence, review, session_id, conflicts_with FROM extraction_lineage "
        "WHERE kind_code = ? AND record_id = ?",
        (code, row_id),
    ).fetchone()
    extraction = None
    if row is not None:
        extraction = {**dict(row), "conflicts_with": json.loads(row["conflicts_with"])}
    return {"sources": sources, "extraction": extraction}


def accept(conn: sqlite3.Connection, writer: Writer, kind: RecordKind, row_id: int) -> None:
    _require_extracted(conn, kind, row_id)
    writer.update_lineage(KIND_CODES[kind], row_id, review="accepted")


def reject(conn: sqlite3.Connection, writer: Writer, kind: RecordKind, row_id: int) -> None:
    """Remember the wording as rejected, delete the record, and give back what it superseded."""
    lineage = _require_extracted(conn, kind, row_id)
    project = conn.execute(f"SELECT project FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()[0]
    writer.remember_rejection(project, KIND_CODES[kind], lineage["fingerprint"])
    if kind is RecordKind.DECISION:
        replaced = conn.execute(
            "SELECT id FROM decisions WHERE superseded_by = ? AND status = 'superseded'", (row_id,)
        ).fetchall()
        for row in replaced:
            writer.update(
                "decisions", int(row[0]), {"status": DecisionStatus.ACTIVE.value, "superseded_by": None}
            )
    tombstone_records(conn, writer, kind, "?", [row_id])  # rejected for the team too (adr/0039)
    conn.execute(f"DELETE FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,))


def _require_extracted(conn: sqlite3.Connection, kind: RecordKind, row_id: int) -> sqlite3.Row:
    exists = conn.execute(f"SELECT provenance FROM {TABLE_NAMES[kind]} WHERE id = ?", (row_id,)).fetchone()
    if exists is None:
        raise NotFound(f"no {kind.value} with id {row_id}; `recall review` lists the ids")
    row = conn.execute(
        "SELECT fingerprint, review FROM extraction_lineage WHERE kind_code = ? AND record_id = ?",
        (KIND_CODES[kind], row_id),
    ).fetchone()
    if row is None:
        raise InvalidInput(
            f"{kind.value} {row_id} is {exists[0]}, not extracted; only extracted records are reviewed "
            f"(use `recall forget {kind.value} {row_id}` to delete it)"
        )
    return row


def reset(conn: sqlite3.Connection, project: str | None) -> int:
    """Delete unreviewed extracted records, closures and progress, so sessions are extracted again.

    Accepted records stay (a person vouched for them) and so do rejections.
    """
    scope, params = ("project = ?", [project]) if project else ("1", [])
    removed = 0
    for kind in (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB):
        removed += conn.execute(
            f"DELETE FROM {TABLE_NAMES[kind]} WHERE provenance = 'extracted' AND {scope} AND id NOT IN "
            f"(SELECT record_id FROM extraction_lineage WHERE kind_code = {KIND_CODES[kind]} "
            "AND review = 'accepted')",
            params,
        ).rowcount
    conn.execute(f"DELETE FROM plan_closures WHERE {scope}", params)
    conn.execute(
        f"DELETE FROM extraction_progress WHERE session_id IN (SELECT id FROM sessions WHERE {scope})", params
    )
    return removed


# -- what the briefs need ------------------------------------------------------------------------


def confident_clause(kind: RecordKind, alias: str, threshold: float) -> str:
    """SQL true for a row of ``kind`` that is not extracted, or extracted and confident or accepted."""
    return (
        f"({alias}.provenance != 'extracted' OR EXISTS (SELECT 1 FROM extraction_lineage l "
        f"WHERE l.kind_code = {KIND_CODES[kind]} AND l.record_id = {alias}.id "
        f"AND (l.confidence >= {float(threshold)} OR l.review = 'accepted')))"
    )


@dataclass(frozen=True, slots=True)
class ExtractedFacts:
    """What a brief says about an extracted record: whether it is confident, where it was said."""

    confident: bool
    session: str | None
    conflicts_with: tuple[int, ...]


def extracted_facts(
    conn: sqlite3.Connection, kind: RecordKind, ids: list[int], threshold: float
) -> dict[int, ExtractedFacts]:
    """Facts for those of ``ids`` that are extracted records of ``kind``; confident from ``threshold`` on."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT l.record_id, l.confidence, l.review, l.conflicts_with, s.host, substr(s.started_at, 1, 10) AS day, "
        "coalesce(s.title, (SELECT title FROM session_summaries WHERE session_id = s.id)) AS title "
        "FROM extraction_lineage l LEFT JOIN sessions s ON s.id = l.session_id "
        f"WHERE l.kind_code = ? AND l.record_id IN ({marks})",
        (KIND_CODES[kind], *ids),
    ).fetchall()
    facts: dict[int, ExtractedFacts] = {}
    for row in rows:
        label = None
        if row["host"]:
            title = f" “{_short(row['title'])}”" if row["title"] else ""
            label = f"{row['host']} session{title}" + (f" of {row['day']}" if row["day"] else "")
        facts[int(row["record_id"])] = ExtractedFacts(
            confident=row["confidence"] >= threshold or row["review"] == "accepted",
            session=label,
            conflicts_with=tuple(json.loads(row["conflicts_with"])),
        )
    return facts


def _short(title: str, limit: int = 48) -> str:
    flat = " ".join(title.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
