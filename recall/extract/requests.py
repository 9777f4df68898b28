"""Breadcrumbs from how a session ended: a request left unanswered, a "next steps" list.

Both read the end of the session only, and both are re-read when the session grows: a request
answered later, or a list superseded by a later message, stops being where work was left.
"""

from __future__ import annotations

import re

from recall.extract.candidate import Candidate, breadcrumb_expiry
from recall.extract.session import SessionView, Turn
from recall.extract.text import clip, content_words, lines, prose, sentences
from recall.rowkinds import RecordKind

MAX_STEPS = 5
_TRIVIAL = re.compile(
    r"^(?:continue|go on|go ahead|proceed|ok(?:ay)?|thanks?(?: you)?|ty|yes|yep|no|nope|y|n|done|"
    r"sure|good|great|cool|nice|perfect|lgtm|commit|push|retry|again|stop)\W*$",
    re.IGNORECASE,
)
_INTERRUPTED = "[Request interrupted"
_STEPS_HEADING = re.compile(
    r"^(?:#+\s*|\*\*)?(?:next steps?|remaining(?: work| tasks| items)?|still (?:to do|todo|open|needs? to be done)|"
    r"to ?do|not (?:yet )?done|follow[- ]?ups?|open items|what'?s left|left to do|pending(?: tasks| work)?)"
    r"\b[^:\n]{0,40}(?::\**|\*\*:?)?\s*$",
    re.IGNORECASE,
)
_INLINE_STEP = re.compile(
    r"^\**(?:next steps?|remaining|still to do|to ?do|follow[- ]?ups?)\**\s*:\**\s*(\S.{5,})$", re.IGNORECASE
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)]|\[ \])\s+(.+)$")


def unanswered_request(view: SessionView) -> list[Candidate]:
    """The session's last request, when no answer followed it (interrupted, or the session stopped)."""
    if view.subagent:
        return []
    last = next((t for t in reversed(view.turns) if t.human), None)
    if last is None or _trivial(last.content):
        return []
    after = [t for t in view.turns if t.ordinal > last.ordinal]
    answered_at = max((t.ordinal for t in after if t.agent_text and not t.aside), default=None)
    tail = [t for t in after if answered_at is None or t.ordinal > answered_at]
    interrupted = any(t.content.startswith(_INTERRUPTED) for t in tail)
    working = any(t.role == "assistant" for t in tail)
    if answered_at is not None and not interrupted and not working:
        return []  # the agent's last word came after the request and nothing after it
    confidence = 0.8 if interrupted else (0.6 if working else 0.75)
    how = "it was interrupted" if interrupted else "the session ended"
    return [
        Candidate(
            kind=RecordKind.BREADCRUMB,
            content="Unanswered request: " + clip(last.content, 300),
            rule="unanswered_request",
            confidence=confidence,
            sources=(last.id,),
            said_at=last.timestamp,
            detail=f"The user asked this and {how} before the agent answered.",
            valid_until=breadcrumb_expiry("unanswered_request", view.ended_at),
        )
    ]


def next_steps(view: SessionView) -> list[Candidate]:
    """Items under a "next steps" / "remaining" heading in the agent's closing message."""
    if view.subagent:
        return []
    closing = _closing_message(view)
    if closing is None:
        return []
    items = _listed_steps(closing.content)[:MAX_STEPS]
    expiry = breadcrumb_expiry("next_steps", view.ended_at)
    return [
        Candidate(
            kind=RecordKind.BREADCRUMB,
            content=clip(item, 300),
            rule="next_steps",
            confidence=0.7,
            sources=(closing.id,),
            said_at=closing.timestamp,
            detail="Listed as still to do in the agent's last message of the session.",
            valid_until=expiry,
        )
        for item in items
    ]


def _closing_message(view: SessionView) -> Turn | None:
    """The agent's last message that lists what is still to do, after the person's last real request.

    A closing "thanks" and the agent's "you're welcome" do not hide the list before them.
    """
    for turn in reversed(view.turns):
        if turn.human and not _trivial(turn.content):
            return None
        if turn.agent_text and _listed_steps(turn.content):
            return turn
    return None


# A word every steps heading and inline step holds; markup (``**``, ``__``, ``~~``) removed from a
# line may join one, so it is removed before the test. Most agent messages hold none of them.
_STEPS_WORDS = (
    "next step",
    "remaining",
    "still",
    "todo",
    "to do",
    "done",
    "follow",
    "open items",
    "left",
    "pending",
)
# re's IGNORECASE also lets a dotless or dotted i stand for "i", which casefold does not map.
_UNMARKED = str.maketrans({"*": None, "_": None, "~": None, "\u0131": "i", "\u0130": "i"})


def _listed_steps(text: str) -> list[str]:
    """The items of the last "next steps" list, or of a "Next step: …" line, in ``text``."""
    items: list[str] = []
    collecting = False
    said = prose(text)
    flat = said.translate(_UNMARKED).casefold()  # as the patterns ignore case (re.IGNORECASE)
    if not any(map(flat.__contains__, _STEPS_WORDS)):
        return items
    for raw in said.splitlines():
        if _is_steps_heading(raw.strip()):
            collecting, items = True, []  # the last such list wins
            continue
        inline = next(filter(None, (_INLINE_STEP.match(s) for s in sentences(raw))), None)
        if inline and len(content_words(inline.group(1))) >= 2:
            collecting, items = False, [inline.group(1)]
            continue
        if not collecting:
            continue
        match = _LIST_ITEM.match(raw)
        if match:
            item = next(lines(match.group(1)), "")
            if len(content_words(item)) >= 2:
                items.append(item)
        elif raw.strip():
            collecting = False
    return items


def _is_steps_heading(line: str) -> bool:
    """A heading, a bold line or a line ending in a colon that announces what is still to do."""
    marked = line.startswith(("#", "**")) or line.rstrip("*").endswith(":")
    return marked and _STEPS_HEADING.match(line) is not None


def _trivial(text: str) -> bool:
    return bool(_TRIVIAL.match(text.strip())) or len(content_words(text)) < 2
