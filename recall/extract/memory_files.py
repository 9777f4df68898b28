"""The host's own memory: lines an agent added to CLAUDE.md, AGENTS.md, .cursor/rules or Claude Code's
memory notes, and the notes a person saved with Claude Code's ``#`` shortcut.

What an agent writes into a file every later session loads is, by intent, something to remember. An
imperative line ("Always run ruff before committing", "Never edit generated files") is a decision,
anything else a learning. The edits' added lines come from ``meta["memory_file"]`` (adapters._facts).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from recall.extract.candidate import Candidate
from recall.extract.session import SessionView, Turn
from recall.extract.text import clip, content_words
from recall.rowkinds import RecordKind

MAX_LINES_PER_EDIT = 6
_IMPERATIVE = re.compile(
    r"^(?:always|never|don'?t|do not|use|prefer|avoid|must|run|keep|put|make sure|only|no |"
    r"write|add|ensure|follow|stick to)\b",
    re.IGNORECASE,
)
_NOTE = re.compile(r"<user-memory-input>(.*?)</user-memory-input>", re.DOTALL)
_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")


def memory_file_lines(view: SessionView) -> list[Candidate]:
    found: list[Candidate] = []
    for turn in view.new_turns():
        memory = turn.facts.get("memory_file")
        if turn.kind == "tool_result" or not isinstance(memory, dict):
            continue
        result = view.result_of(turn)
        if result is not None and result.failed:
            continue  # the edit was refused or failed: nothing was added
        name = PurePath(str(memory.get("path", ""))).name
        added = [line for line in memory.get("added", []) if isinstance(line, str)]
        for line in _memorable(added)[:MAX_LINES_PER_EDIT]:
            found.append(_remembered(turn, line, "memory_file", 0.8, f"Added to {name} by the agent."))
    return found


def memory_notes(view: SessionView) -> list[Candidate]:
    """Claude Code ``#`` notes: ``<user-memory-input>…</user-memory-input>`` in a user turn."""
    found: list[Candidate] = []
    for turn in view.new_turns():
        if turn.role != "user" or "<user-memory-input>" not in turn.content:
            continue
        for note in _NOTE.findall(turn.content):
            for line in _memorable(note.splitlines()):
                found.append(
                    _remembered(turn, line, "memory_note", 0.9, "Saved as a memory note by the user.")
                )
    return found


def _memorable(added: list[str]) -> list[str]:
    """Lines that state something: no headings, fences, blank or one-word lines."""
    kept = []
    for raw in added:
        line = _MARKER.sub("", raw.strip()).strip().strip("*_").strip()
        if not line or line.startswith(("#", "```", "<", "|", "---")):
            continue
        if len(content_words(line)) >= 3:
            kept.append(clip(line, 300))
    return kept


def _remembered(turn: Turn, line: str, rule: str, confidence: float, detail: str) -> Candidate:
    kind = RecordKind.DECISION if _IMPERATIVE.match(line) else RecordKind.LEARNING
    return Candidate(
        kind=kind,
        content=line,
        rule=rule,
        confidence=confidence,
        sources=(turn.id,),
        said_at=turn.timestamp,
        detail=detail,
        importance=7,
    )
