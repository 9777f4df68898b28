"""Decisions: what the user laid down, chose, approved or accepted.

Only the person settles things: a rule or choice they state, their answer to the agent's
multiple-choice question, a plan they approved, a proposal of the agent they said yes to. The
agent's own "I'll do X" is a routine step, never a decision.
"""

from __future__ import annotations

import re

from recall.extract.candidate import Candidate
from recall.extract.session import SessionView, Turn
from recall.extract.text import clip, content_words, is_question, lines, sentences, truncate
from recall.rowkinds import RecordKind

_STATIVE = (
    r"(?:know|think|worry|see|understand|have|need|want|care|get|mind|remember|like|mean|believe|bother)"
)
_RULE = re.compile(
    r"^(?:please\s+|and\s+|but\s+|also\s+)?(?:"
    r"(?P<strong>always|never|from now on|going forward|as a rule|make sure (?:to|you) always|"
    r"(?:we|you) (?:should|must) (?:always|never))\b"
    rf"|(?P<dont>(?:don'?t|do not|avoid)\s+(?!{_STATIVE}\b)\w+))",
    re.IGNORECASE,
)
_CHOICE = re.compile(
    r"\b(?:let'?s|we(?:'ll| will| should)|i(?:'d)? (?:prefer|want) to|i(?:'d)? rather) "
    r"(?:go with|use|stick with|stay with|switch to|move to|keep|adopt|pick|choose)\b"
    r"|\buse\s+\S+(?:\s+\S+){0,4}\s+instead of\b"
    r"|\bswitch(?:ing)?\s+(?:from\s+\S.*?\s+)?to\b"
    r"|\bprefer\s+\S+(?:\s+\S+){0,4}\s+(?:over|to)\b"
    r"|^(?:please\s+)?use\s+\S+(?:\s+\S+){0,3},?\s+not\s+\S+",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\b(?:instead of|rather than)\b", re.IGNORECASE)
# Words at least one of which every _RULE or _CHOICE match contains.
_RULE_WORDS = (
    "always", "never", "from now on", "going forward", "as a rule", "don't", "dont", "do not", "avoid",
    "let's", "lets", "we'll", "we will", "we should", "prefer", "rather", "instead of", "switch",
)  # fmt: skip
_CHOSE = re.compile(
    r"\b(?:we|i) (?:decided|chose|opted|settled on|went with)\b|\bdecided to\b|^(?:going|we'?re going) with\b|"
    r"\bopted (?:for|to)\b|\bsettled on\b|\bchose\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"\b(?:because|since|so that|rather than|instead of|over|to keep|as it|as they)\b", re.IGNORECASE
)
_CHOSE_WORDS = ("decided", "chose", "opted", "settled on", "went with", "going with")
_STEP = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*])\s+\S")
_PLAN_WORDS = re.compile(r"\b(?:plan|approach|steps|proposal|here'?s what i'?ll do)\b", re.IGNORECASE)
_ONE_OFF = re.compile(r"\b(?:yet|right now|for now|this time|today|here|just)\b", re.IGNORECASE)
_REPLACES = re.compile(
    r"\b(?:switch(?:ing|ed)?|mov(?:e|ing|ed)|migrat(?:e|ing|ed)) (?:away )?from (?P<a>.+?) to\b"
    r"|\binstead of (?P<b>[^,.;:!?]+)"
    r"|\breplac(?:e|ing) (?P<c>.+?) with\b"
    r"|\bno longer use (?P<d>[^,.;:!?]+)"
    r"|\bdrop(?:ping)? (?P<e>.+?) (?:in favou?r of|for)\b"
    r"|\brather than (?P<f>[^,.;:!?]+)",
    re.IGNORECASE,
)
_ANSWER = re.compile(r'"((?:[^"\\]|\\.)+)"="((?:[^"\\]|\\.)*)"')
_APPROVED = re.compile(r"\bapproved\b", re.IGNORECASE)
_YES = re.compile(
    r"^(?:yes|yep|yeah|sure|ok(?:ay)?|sounds good|go ahead|do it|let'?s do (?:it|that)|please do|agreed|"
    r"lgtm|that works|go for it|option \w+|the (?:first|second|third|fourth|last) (?:one|option)|"
    r"(?:let'?s )?go with|\(?[a-d1-4]\)?)\b",
    re.IGNORECASE,
)
_ORDINALS = ("first", "second", "third", "fourth")
_PICK = re.compile(
    r"^(?:let'?s go with |go with |i(?:'ll| will)? (?:take|pick) )?(?:option\s+([a-d1-4])|\(?([a-d1-4])\)?"
    r"|the (first|second|third|fourth) (?:one|option))\b",
    re.IGNORECASE,
)
_OPTION_LINE = re.compile(r"^(?:[-*]\s+)?\**(?:option\s+)?\(?([a-d1-4])[.):]\**\s*\**(.+)$", re.IGNORECASE)
_PROPOSAL = re.compile(
    r"\b(?:i(?:'d| would)? (?:recommend|suggest|propose)|my recommendation|i'?d go with|"
    r"(?:should|shall) (?:we|i) (?:use|go with|switch|adopt|keep|move to|replace)|option [a-z0-9]\b|"
    r"(?:better|simpler|cleaner) (?:approach|option|way) (?:is|would be))",
    re.IGNORECASE,
)


def replaced_subject(text: str) -> str | None:
    """What a decision says it replaces: X in "switch from X to Y", "use Y instead of X", ..."""
    match = _REPLACES.search(text)
    if match is None:
        return None
    subject = next(group for group in match.groups() if group)
    words = content_words(subject)
    return " ".join(words[:4]) if words else None


def user_rules(view: SessionView) -> list[Candidate]:
    """Rules ("never X", "always Y", "don't use Z") and choices ("let's go with Y") the user stated."""
    found: list[Candidate] = []
    for turn in view.new_turns():
        if not turn.human:
            continue
        low = turn.content.lower()
        if not any(map(low.__contains__, _RULE_WORDS)):
            continue
        for sentence in sentences(turn.content):
            confidence = _rule_confidence(sentence)
            if confidence:
                found.append(_decision(turn, sentence, "user_rule", confidence, None))
    return found


def _rule_confidence(sentence: str) -> float:
    rule = _RULE.match(sentence)
    choice = rule is None and _CHOICE.search(sentence) is not None
    if rule is None and not choice and not _INSTEAD.search(sentence):
        return 0.0
    if is_question(sentence) or not 3 <= len(content_words(sentence)) <= 40:
        return 0.0
    if sentence.lower().startswith(("if ", "when ", "unless ", "maybe ", "perhaps ")):
        return 0.0
    if rule is not None and rule.group("strong"):
        return 0.8
    if choice or (rule is not None and _CHOICE.search(sentence)):
        return 0.75
    if rule is None:
        return 0.65 if _INSTEAD.search(sentence) else 0.0  # "do X instead of Y": a choice, less sure
    return 0.65 if not _ONE_OFF.search(sentence) else 0.0


def stated_decisions(view: SessionView) -> list[Candidate]:
    """Choices the agent says the session made, with their reason ("Going with X because Y").

    Nobody approved them in words, so they rank below what the user settled: kept for search and
    review, shown in briefs only once a person accepts them.
    """
    found: list[Candidate] = []
    for turn in view.new_turns():
        if not turn.agent_text:
            continue
        low = turn.content.lower()
        if not any(map(low.__contains__, _CHOSE_WORDS)):
            continue
        chosen = next((s for s in sentences(turn.content) if _states_a_choice(s)), None)
        if chosen is not None:
            found.append(_decision(turn, chosen, "stated_decision", 0.6, None))
    return found


def _states_a_choice(sentence: str) -> bool:
    """ "We decided …", or another choosing verb with its reason; "I decided to check X" is a step."""
    if is_question(sentence) or not 3 <= len(content_words(sentence)) <= 50:
        return False
    if re.search(r"\bwe(?:'ve| have)? decided\b", sentence, re.IGNORECASE):
        return True
    return _CHOSE.search(sentence) is not None and _REASON.search(sentence) is not None


def user_answers(view: SessionView) -> list[Candidate]:
    """The user's answers to the agent's multiple-choice questions (Claude Code AskUserQuestion)."""
    found: list[Candidate] = []
    for turn in view.new_turns():
        if turn.kind != "tool_result" or turn.tool != "askuserquestion" or turn.failed:
            continue
        for question, answer in _ANSWER.findall(turn.content):
            answer = answer.strip()
            if not answer or len(content_words(answer)) == 0:
                continue
            asked = clip(question.split("?")[0] + "?", 200)
            content = f"{asked} → {clip(answer, 200)}"
            found.append(_decision(turn, content, "user_answer", 0.75, None))
    return found


def approved_plans(view: SessionView) -> list[Candidate]:
    """Plans the user approved on leaving Claude Code's plan mode (ExitPlanMode)."""
    found: list[Candidate] = []
    for index, turn in enumerate(view.turns):
        if turn.kind != "tool_call" or turn.tool != "exitplanmode":
            continue
        result = view.result_of(turn)
        if result is None or result.failed or not _APPROVED.search(result.content):
            continue
        if not (view.is_new(turn) or view.is_new(result)):
            continue
        plan = turn.facts.get("proposed_plan")
        written = _plan_message(view.turns[:index]) if not isinstance(plan, str) else None
        text = plan if isinstance(plan, str) else (written.content if written else "")
        if not text.strip():
            continue
        sources = (result.id, turn.id, *((written.id,) if written else ()))
        found.append(
            Candidate(
                kind=RecordKind.DECISION,
                content="Approved plan: " + _plan_title(text),
                rule="approved_plan",
                confidence=0.85,
                sources=sources,
                said_at=result.timestamp,
                detail=truncate(_from_first_heading(text), 2000),
                importance=6,
            )
        )
    return found


def accepted_proposals(view: SessionView) -> list[Candidate]:
    """An approach the agent proposed and the user accepted in their very next words."""
    found: list[Candidate] = []
    previous: Turn | None = None
    for turn in view.turns:
        if turn.agent_text:
            previous = turn
        elif turn.human:
            if previous is not None and view.is_new(turn) and _accepts(turn.content):
                found += _accepted(turn, previous)
            previous = None
    return found


def _accepted(reply: Turn, said: Turn) -> list[Candidate]:
    """What a "yes" accepted: the option it names, the approach proposed, or the plan laid out."""
    sources = (reply.id, said.id)
    proposal = _chosen_option(said.content, reply.content) or _proposal(said.content)
    if proposal:
        detail = f"The user replied: {clip(reply.content, 200)}"
        return [_decision(reply, "Accepted: " + proposal, "accepted_proposal", 0.7, detail, sources)]
    if _lays_out_a_plan(said.content):
        plan = _from_first_heading(said.content)
        content = "Approved plan: " + _plan_title(plan)
        return [_decision(reply, content, "approved_plan", 0.75, truncate(plan, 2000), sources)]
    return []


def _lays_out_a_plan(text: str) -> bool:
    """Three or more listed steps under words that call them a plan, ending with a question."""
    steps = sum(1 for line in text.splitlines() if _STEP.match(line))
    closing = text.strip().splitlines()[-1] if text.strip() else ""
    return steps >= 3 and closing.rstrip("*_ ").endswith("?") and _PLAN_WORDS.search(text) is not None


def _accepts(text: str) -> bool:
    stripped = text.strip()
    return len(stripped.split()) <= 12 and _YES.match(stripped) is not None


def _chosen_option(text: str, reply: str) -> str | None:
    """The option the user picked by its name ("2", "option B", "the second one") from the agent's list."""
    match = _PICK.match(reply.strip())
    if match is None:
        return None
    picked = next(group for group in match.groups() if group).lower()
    picked = str(_ORDINALS.index(picked) + 1) if picked in _ORDINALS else picked
    for line in text.splitlines():
        option = _OPTION_LINE.match(line.strip())
        if option and option.group(1).lower() == picked:
            said = next(lines(option.group(2)), "")
            if len(content_words(said)) >= 2:
                return clip(said, 300)
    return None


def _proposal(text: str) -> str | None:
    for sentence in sentences(text):
        if _PROPOSAL.search(sentence) and len(content_words(sentence)) >= 3:
            return clip(sentence, 300)
    return None


def _plan_message(before: tuple[Turn, ...]) -> Turn | None:
    """The agent's last long message before ExitPlanMode: the plan it asked approval for."""
    for turn in reversed(before[-12:]):
        if turn.agent_text and len(turn.content) >= 300:
            return turn
        if turn.human:
            return None
    return None


def _from_first_heading(text: str) -> str:
    """The plan without the agent's lead-in ("Let me write the plan for your approval.")."""
    at = text.find("\n#")
    return text[at + 1 :] if at >= 0 and text[:at].count("\n") < 3 else text


def _plan_title(text: str) -> str:
    """The first heading that says something (more than two words), else the first line."""
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.lstrip().startswith("#")]
    titled = [h for h in headings if len(h.split()) > 2]
    if titled:
        return clip(titled[0], 200)
    return clip(next(lines(text), text), 200)


def _decision(
    turn: Turn,
    content: str,
    rule: str,
    confidence: float,
    detail: str | None,
    sources: tuple[int, ...] | None = None,
) -> Candidate:
    text = clip(content, 400)
    return Candidate(
        kind=RecordKind.DECISION,
        content=text,
        rule=rule,
        confidence=confidence,
        sources=sources or (turn.id,),
        said_at=turn.timestamp,
        detail=detail,
        replaces=replaced_subject(text),
        importance=7 if rule == "user_rule" else 6,
    )
