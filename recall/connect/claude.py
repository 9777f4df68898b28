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

from recall.connect import hooklists, instructions, mcp_json
from recall.connect.launcher import CONTEXT_HOOK, DUMP_HOOK, Setup, describe_server
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "claude"
HOOKS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("SessionStart", CONTEXT_HOOK, 10),
    ("SessionEnd", DUMP_HOOK, 30),
    ("PreCompact", DUMP_HOOK, 30),
)
_EVENTS = [(event, verb) for event, verb, _ in HOOKS]


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
    wanted = [
        (
            event,
            verb,
            {"type": "command", "command": setup.hook_command(verb, *_extra(verb)), "timeout": timeout},
        )
        for event, verb, timeout in HOOKS
    ]
    return hooklists.add(text, mcp_json.NEW_FILE, wanted, grouped=True)


def remove_hooks(text: str | None) -> Change:
    return hooklists.remove(text, _EVENTS, grouped=True)


def wired_events(text: str | None) -> list[str]:
    """The hook events that run recall, for doctor."""
    return hooklists.wired(text, _EVENTS, grouped=True)


def _extra(verb: tuple[str, ...]) -> tuple[str, ...]:
    return ("--source", NAME) if verb == DUMP_HOOK else ()


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
