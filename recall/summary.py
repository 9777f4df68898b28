"""Session summaries made without a language model: what a person skimming the session would note.

Title, the first request, files touched, commands run, and the lines that state decisions or
learnings. Built from stored (already scrubbed) messages, so a summary can hold no secret that its
messages did not already lose. The store writes it with provenance ``derived``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FIRST_REQUEST_CHARS = 400
MAX_LIST = 12
MAX_STATEMENTS = 8

_FILE_TOOLS = {"edit", "write", "multiedit", "notebookedit", "read", "apply_patch", "create", "str_replace"}
_SHELL_TOOLS = {
    "bash",
    "shell",
    "exec_command",
    "local_shell",
    "run_terminal_cmd",
    "terminal",
    "container.exec",
}
_DECISION = re.compile(
    r"\b(we decided|decided to|decision:|let's go with|we(?:'ll| will) use|going with|chose to|"
    r"settled on|instead of)\b",
    re.IGNORECASE,
)
_LEARNING = re.compile(
    r"\b(turns out|the fix (?:was|is)|root cause|gotcha|learned that|lesson:|note to self|"
    r"the problem was|because the)\b",
    re.IGNORECASE,
)
# A literal part of every alternative of _DECISION and _LEARNING, casefolded.
_STATEMENT_WORDS = (
    "decided", "decision:", "let's go with", "we'll use", "we will use", "going with", "chose to",
    "settled on", "instead of", "turns out", "the fix ", "root cause", "gotcha", "learned that",
    "lesson:", "note to self", "the problem was", "because the",
)  # fmt: skip
_PATH = re.compile(r"[~/]?(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8}\b")


@dataclass(frozen=True, slots=True)
class SummaryDraft:
    title: str
    content: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DraftAhead:
    """A summary drafted by the read-ahead worker from a new session's stored title and rows, and the
    summary queue's generation once the import wrote the session (recall.summary_queue)."""

    title: str | None
    draft: SummaryDraft
    generation: int | None = None


TITLE_CHARS = 80


def build_summary(title: str | None, messages: Sequence[Mapping[str, Any]]) -> SummaryDraft:
    """``messages`` are stored rows (role, origin, kind, tool_name, content), in order.

    Without a title (the host gave none, the caller named none) the first request is the title.
    """
    first_request = next(
        (
            m["content"]
            for m in messages
            if m["role"] == "user" and m["origin"] == "human" and m["content"].strip()
        ),
        "",
    )
    if not title:
        title = _clip(" ".join(first_request.split()), TITLE_CHARS) if first_request else "untitled session"
    files: dict[str, None] = {}
    commands: dict[str, None] = {}
    decisions: list[str] = []
    learnings: list[str] = []
    for message in messages:
        tool = (message.get("tool_name") or "").lower()
        if message["kind"] == "tool_call":
            detail = _call_detail(message["content"], message.get("tool_name"))
            if tool in _SHELL_TOOLS and detail:
                commands.setdefault(detail[:160], None)
            elif tool in _FILE_TOOLS and detail:
                for path in _PATH.findall(detail)[:3]:
                    files.setdefault(path, None)
            continue
        if message["origin"] not in ("human", "agent") or message["kind"] != "text":
            continue
        text = message["content"]
        folded = text.casefold()
        # Every phrase holds one of these words: most messages hold none and are not split or
        # searched at all (substring tests are many times faster than the two regexes).
        if not any(map(folded.__contains__, _STATEMENT_WORDS)):
            continue
        for line in _sentences(text):
            if len(decisions) < MAX_STATEMENTS and _DECISION.search(line):
                decisions.append(line)
            elif len(learnings) < MAX_STATEMENTS and _LEARNING.search(line):
                learnings.append(line)
    parts = [f"# {title}"]
    if first_request and not _same_start(title, first_request):
        parts.append("Asked: " + _clip(" ".join(first_request.split()), FIRST_REQUEST_CHARS))
    if files:
        parts.append("Files: " + ", ".join(list(files)[:MAX_LIST]))
    if commands:
        parts.append("Commands: " + "; ".join(list(commands)[:MAX_LIST]))
    if decisions:
        parts.append("Decisions:\n" + "\n".join(f"- {d}" for d in decisions))
    if learnings:
        parts.append("Learnings:\n" + "\n".join(f"- {x}" for x in learnings))
    meta = {
        "files": list(files)[:50],
        "commands": list(commands)[:50],
        "message_count": len(messages),
        "decision_lines": len(decisions),
        "learning_lines": len(learnings),
    }
    return SummaryDraft(title=title, content="\n\n".join(parts), meta=meta)


def _same_start(title: str, request: str) -> bool:
    """A title made from the first request says it already; do not repeat it as "Asked"."""
    stem = title.rstrip("…").strip()
    return bool(stem) and " ".join(request.split()).startswith(stem)


def _call_detail(content: str, tool_name: str | None) -> str:
    """Tool calls are stored as ``Name: one-line summary``; keep the summary."""
    text = content.strip().splitlines()[0] if content.strip() else ""
    if tool_name and text.lower().startswith(tool_name.lower() + ":"):
        text = text[len(tool_name) + 1 :]
    return text.strip()


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.strip(" -*#>\t")
        if not line or line.startswith("```"):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            if 12 <= len(sentence) <= 300:
                out.append(sentence)
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
