"""What tool calls keep beyond their one-line gist: plans, approved-plan text, memory-file lines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters._facts import MAX_ITEMS, is_memory_file, tool_facts


@pytest.mark.parametrize(
    ("name", "arguments", "facts"),
    [
        (
            "TodoWrite",
            {"todos": [{"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"}]},
            {
                "plan": {
                    "items": [{"text": "Write tests", "status": "in_progress", "id": None}],
                    "merge": False,
                }
            },
        ),
        (
            "update_plan",  # Codex passes its arguments as JSON text
            json.dumps({"explanation": "x", "plan": [{"step": "Port the schema", "status": "completed"}]}),
            {
                "plan": {
                    "items": [{"text": "Port the schema", "status": "completed", "id": None}],
                    "merge": False,
                }
            },
        ),
        (
            "todo_write",  # Cursor: merge by id, its own status names
            {"merge": True, "todos": [{"id": 7, "content": "Retry", "status": "TODO_STATUS_CANCELLED"}]},
            {"plan": {"items": [{"text": "Retry", "status": "cancelled", "id": "7"}], "merge": True}},
        ),
        (
            "TaskCreate",
            {"subject": "Move invoices", "description": "..."},
            {"plan": {"op": "create", "text": "Move invoices"}},
        ),
        (
            "TaskUpdate",
            {"taskId": "2", "status": "deleted"},
            {"plan": {"op": "update", "id": "2", "status": "cancelled"}},
        ),
        ("ExitPlanMode", {"plan": "# Plan\n1. Do it"}, {"proposed_plan": "# Plan\n1. Do it"}),
        ("ExitPlanMode", {}, {}),
        ("Bash", {"command": "ls"}, {}),
    ],
)
def test_plan_tools_keep_their_items(name: str, arguments: Any, facts: dict[str, Any]) -> None:
    assert tool_facts(name, arguments) == facts


def test_a_long_plan_is_capped() -> None:
    todos = [{"content": f"step {i}", "status": "pending"} for i in range(MAX_ITEMS + 20)]
    assert len(tool_facts("TodoWrite", {"todos": todos})["plan"]["items"]) == MAX_ITEMS


@pytest.mark.parametrize(
    ("name", "arguments", "added"),
    [
        (
            "Edit",
            {"file_path": "/r/CLAUDE.md", "old_string": "# A\n", "new_string": "# A\n- Use uv\n"},
            ["- Use uv"],
        ),
        ("Write", {"file_path": "/r/AGENTS.md", "content": "Run make check\n\n"}, ["Run make check"]),
        (
            "MultiEdit",
            {"file_path": "/r/.cursor/rules/py.mdc", "edits": [{"old_string": "", "new_string": "x y"}]},
            ["x y"],
        ),
        (
            "StrReplace",
            {"path": "/r/CLAUDE.local.md", "old_string": "", "new_string": "no emojis"},
            ["no emojis"],
        ),
        (
            "apply_patch",
            "*** Begin Patch\n*** Update File: AGENTS.md\n@@\n+- Pin ruff\n-old\n*** End Patch",
            ["- Pin ruff"],
        ),
    ],
)
def test_lines_added_to_memory_files_are_kept(name: str, arguments: Any, added: list[str]) -> None:
    assert tool_facts(name, arguments)["memory_file"]["added"] == added


def test_edits_to_other_files_keep_nothing() -> None:
    assert tool_facts("Edit", {"file_path": "/r/app.py", "old_string": "", "new_string": "x"}) == {}
    assert tool_facts("apply_patch", "*** Begin Patch\n*** Update File: app.py\n+x\n*** End Patch") == {}


@pytest.mark.parametrize(
    ("path", "memory"),
    [
        ("/home/me/.claude/projects/-home-me-app/memory/notes.md", True),
        ("C:\\repo\\.cursor\\rules\\style.mdc", True),
        ("/repo/.cursorrules", True),
        ("/repo/docs/claude.md.bak", False),
        ("/repo/memory/notes.md", False),
    ],
)
def test_memory_files_are_recognised(path: str, memory: bool) -> None:
    assert is_memory_file(path) is memory
