"""Breadcrumbs from the agent's own plan: the items its last plan state left unfinished.

The plan calls carry their items in ``meta["plan"]`` (adapters._facts): a whole list (Claude Code
TodoWrite, Codex update_plan, Cursor todos; Cursor may ``merge`` by id), or one task operation
(Claude Code TaskCreate / TaskUpdate). Folding them in order gives the plan as the session left it.
Items still pending or in progress become breadcrumbs; items completed, cancelled or dropped from the
list become closures, which expire breadcrumbs for the same item from earlier sessions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recall.extract.candidate import Candidate, Closure, breadcrumb_expiry
from recall.extract.session import SessionView, Turn
from recall.extract.text import clip, word_set
from recall.rowkinds import RecordKind

MAX_OPEN_ITEMS = 10
CONFIDENCE = 0.85
_DONE = frozenset({"completed", "cancelled"})
_TASK_NUMBER = re.compile(r"#(\d+)")


@dataclass(slots=True)
class _Item:
    text: str
    status: str
    turns: list[Turn]


def plan_candidates(view: SessionView) -> tuple[list[Candidate], list[Closure]]:
    if view.subagent or not view.plan_turns:
        return [], []
    current, ever = _fold(view)
    expiry = breadcrumb_expiry("plan", view.ended_at)
    open_items = [item for item in current.values() if item.status not in _DONE][:MAX_OPEN_ITEMS]
    candidates = [
        Candidate(
            kind=RecordKind.BREADCRUMB,
            content=clip(item.text, 300),
            rule="plan",
            confidence=CONFIDENCE,
            sources=tuple(dict.fromkeys(t.id for t in reversed(item.turns))),
            said_at=item.turns[-1].timestamp,
            detail=f"Left {item.status.replace('_', ' ')} in the agent's plan "
            f"({item.turns[-1].tool_name}) when the session ended.",
            valid_until=expiry,
        )
        for item in open_items
    ]
    open_keys = {_key_of(item.text) for item in open_items}
    closures = [
        Closure(text=item.text, closed_at=item.turns[-1].timestamp or "")
        for item in ever.values()
        if _key_of(item.text) not in open_keys
    ]
    return candidates, closures


def _fold(view: SessionView) -> tuple[dict[str, _Item], dict[str, _Item]]:
    """(the plan's last state, every item ever seen with its last known state) by item key."""
    current: dict[str, _Item] = {}
    ever: dict[str, _Item] = {}
    task_numbers = _task_numbers(view.plan_turns)
    created = 0
    for turn in view.plan_turns:
        plan = turn.facts.get("plan")
        if turn.kind == "tool_result" or not isinstance(plan, dict):
            continue
        if isinstance(plan.get("items"), list):
            if not plan.get("merge"):
                current = {}
            for entry in plan["items"]:
                if isinstance(entry, dict) and isinstance(entry.get("text"), str):
                    key = str(entry.get("id") or _key_of(entry["text"]))
                    _set(current, ever, key, entry["text"], str(entry.get("status", "pending")), turn)
        elif plan.get("op") == "create" and isinstance(plan.get("text"), str):
            created += 1
            number = task_numbers.get(turn.call_key or "", str(created))
            _set(current, ever, f"task:{number}", plan["text"], "pending", turn)
        elif plan.get("op") == "update":
            key = f"task:{plan.get('id')}"
            known = current.get(key) or ever.get(key)
            text = plan.get("text") or (known.text if known else None)
            if isinstance(text, str):
                status = str(plan.get("status") or (known.status if known else "pending"))
                _set(current, ever, key, text, status, turn)
    # An item that left the list without being completed was dropped: that closes it too.
    for key, item in ever.items():
        if key not in current and item.status not in _DONE:
            item.status = "cancelled"
    return current, ever


def _set(
    current: dict[str, _Item], ever: dict[str, _Item], key: str, text: str, status: str, turn: Turn
) -> None:
    item = current.get(key) or ever.get(key)
    if item is None:
        item = _Item(text, status, [turn])
    else:
        item.text, item.status = text, status
        if item.turns[-1] is not turn:
            item.turns.append(turn)
    current[key] = ever[key] = item


def _task_numbers(turns: tuple[Turn, ...]) -> dict[str, str]:
    """TaskCreate results say which number the new task got ("Task #3 created successfully")."""
    numbers: dict[str, str] = {}
    for turn in turns:
        if turn.kind == "tool_result" and turn.call_key:
            match = _TASK_NUMBER.search(turn.content)
            if match:
                numbers[turn.call_key] = match.group(1)
    return numbers


def _key_of(text: str) -> str:
    return " ".join(sorted(word_set(text))) or text.strip().lower()
