"""OpenCode: the MCP server in ``opencode.json``, capture by a plugin on ``session.idle``.

OpenCode reads MCP servers from ``opencode.json`` (``opencode.jsonc`` is used when only that exists)
in the project root, or ``$XDG_CONFIG_HOME/opencode/opencode.json`` (``~/.config/opencode``) for every
project, under ``mcp.<name>`` as ``{"type": "local", "command": [argv...], "environment": {...},
"enabled": true}``. Only strict JSON is edited: a ``.jsonc`` with comments is left untouched and
reported.

OpenCode has no session-end hook. Plugins (JavaScript files in ``.opencode/plugins/`` or the config
dir's ``plugins/``) get every event; ``session.idle`` fires when a turn has finished. recall's plugin
starts ``recall dump --from-hook --source opencode`` on it, detached, with the session id and folder;
the dump reads that session (and its subagents) from OpenCode's database or JSON files and adds only
what is new, so the session is captured turn by turn.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from recall.config import PROJECT_ENV
from recall.connect import mcp_json, ownedfile
from recall.connect.launcher import DUMP_HOOK, OPENCODE_TOKEN_HEADER, Setup, describe_server, remote_mcp_url
from recall.connect.plan import Connection, Refused, Step, read_text

NAME = "opencode"
CONTAINER = "mcp"
PLUGIN_NAME = "recall.js"
EVENT = "session.idle"

PLUGIN = """\
{marker}
// It imports each OpenCode session into recall's memory when a turn has finished (session.idle).
import {{ spawn }} from "node:child_process"

const RECALL = {argv}

export const RecallPlugin = async ({{ directory }}) => ({{
  event: async ({{ event }}) => {{
    if (event.type !== "{event}") return
    const payload = JSON.stringify({{
      hook_event_name: "{event}",
      session_id: event.properties?.sessionID,
      cwd: directory,
    }})
    try {{
      spawn(RECALL[0], [...RECALL.slice(1), payload], {{ detached: true, stdio: "ignore" }}).unref()
    }} catch {{}}
  }},
}})
"""


def config_dir(home: Path) -> Path:
    configured = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(configured).expanduser() if configured else home / ".config") / "opencode"


def config_file(setup: Setup) -> Path:
    folder = config_dir(setup.home) if setup.global_scope else setup.root
    plain, commented = folder / "opencode.json", folder / "opencode.jsonc"
    return commented if commented.is_file() and not plain.exists() else plain


def plugin_file(setup: Setup) -> Path:
    folder = config_dir(setup.home) if setup.global_scope else setup.root / ".opencode"
    return folder / "plugins" / PLUGIN_NAME


def detected(home: Path) -> bool:
    return config_dir(home).is_dir() or (home / ".local" / "share" / "opencode").is_dir()


def mcp_entry(setup: Setup) -> dict[str, object]:
    """A local server, or with ``--remote`` the team server: ``type: remote`` with the token header
    OpenCode fills from ``RECALL_TOKEN`` (its ``{env:VAR}`` substitution)."""
    entry: dict[str, object]
    if setup.remote:
        entry = {"type": "remote", "url": remote_mcp_url(setup.remote)}
        entry["headers"] = {"Authorization": OPENCODE_TOKEN_HEADER}
    else:
        entry = {"type": "local", "command": setup.argv("mcp")}
    if setup.project and not setup.remote:
        entry["environment"] = {PROJECT_ENV: setup.project}
    entry["enabled"] = True
    return entry


def plugin_text(setup: Setup) -> str:
    argv = json.dumps(setup.argv(*DUMP_HOOK, "--source", NAME), ensure_ascii=False)
    return PLUGIN.format(marker=ownedfile.MARKER, argv=argv, event=EVENT)


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    found = [
        mcp_json.server_step(
            NAME, config_file(setup), container=CONTAINER, entry=mcp_entry(setup), remove=remove
        )
    ]
    if hooks or remove:
        apply = ownedfile.remove_file if remove else (lambda t: ownedfile.add_file(t, plugin_text(setup)))
        found.append(Step(NAME, "hooks", plugin_file(setup), apply, 1 if setup.global_scope else 2))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    if not hooks:
        return []
    note = (
        "OpenCode has no session-end hook: recall's plugin imports the session each time a turn finishes "
        "(session.idle). Restart OpenCode to load it."
    )
    return [note]


def connections(setup: Setup) -> list[Connection]:
    path = config_file(setup)
    try:
        server = describe_server(mcp_json.server_entry(read_text(path), CONTAINER), setup.db_path)
    except Refused as exc:
        server = f"unreadable: {exc}"
    plugin = plugin_file(setup)
    try:
        wired = [f"{EVENT} (plugin)"] if ownedfile.is_ours(read_text(plugin)) else []
    except Refused:
        wired = []
    return [Connection(NAME, "user" if setup.global_scope else "project", path, server, plugin, wired)]
