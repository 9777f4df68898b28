"""Gemini CLI: the MCP server and a ``SessionEnd`` hook in ``settings.json``.

Gemini CLI reads ``.gemini/settings.json`` in a project and ``<gemini dir>/settings.json`` for every
project (``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``). MCP servers go under ``mcpServers`` in
Claude Code's shape without ``type``; hooks (v0.13+, on by default) under ``hooks.<Event>`` as
``[{"matcher"?, "hooks": [{"type": "command", "command", "timeout" (ms), "name"?}]}]``.

``SessionEnd`` (exit, ``/clear``, logout) hands the hook ``session_id``, ``transcript_path`` and
``cwd`` on stdin and does not wait for it, so the CLI may be gone before an import finishes: the hook
runs ``recall dump --from-hook --source gemini --detach``, which reads the payload, starts the import
in a process of its own and returns at once.
"""

from __future__ import annotations

import os
from pathlib import Path

from adapters._gemini_project import HOME_ENV
from recall.connect import hooklists, mcp_json
from recall.connect.launcher import DUMP_HOOK, Setup, describe_server
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "gemini"
SESSION_END = "SessionEnd"
TIMEOUT_MS = 5000  # the hook only hands the payload on; Gemini CLI does not wait for it anyway
_EVENTS = [(SESSION_END, DUMP_HOOK)]


def user_dir(home: Path) -> Path:
    """``$GEMINI_CLI_HOME/.gemini``, else ``<home>/.gemini``."""
    configured = os.environ.get(HOME_ENV, "").strip()
    return (Path(configured).expanduser() if configured else home) / ".gemini"


def settings_file(setup: Setup) -> Path:
    return (user_dir(setup.home) if setup.global_scope else setup.root / ".gemini") / "settings.json"


def detected(home: Path) -> bool:
    return user_dir(home).is_dir()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    path = settings_file(setup)
    prune = 0 if setup.global_scope else 1  # a project's .gemini/ goes when recall made it
    found = [
        mcp_json.server_step(
            NAME, path, container="mcpServers", entry=setup.mcp_entry(with_type=False, url_key="httpUrl"), remove=remove,
            prune_dirs=prune,
        )
    ]  # fmt: skip
    if hooks or remove:
        found.append(
            Step(NAME, "hooks", path, remove_hooks if remove else lambda t: add_hooks(t, setup), prune)
        )
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    if not hooks:
        return []
    return [
        "Gemini CLI does not wait for its SessionEnd hook: recall hands each import to a process of its own."
    ]


def add_hooks(text: str | None, setup: Setup) -> Change:
    handler = {
        "type": "command",
        "name": "recall",
        "command": setup.hook_command(DUMP_HOOK, "--source", NAME, "--detach"),
        "timeout": TIMEOUT_MS,
    }
    return hooklists.add(text, mcp_json.NEW_FILE, [(SESSION_END, DUMP_HOOK, handler)], grouped=True)


def remove_hooks(text: str | None) -> Change:
    return hooklists.remove(text, _EVENTS, grouped=True)


def connections(setup: Setup) -> list[Connection]:
    path = settings_file(setup)
    try:
        text = read_text(path)
        server = describe_server(mcp_json.server_entry(text, "mcpServers"), setup.db_path)
        wired = hooklists.wired(text, _EVENTS, grouped=True)
    except Refused as exc:
        server, wired = f"unreadable: {exc}", []
    scope = "user" if setup.global_scope else "project"
    return [Connection(NAME, scope, path, server, path, wired)]
