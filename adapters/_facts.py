"""Structured facts a tool call carries that its one-line gist drops: plans and project memory.

A tool call is stored as ``<tool>: <gist>`` (adapters._text), which is right for search but loses what
recall's extraction stage needs later, when it reads the stored (scrubbed) messages back: the items
and statuses of the agent's own plan, the plan it asked the user to approve, and the lines it added
to the host's memory files. Those go into the message's ``meta`` as small, capped JSON, so the store
scrubs them like every other string and extraction never has to re-read the host's files.

Ground truth (shared/ref/transcript-formats.md; the hosts' tool schemas):

- Claude Code ``TodoWrite``: ``{"todos": [{"content", "status", "activeForm"}]}``, the whole list each
  time; its newer task tools ``TaskCreate {"subject", "description"}`` (the result names the new
  task ``Task #<n>``) and ``TaskUpdate {"taskId", "status", "subject"?}`` (status ``deleted`` drops it).
- Codex ``update_plan``: arguments ``{"explanation"?, "plan": [{"step", "status"}]}``, the whole plan.
- Cursor ``todo_write`` / ``TodoWrite``: ``{"merge", "todos": [{"id", "content", "status"}]}``; with
  ``merge`` the items update the list by id. Statuses include ``cancelled`` and ``TODO_STATUS_*``.
- Claude Code ``ExitPlanMode {"plan"}``: the plan the user is asked to approve (may be empty when the
  plan was written to a file).
- Memory files: ``CLAUDE.md``, ``CLAUDE.local.md``, ``AGENTS.md``, ``.cursorrules``,
  ``.cursor/rules/*``, and Claude Code's auto-memory ``~/.claude/projects/<p>/memory/*.md``, written
  with Edit/MultiEdit/Write (Claude), apply_patch (Codex) or StrReplace/Write (Cursor).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Any

MAX_ITEMS = 50
ITEM_CHARS = 300
PLAN_CHARS = 6000
MAX_ADDED_LINES = 40

_TODO_TOOLS = frozenset({"todowrite", "todo_write", "update_todos", "updatetodos"})
_PLAN_TOOLS = frozenset({"update_plan"})
_MEMORY_NAMES = frozenset({"claude.md", "claude.local.md", "agents.md", "agents.override.md", ".cursorrules"})
_STATUS = {
    "todo_status_pending": "pending",
    "todo_status_in_progress": "in_progress",
    "todo_status_completed": "completed",
    "todo_status_cancelled": "cancelled",
    "in-progress": "in_progress",
    "done": "completed",
    "complete": "completed",
    "canceled": "cancelled",
    "deleted": "cancelled",
}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$")


def tool_facts(name: str, arguments: object) -> dict[str, Any]:
    """The ``meta`` entries a call of tool ``name`` with ``arguments`` adds; {} for most tools."""
    arguments = _decoded(arguments)
    key = name.lower()
    if key in _TODO_TOOLS or key in _PLAN_TOOLS:
        plan = _list_plan(arguments)
        return {"plan": plan} if plan else {}
    if key == "taskcreate" and isinstance(arguments, dict):
        subject = _text(arguments.get("subject"))
        return {"plan": {"op": "create", "text": subject}} if subject else {}
    if key == "taskupdate" and isinstance(arguments, dict):
        return _task_update(arguments)
    if key == "exitplanmode" and isinstance(arguments, dict):
        plan_text = arguments.get("plan")
        return (
            {"proposed_plan": plan_text[:PLAN_CHARS]}
            if isinstance(plan_text, str) and plan_text.strip()
            else {}
        )
    memory = _memory_edit(arguments)
    return {"memory_file": memory} if memory else {}


def _decoded(arguments: object) -> object:
    """Codex and Cursor pass arguments as JSON text (sometimes invalid); apply_patch bodies stay text."""
    if isinstance(arguments, str) and arguments.strip()[:1] in ("{", "["):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _list_plan(arguments: object) -> dict[str, Any] | None:
    if not isinstance(arguments, dict):
        return None
    raw = arguments.get("todos", arguments.get("plan"))
    if not isinstance(raw, list):
        return None
    items = []
    for entry in raw[:MAX_ITEMS]:
        if not isinstance(entry, dict):
            continue
        text = _text(entry.get("content", entry.get("step", entry.get("subject"))))
        if text:
            ident = entry.get("id")
            items.append({"text": text, "status": status(entry.get("status")), "id": _ident(ident)})
    return {"items": items, "merge": arguments.get("merge") is True}


def _task_update(arguments: dict[str, Any]) -> dict[str, Any]:
    ident = _ident(arguments.get("taskId", arguments.get("id")))
    if ident is None:
        return {}
    update: dict[str, Any] = {"op": "update", "id": ident}
    if arguments.get("status") is not None:
        update["status"] = status(arguments.get("status"))
    subject = _text(arguments.get("subject"))
    if subject:
        update["text"] = subject
    return {"plan": update}


def status(value: object) -> str:
    """One vocabulary for every host: pending, in_progress, completed, cancelled."""
    text = str(value or "pending").strip().lower()
    return _STATUS.get(text, text)


def is_memory_file(path: str) -> bool:
    """Files the hosts load into every session: project instructions and saved memory."""
    normalised = path.replace("\\", "/")
    name = PurePath(normalised).name.lower()
    if name in _MEMORY_NAMES or "/.cursor/rules/" in f"/{normalised}":
        return True
    return "/.claude/" in normalised and "/memory/" in normalised and name.endswith(".md")


def _memory_edit(arguments: object) -> dict[str, Any] | None:
    if isinstance(arguments, str):
        return _patched_memory(arguments)
    if not isinstance(arguments, dict):
        return None
    path = next(
        (v for k in ("file_path", "path", "target_file") if isinstance(v := arguments.get(k), str) and v),
        None,
    )
    if path is None:
        patch = arguments.get("input", arguments.get("patch"))
        return _patched_memory(patch) if isinstance(patch, str) else None
    if not is_memory_file(path):
        return None
    edits = arguments.get("edits")
    pairs = (
        [(e.get("old_string"), e.get("new_string")) for e in edits if isinstance(e, dict)]
        if isinstance(edits, list)
        else [(arguments.get("old_string", arguments.get("old_str")), _new_text(arguments))]
    )
    added: list[str] = []
    for old, new in pairs:
        old_lines = set(old.splitlines()) if isinstance(old, str) else set()
        if isinstance(new, str):
            added += [line for line in new.splitlines() if line.strip() and line not in old_lines]
    return _memory(path, added)


def _new_text(arguments: dict[str, Any]) -> object:
    for key in ("new_string", "new_str", "content", "contents", "code_edit"):
        if isinstance(arguments.get(key), str):
            return arguments[key]
    return None


def _patched_memory(patch: str) -> dict[str, Any] | None:
    """Lines an apply_patch body adds to a memory file (the first such file in the patch)."""
    path: str | None = None
    added: list[str] = []
    for line in patch.splitlines():
        match = _PATCH_FILE.match(line)
        if match:
            if path is not None:
                break
            candidate = match.group(1).strip()
            path = candidate if is_memory_file(candidate) else None
        elif path is not None and line.startswith("+") and not line.startswith("+++") and line[1:].strip():
            added.append(line[1:])
    return _memory(path, added) if path else None


def _memory(path: str, added: list[str]) -> dict[str, Any] | None:
    lines = [line.rstrip()[:ITEM_CHARS] for line in added[:MAX_ADDED_LINES]]
    return {"path": path, "added": lines} if lines else None


def _text(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:ITEM_CHARS]


def _ident(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip()
    return text or None
