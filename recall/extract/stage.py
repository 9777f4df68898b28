"""The extraction stage: run every rule over the sessions an import or dump changed, and write.

One function, ``extract_sessions``, called from one place after messages are stored
(recall.ingest). Each session is read from just after where extraction last stopped, and its result
is written in its own transaction together with the new stopping point, so an interrupted run
resumes where it was and a second import of the same transcripts writes nothing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall.extract.candidate import TAIL_RULES, Analysis, Candidate
from recall.extract.decisions import (
    accepted_proposals,
    approved_plans,
    stated_decisions,
    user_answers,
    user_rules,
)
from recall.extract.learnings import fixes_after_failures, stated_findings, user_corrections
from recall.extract.memory_files import memory_file_lines, memory_notes
from recall.extract.plans import plan_candidates
from recall.extract.prepare import prepare
from recall.extract.requests import next_steps, unanswered_request
from recall.extract.session import SessionView, load_session
from recall.extract.text import fingerprint
from recall.rowkinds import RecordKind
from recall.store.extracted import ExtractionBatch, ExtractionOutcome

if TYPE_CHECKING:
    from recall.extract.ahead import ExtractionAhead
    from recall.store import Store

log = logging.getLogger(__name__)

Rule = Callable[[SessionView], list[Candidate]]
RULES: tuple[Rule, ...] = (
    user_answers,
    approved_plans,
    memory_notes,
    memory_file_lines,
    fixes_after_failures,
    user_rules,
    accepted_proposals,
    user_corrections,
    stated_decisions,
    stated_findings,
    unanswered_request,
    next_steps,
)
RECORDS_PER_100 = 4  # at most this many text-rule records per 100 new messages
MIN_PER_SESSION = 2
STRUCTURED = 0.75  # candidates at or above this confidence (structured signals) are never capped
Progress = Callable[[int, int], None]  # (sessions done, sessions total)


@dataclass(slots=True)
class ExtractionReport:
    sessions: int = 0
    outcome: ExtractionOutcome = field(default_factory=ExtractionOutcome)
    errors: list[str] = field(default_factory=list)

    def merge(self, other: ExtractionReport) -> None:
        self.sessions += other.sessions
        self.outcome.merge(other.outcome)
        self.errors.extend(other.errors)

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, **self.outcome.to_dict(), "errors": self.errors[:10]}


def extract_sessions(
    store: Store,
    session_ids: Iterable[int],
    progress: Progress | None = None,
    ahead: Mapping[int, ExtractionAhead] | None = None,
) -> ExtractionReport:
    """Extract from each session's messages that extraction has not read yet. ``ahead`` holds, by
    session id, what a read-ahead worker found in sessions this import created (recall.extract.ahead)."""
    report = ExtractionReport()
    ids = list(dict.fromkeys(session_ids))
    for done, session_id in enumerate(ids):
        if progress:
            progress(done, len(ids))
        try:
            outcome = extract_session(store, session_id, (ahead or {}).get(session_id))
        except Exception as exc:  # a rule's bug must not lose the import that already committed
            log.exception("extraction failed for session %s", session_id)
            report.errors.append(f"session {session_id}: {type(exc).__name__}: {exc}")
            continue
        if outcome is not None:
            report.sessions += 1
            report.outcome.merge(outcome)
    if progress:
        progress(len(ids), len(ids))
    return report


def extract_session(
    store: Store, session_id: int, ahead: ExtractionAhead | None = None
) -> ExtractionOutcome | None:
    """None when the session has no message extraction has not read."""
    start = read_up_to(store, session_id)
    found = ahead.placed(store, session_id) if ahead is not None and start < 0 else None
    if found is None:
        view = load_session(store, session_id, start)
        if view is None:
            return None
        found = analyse(view)
    batch = ExtractionBatch(
        session_id=session_id,
        project=found.project,
        records=tuple(prepare(store, found.project, list(found.candidates))),
        closures=found.closures,
        tail_rules=TAIL_RULES,
        read_up_to=found.last_ordinal,
    )
    return store.write_extraction(batch)


def analyse(view: SessionView) -> Analysis:
    """What the rules find in a session's new messages, before any is checked against the store."""
    plan, closures = plan_candidates(view)
    found = [candidate for rule in RULES for candidate in rule(view)]
    return Analysis(
        project=view.project,
        candidates=tuple(plan + _within_budget(view, found)),
        closures=tuple((fingerprint(RecordKind.BREADCRUMB.value, c.text), c.closed_at) for c in closures),
        last_ordinal=view.last_ordinal,
    )


def read_up_to(store: Store, session_id: int) -> int:
    with store.reading() as conn:
        row = conn.execute(
            "SELECT last_ordinal FROM extraction_progress WHERE session_id = ?", (session_id,)
        ).fetchone()
    return -1 if row is None else int(row[0])


def _within_budget(view: SessionView, found: list[Candidate]) -> list[Candidate]:
    """One candidate per wording, the most confident first; the less certain text rules capped."""
    best: dict[str, Candidate] = {}
    for candidate in sorted(found, key=lambda c: -c.confidence):
        best.setdefault(fingerprint(candidate.kind.value, candidate.content), candidate)
    unique = list(best.values())
    new_messages = view.last_ordinal - view.first_new + 1
    budget = max(MIN_PER_SESSION, math.ceil(new_messages * RECORDS_PER_100 / 100))
    capped = [c for c in unique if not c.tail and c.confidence < STRUCTURED]
    return [c for c in unique if c.tail or c.confidence >= STRUCTURED] + capped[:budget]
