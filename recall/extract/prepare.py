"""From candidates to what the store writes: fingerprints, near-duplicates, replaced decisions.

A near-duplicate is found through the keyword index (records sharing words with the candidate, of the
same kind and project, still in force) and confirmed on content words (recall.extract.text). What a
decision replaces ("switch from X to Y") is matched against the project's active decisions the same
way. Both are read before the write; the store re-checks that the records are still there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall.extract.candidate import Candidate
from recall.extract.text import NEAR_DUPLICATE, fingerprint, similarity, word_set
from recall.rowkinds import TABLE_NAMES, RecordKind, split_rowid
from recall.store.extracted import ExtractedRecord
from recall.store.writer import to_db_time, utc_now

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

_LIVE = {
    RecordKind.DECISION: "status = 'active' AND (valid_until IS NULL OR valid_until > :now)",
    RecordKind.BREADCRUMB: "(valid_until IS NULL OR valid_until > :now)",
    RecordKind.LEARNING: "(valid_until IS NULL OR valid_until > :now)",
}


def prepare(store: Store, project: str, candidates: list[Candidate]) -> list[ExtractedRecord]:
    """One record per memory (the most confident wording wins), each with what it duplicates or replaces."""
    kept: list[Candidate] = []
    for candidate in sorted(candidates, key=lambda c: -c.confidence):
        words = word_set(candidate.content)
        if not any(
            c.kind is candidate.kind and similarity(words, word_set(c.content)) >= NEAR_DUPLICATE
            for c in kept
        ):
            kept.append(candidate)
    now = to_db_time(utc_now()) or ""
    with store.reading() as conn:
        return [
            ExtractedRecord(
                kind=c.kind,
                content=c.content,
                rule=c.rule,
                version=c.version,
                confidence=c.confidence,
                fingerprint=fingerprint(c.kind.value, c.content),
                sources=c.sources,
                said_at=c.said_at,
                detail=c.detail,
                valid_until=c.valid_until,
                importance=c.importance,
                tail=c.tail,
                plan_item=c.rule == "plan",
                duplicate_of=_duplicate_of(conn, project, c, now),
                replaces=_replaced(conn, project, c.replaces) if c.replaces else (),
            )
            for c in kept
        ]


def _duplicate_of(conn: sqlite3.Connection, project: str, candidate: Candidate, now: str) -> int | None:
    """The closest live record of the same kind and project saying the same thing, if any."""
    from recall.search.keyword import keyword_rowids
    from recall.search.project_bm25 import RESCORE_DEPTH

    # Every candidate FTS5 ranks (up to the depth it would re-score) is judged on its words: ranking
    # them again with the project's statistics to keep eight cost a tenth of an import (adr/0042).
    found = keyword_rowids(
        conn, candidate.content.lower(), project=project, table=candidate.kind, depth=RESCORE_DEPTH
    )
    if not found:
        return None
    ids = ", ".join(str(split_rowid(rowid)[1]) for rowid in found)
    rows = conn.execute(
        f"SELECT id, content FROM {TABLE_NAMES[candidate.kind]} WHERE id IN ({ids}) AND {_LIVE[candidate.kind]}",
        {"now": now},
    ).fetchall()
    wanted = word_set(candidate.content)
    scores = [(similarity(wanted, word_set(row["content"])), int(row["id"])) for row in rows]
    best = max(scores, default=(0.0, 0))
    return best[1] if best[0] >= NEAR_DUPLICATE else None


def _replaced(conn: sqlite3.Connection, project: str, subject: str) -> tuple[int, ...]:
    """Active decisions of the project that mention every content word of what is being replaced."""
    wanted = word_set(subject)
    if not wanted:
        return ()
    rows = conn.execute(
        "SELECT id, content FROM decisions WHERE project = ? AND status = 'active'", (project,)
    ).fetchall()
    return tuple(int(row["id"]) for row in rows if wanted <= word_set(row["content"]))
