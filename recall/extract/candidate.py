"""What a rule proposes: a record not yet written, with its lineage.

A candidate names its rule; the rule's version is looked up here, so the lineage of every written
record says which rule and which version of it produced the record. Bump a rule's version whenever
its behaviour changes: records keep the version that made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from recall.rowkinds import RecordKind

RULE_VERSIONS: dict[str, int] = {
    "plan": 1,  # unfinished items of the agent's own plan (TodoWrite, tasks, update_plan, Cursor todos)
    "unanswered_request": 1,  # the last request of the session got no answer
    "next_steps": 1,  # a "next steps" / "remaining" list in the agent's closing message
    "user_rule": 1,  # a rule or choice the user stated
    "user_answer": 1,  # the user's answer to the agent's multiple-choice question
    "approved_plan": 1,  # a plan the user approved (Claude Code plan mode)
    "accepted_proposal": 1,  # the agent proposed an approach and the user said yes
    "stated_decision": 1,  # the agent says the session chose something, and why
    "fix_after_failure": 1,  # a command failed, things changed, the same command passed
    "stated_finding": 1,  # the agent stated a root cause, a gotcha, how something behaves
    "user_correction": 1,  # the user corrected the agent
    "memory_file": 1,  # a line the agent added to CLAUDE.md, AGENTS.md, .cursor/rules, memory notes
    "memory_note": 1,  # a Claude Code memory note the user saved ("# always ...")
}
# Rules that describe where a session ended: a later extraction of the same session replaces them.
TAIL_RULES = frozenset({"plan", "unanswered_request", "next_steps"})
BREADCRUMB_DAYS = {"plan": 14, "unanswered_request": 7, "next_steps": 14}


@dataclass(frozen=True, slots=True)
class Candidate:
    kind: RecordKind
    content: str
    rule: str
    confidence: float  # 0-1: how sure the rule is that this is a true memory
    sources: tuple[int, ...]  # message ids, the most telling first
    said_at: str | None = None  # when it was said; the record's created_at
    detail: str | None = None
    valid_until: datetime | None = None  # breadcrumbs
    replaces: str | None = None  # decisions: what a "switch from X to Y" names as X
    importance: int = 5

    @property
    def version(self) -> int:
        return RULE_VERSIONS[self.rule]

    @property
    def tail(self) -> bool:
        return self.rule in TAIL_RULES


@dataclass(frozen=True, slots=True)
class Closure:
    """A plan item a session completed or dropped: breadcrumbs for it from before then expire."""

    text: str
    closed_at: str


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the rules found in one session's new messages, before any is checked against the store."""

    project: str
    candidates: tuple[Candidate, ...]
    closures: tuple[tuple[str, str], ...]  # (fingerprint, closed_at) of plan items the session closed
    last_ordinal: int  # how far the session was read


def breadcrumb_expiry(rule: str, ended: datetime | None) -> datetime | None:
    """Breadcrumbs expire a while after the session that left them, not after the import."""
    return None if ended is None else ended + timedelta(days=BREADCRUMB_DAYS[rule])
