"""Claude Code: MCP server in ``.mcp.json`` / ``~/.claude.json``, hooks in ``.claude/settings.json``.

Hooks (settings ``hooks.<Event>`` is a list of ``{"matcher"?, "hooks": [{"type": "command", ...}]}``):

- ``SessionStart`` runs ``recall context --hook``: Claude Code adds the hook's
  ``hookSpecificOutput.additionalContext`` to the new session, so the agent starts with the brief.
- ``SessionEnd`` and ``PreCompact`` run ``recall dump --from-hook``: both receive ``transcript_path``
  on stdin, and PreCompact is the last moment before the context is summarised away.

``CLAUDE_CONFIG_DIR`` moves ``~/.claude`` (and ``~/.claude.json`` into it), as Claude Code does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from recall.connect import instructions, jsonedit, mcp_json
from recall.connect.launcher import CONTEXT_HOOK, DUMP_HOOK, Setup, describe_server, is_recall_hook
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "claude"
HOOKS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("SessionStart", CONTEXT_HOOK, 10),
    ("SessionEnd", DUMP_HOOK, 30),
    ("PreCompact", DUMP_HOOK, 30),
)


def config_dir(home: Path) -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    return Path(configured).expanduser() if configured else home / ".claude"


def mcp_file(setup: Setup) -> Path:
    if not setup.global_scope:
        return setup.root / ".mcp.json"
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (config_dir(setup.home) if configured else setup.home) / ".claude.json"


def settings_file(setup: Setup) -> Path:
    return (
        config_dir(setup.home) / "settings.json"
        if setup.global_scope
        else setup.root / ".claude" / "settings.json"
    )


def instructions_file(setup: Setup) -> Path:
    return config_dir(setup.home) / "CLAUDE.md" if setup.global_scope else setup.root / "CLAUDE.md"


def detected(home: Path) -> bool:
    return config_dir(home).is_dir() or (home / ".claude.json").is_file()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    entry = setup.mcp_entry(with_type=True)
    found = [mcp_json.server_step(NAME, mcp_file(setup), container="mcpServers", entry=entry, remove=remove)]
    if hooks or remove:
        found.append(
            Step(
                NAME,
                "hooks",
                settings_file(setup),
                remove_hooks if remove else lambda t: add_hooks(t, setup),
                1,
            )
        )
    if guidance or remove:
        apply = instructions.remove_block if remove else instructions.add_block
        found.append(Step(NAME, "instructions", instructions_file(setup), apply))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    if setup.global_scope:
        return []
    return [
        "Claude Code asks once, in the project, before it starts a server from .mcp.json: approve recall."
    ]


def add_hooks(text: str | None, setup: Setup) -> Change:
    current = text if text and text.strip() else mcp_json.NEW_FILE
    added: list[str] = []
    updated: list[str] = []
    for event, verb, timeout in HOOKS:
        extra = ("--source", NAME) if verb == DUMP_HOOK else ()
        wanted = {"type": "command", "command": setup.hook_command(verb, *extra), "timeout": timeout}
        found = find_hook(current, event, verb)
        if found is None:
            current = jsonedit.append(current, ("hooks", event), {"hooks": [wanted]})
            added.append(event)
        else:
            before = current
            current = jsonedit.set_value(current, ("hooks", event, found[0], "hooks", found[1]), wanted)
            if current != before:
                updated.append(event)
    if not added and not updated:
        return Change(text, "unchanged")
    return Change(current, "added" if added else "updated", ", ".join(added or updated))


def remove_hooks(text: str | None) -> Change:
    if text is None or not text.strip():
        return Change(text, "unchanged")
    current = text
    for event, verb, _ in HOOKS:
        while (found := find_hook(current, event, verb)) is not None:
            group, position = found
            alone = len(jsonedit.get(current, ("hooks", event, group, "hooks"))) == 1
            current = jsonedit.remove(
                current, ("hooks", event, group) if alone else ("hooks", event, group, "hooks", position)
            )
        current = jsonedit.prune(current, ("hooks", event))
    if current == text:
        return Change(text, "unchanged")
    return Change(None if jsonedit.load(current) == {} else current, "removed")


def wired_events(text: str | None) -> list[str]:
    """The hook events that run recall, for doctor."""
    if text is None or not text.strip():
        return []
    return [event for event, verb, _ in HOOKS if find_hook(text, event, verb) is not None]


def connections(setup: Setup) -> list[Connection]:
    server_path, hooks_path = mcp_file(setup), settings_file(setup)
    try:
        server = describe_server(mcp_json.server_entry(read_text(server_path), "mcpServers"), setup.db_path)
    except Refused as exc:
        server = f"unreadable: {exc}"
    try:
        events = wired_events(read_text(hooks_path))
    except Refused:
        events = []
    scope = "user" if setup.global_scope else "project"
    return [Connection(NAME, scope, server_path, server, hooks_path, events)]


def find_hook(text: str, event: str, verb: tuple[str, ...]) -> tuple[int, int] | None:
    """(group, position) of our hook for ``event``, if any: Codex's hooks.json shares this layout."""
    groups: Any = jsonedit.get(text, ("hooks", event))
    if groups is None:
        return None
    if not isinstance(groups, list):
        raise Refused(f"its hooks.{event} is not a list")
    for group_index, group in enumerate(groups):
        entries = group.get("hooks") if isinstance(group, dict) else None
        for position, hook in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(hook, dict) and is_recall_hook(hook.get("command"), verb):
                return group_index, position
    return None
