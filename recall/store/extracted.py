"""Writing what extraction found: records stamped ``extracted``, with lineage, in one transaction.

The rules propose candidates; this module decides what each becomes (adr/0018):

* a fingerprint a person rejected is never written again;
* a near-duplicate of an existing record of the same kind and project (found through the keyword
  index, compared on content words) refreshes that record instead: its sources grow and an
  extracted record's ``updated_at`` moves. A ``user_authored`` record is never edited, it only gains
  sources;
* a new record gets its lineage (rule, version, confidence, fingerprint, session) and sources;
* a decision that names what it replaces supersedes that decision when exactly one active extracted
  decision matches; a match that is the user's own, or several matches, is kept as a conflict;
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
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput, NotFound
from recall.extract.candidate import TAIL_RULES
from recall.extract.text import NEAR_DUPLICATE, fingerprint, similarity, word_set
from recall.models import KIND_CODES, TABLE_NAMES, Confidence, DecisionStatus, Provenance, RecordKind
from recall.store.records import check_content
from recall.store.writer import Writer, to_db_time, utc_now

if TYPE_CHECKING:
    from recall.extract.candidate import Candidate, Closure
    from recall.store import Store

_ORDER = {RecordKind.DECISION: 0, RecordKind.LEARNING: 1, RecordKind.BREADCRUMB: 2}


@dataclass(frozen=True, slots=True)
class ExtractionBatch:
    """What extraction found in one session, and how far it read."""

    session_id: int
    project: str
    candidates: tuple[Candidate, ...]
    closures: tuple[Closure, ...]
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
        kept_tail: set[tuple[int, int]] = set()
        for candidate in sorted(batch.candidates, key=lambda c: (_ORDER[c.kind], -c.confidence)):
            code = KIND_CODES[candidate.kind]
            mark = fingerprint(candidate.kind.value, candidate.content)
            if (code, mark) in rejected:
                outcome.skipped_rejected += 1
                continue
            if candidate.rule == "plan" and _closed_since(conn, batch.project, mark, candidate.said_at):
                continue
            match = _near_duplicate(conn, batch.project, candidate, now)
            if match is not None:
                outcome.refreshed += _refresh(conn, writer, candidate, match)
                row_id = int(match["id"])
            else:
                row_id = _insert(conn, writer, batch, candidate, mark)
                outcome.added[candidate.kind.value] += 1
                if candidate.kind is RecordKind.DECISION and candidate.replaces:
                    _supersede_or_flag(conn, writer, batch.project, row_id, candidate.replaces, outcome)
            if candidate.tail:
                kept_tail.add((code, row_id))
        outcome.expired += _expire_replaced_tail(conn, writer, batch.session_id, kept_tail, now)
        writer.remember_extraction(batch.session_id, batch.read_up_to)
    return outcome


def _insert(
    conn: sqlite3.Connection, writer: Writer, batch: ExtractionBatch, candidate: Candidate, mark: str
) -> int:
    values: dict[str, Any] = {
        "project": batch.project,
        "content": check_content(candidate.content),
        "detail": check_content(candidate.detail, "detail") if candidate.detail else None,
        "tags": [],
        "importance": candidate.importance,
        "session_id": batch.session_id,
    }
    if candidate.said_at:
        values["created_at"] = candidate.said_at
    if candidate.kind is RecordKind.BREADCRUMB:
        values["valid_until"] = candidate.valid_until
    else:
        values["confidence"] = confidence_level(candidate.confidence)
    row_id = writer.insert(TABLE_NAMES[candidate.kind], values, Provenance.EXTRACTED)
    code = KIND_CODES[candidate.kind]
    writer.record_lineage(
        code, row_id, candidate.rule, candidate.version, candidate.confidence, mark, batch.session_id
    )
    writer.add_sources(code, row_id, candidate.sources)
    return row_id


def confidence_level(score: float) -> str:
    """The records' three-level confidence from the rule's 0-1 score."""
    if score >= 0.8:
        return Confidence.HIGH.value
    return Confidence.MEDIUM.value if score >= 0.6 else Confidence.LOW.value


def _near_duplicate(
    conn: sqlite3.Connection, project: str, candidate: Candidate, now: str
) -> sqlite3.Row | None:
    """The closest live record of the same kind and project saying the same thing, if any."""
    from recall.search.keyword import keyword_candidates

    table = TABLE_NAMES[candidate.kind]
    scored = keyword_candidates(
        conn, candidate.content.lower(), project=project, table=candidate.kind, depth=8
    )
    ids = [rowid // 8 for rowid in scored]
    if not ids:
        return None
    live = {
        RecordKind.DECISION: "status = 'active'",
        RecordKind.BREADCRUMB: "(valid_until IS NULL OR valid_until > :now)",
        RecordKind.LEARNING: "1",
    }[candidate.kind]
    marks = ", ".join(str(i) for i in ids)
    rows = conn.execute(
        f"SELECT id, provenance, content, {'valid_until' if candidate.kind is RecordKind.BREADCRUMB else 'NULL'} "
        f"AS valid_until FROM {table} WHERE id IN ({marks}) AND {live}",
        {"now": now},
    ).fetchall()
    wanted = word_set(candidate.content)
    best = max(rows, key=lambda row: similarity(wanted, word_set(row["content"])), default=None)
    if best is None or similarity(wanted, word_set(best["content"])) < NEAR_DUPLICATE:
        return None
    return best


def _refresh(conn: sqlite3.Connection, writer: Writer, candidate: Candidate, match: sqlite3.Row) -> int:
    """Sources appended; an extracted record's updated_at (and a breadcrumb's expiry) move. 1 if changed."""
    code = KIND_CODES[candidate.kind]
    if not writer.add_sources(code, int(match["id"]), candidate.sources):
        return 0
    if match["provenance"] != Provenance.EXTRACTED.value:
        return 1  # never edit what a person wrote: the sources are all it gains
    changes: dict[str, Any] = {}
    if candidate.kind is RecordKind.BREADCRUMB and candidate.valid_until is not None:
        later = to_db_time(candidate.valid_until) or ""
        if match["valid_until"] is not None and later > match["valid_until"]:
            changes["valid_until"] = candidate.valid_until
    writer.update(TABLE_NAMES[candidate.kind], int(match["id"]), changes)
    writer.update_lineage(code, int(match["id"]), confidence=candidate.confidence)
    return 1


def _supersede_or_flag(
    conn: sqlite3.Connection,
    writer: Writer,
    project: str,
    new_id: int,
    replaced: str,
    outcome: ExtractionOutcome,
) -> None:
    """Supersede the one active extracted decision that names what the new one replaces, or flag a conflict."""
    wanted = word_set(replaced)
    if not wanted:
        return
    rows = conn.execute(
        "SELECT id, provenance, content FROM decisions WHERE project = ? AND status = 'active' AND id != ?",
        (project, new_id),
    ).fetchall()
    matches = [row for row in rows if wanted <= word_set(row["content"])]
    if len(matches) == 1 and matches[0]["provenance"] == Provenance.EXTRACTED.value:
        writer.update(
            "decisions",
            int(matches[0]["id"]),
            {"status": DecisionStatus.SUPERSEDED.value, "superseded_by": new_id},
        )
        outcome.superseded += 1
    elif matches:
        writer.update_lineage(
            KIND_CODES[RecordKind.DECISION], new_id, conflicts_with=sorted(int(row["id"]) for row in matches)
        )
        outcome.conflicts += 1


def _close_items(conn: sqlite3.Connection, writer: Writer, batch: ExtractionBatch) -> int:
    """Remember closed plan items and expire live plan breadcrumbs for them said before the closing."""
    expired = 0
    for closure in batch.closures:
        mark = fingerprint(RecordKind.BREADCRUMB.value, closure.text)
        writer.remember_closure(batch.project, mark, closure.closed_at, batch.session_id)
        rows = conn.execute(
            "SELECT b.id FROM breadcrumbs b JOIN extraction_lineage l ON l.kind_code = 3 AND l.record_id = b.id "
            "WHERE b.project = ? AND l.fingerprint = ? AND l.rule = 'plan' AND b.created_at <= ? "
            "AND (b.valid_until IS NULL OR b.valid_until > ?)",
            (batch.project, mark, closure.closed_at, closure.closed_at),
        ).fetchall()
        for row in rows:
            writer.update("breadcrumbs", int(row["id"]), {"valid_until": closure.closed_at})
            expired += 1
    return expired


def _closed_since(conn: sqlite3.Connection, project: str, mark: str, said_at: str | None) -> bool:
    row = conn.execute(
        "SELECT closed_at FROM plan_closures WHERE project = ? AND fingerprint = ?", (project, mark)
    ).fetchone()
    return row is not None and (said_at is None or row["closed_at"] > said_at)


def _expire_replaced_tail(
    conn: sqlite3.Connection, writer: Writer, session_id: int, kept: set[tuple[int, int]], now: str
) -> int:
    """The session's earlier "where it ended" breadcrumbs that its latest end no longer produces."""
    rows = conn.execute(
        "SELECT b.id FROM breadcrumbs b JOIN extraction_lineage l ON l.kind_code = 3 AND l.record_id = b.id "
        f"WHERE l.session_id = ? AND l.rule IN ({', '.join('?' for _ in TAIL_RULES)}) "
        "AND (b.valid_until IS NULL OR b.valid_until > ?)",
        (session_id, *sorted(TAIL_RULES), now),
    ).fetchall()
    stale = [int(row["id"]) for row in rows if (3, int(row["id"])) not in kept]
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


def confident_clause(kind: RecordKind, alias: str) -> str:
    """SQL true for a row of ``kind`` that is not extracted, or extracted and confident or accepted."""
    from recall.extract import CONFIDENT

    return (
        f"({alias}.provenance != 'extracted' OR EXISTS (SELECT 1 FROM extraction_lineage l "
        f"WHERE l.kind_code = {KIND_CODES[kind]} AND l.record_id = {alias}.id "
        f"AND (l.confidence >= {CONFIDENT} OR l.review = 'accepted')))"
    )


@dataclass(frozen=True, slots=True)
class ExtractedFacts:
    """What a brief says about an extracted record: whether it is confident, where it was said."""

    confident: bool
    session: str | None
    conflicts_with: tuple[int, ...]


def extracted_facts(conn: sqlite3.Connection, kind: RecordKind, ids: list[int]) -> dict[int, ExtractedFacts]:
    """Facts for those of ``ids`` that are extracted records of ``kind``."""
    from recall.extract import CONFIDENT

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
            confident=row["confidence"] >= CONFIDENT or row["review"] == "accepted",
            session=label,
            conflicts_with=tuple(json.loads(row["conflicts_with"])),
        )
    return facts


def _short(title: str, limit: int = 48) -> str:
    flat = " ".join(title.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
