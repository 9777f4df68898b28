"""Pi: the MCP server in ``.pi/mcp.json``, capture by an extension on ``session_shutdown``.

Pi has no MCP client of its own; the pi-mcp-adapter extension (``pi install npm:pi-mcp-adapter``)
reads ``mcpServers`` from ``.pi/mcp.json`` in a project and ``<agent dir>/mcp.json`` for every
project, in the same shape as Claude Code's ``.mcp.json``. The agent dir is ``$PI_CODING_AGENT_DIR``
or ``~/.pi/agent``.

Extensions are TypeScript files in ``.pi/extensions/`` (loaded once the project is trusted) or
``<agent dir>/extensions/``. recall's extension listens for ``session_shutdown`` (Pi exits, or
``/new``, ``/resume``, ``/fork`` and ``/reload`` leave the session) and starts ``recall dump
--from-hook --source pi`` detached with the session file, so Pi's exit is never held up.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapters.pi import AGENT_DIR_ENV
from recall.connect import mcp_json, ownedfile
from recall.connect.launcher import DUMP_HOOK, Setup, describe_server
from recall.connect.plan import Connection, Refused, Step, read_text

NAME = "pi"
EXTENSION_NAME = "recall.ts"
EVENT = "session_shutdown"

EXTENSION = """\
{marker}
// It imports each Pi session into recall's memory when the session ends ({event}).
// Plain JavaScript, which Pi loads as TypeScript too.
import {{ spawn }} from "node:child_process";

const RECALL = {argv};

export default function (pi) {{
  pi.on("{event}", async (event, ctx) => {{
    const file = ctx?.sessionManager?.getSessionFile?.();
    if (!file) return;
    const payload = JSON.stringify({{
      hook_event_name: "{event}",
      session_id: ctx.sessionManager.getSessionId?.(),
      transcript_path: file,
      cwd: ctx.cwd,
    }});
    try {{
      spawn(RECALL[0], [...RECALL.slice(1), payload], {{ detached: true, stdio: "ignore" }}).unref();
    }} catch {{}}
  }});
}}
"""


def user_dir(home: Path) -> Path:
    """The agent dir, as Pi resolves it for the user ``home`` (``$PI_CODING_AGENT_DIR`` wins)."""
    configured = os.environ.get(AGENT_DIR_ENV, "").strip()
    return Path(configured).expanduser() if configured else home / ".pi" / "agent"


def folder(setup: Setup) -> Path:
    return user_dir(setup.home) if setup.global_scope else setup.root / ".pi"


def detected(home: Path) -> bool:
    return user_dir(home).is_dir()


def extension_text(setup: Setup) -> str:
    argv = json.dumps(setup.argv(*DUMP_HOOK, "--source", NAME), ensure_ascii=False)
    return EXTENSION.format(marker=ownedfile.MARKER, argv=argv, event=EVENT)


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    base = folder(setup)
    prune = 0 if setup.global_scope else 1  # a project's .pi/ goes when recall made it
    found = [
        mcp_json.server_step(
            NAME, base / "mcp.json", container="mcpServers", entry=setup.mcp_entry(with_type=False),
            remove=remove, prune_dirs=prune,
        )
    ]  # fmt: skip
    if hooks or remove:
        apply = ownedfile.remove_file if remove else (lambda t: ownedfile.add_file(t, extension_text(setup)))
        found.append(Step(NAME, "hooks", base / "extensions" / EXTENSION_NAME, apply, prune + 1))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    found = [
        (
            "Pi has no MCP client of its own: install the adapter (`pi install npm:pi-mcp-adapter`) to give "
            "it recall's tools."
        )
    ]
    if hooks and not setup.global_scope:
        found.append("Pi loads a project's .pi/extensions only once you trust the project.")
    return found


def connections(setup: Setup) -> list[Connection]:
    base = folder(setup)
    try:
        server = describe_server(
            mcp_json.server_entry(read_text(base / "mcp.json"), "mcpServers"), setup.db_path
        )
    except Refused as exc:
        server = f"unreadable: {exc}"
    extension = base / "extensions" / EXTENSION_NAME
    try:
        wired = [f"{EVENT} (extension)"] if ownedfile.is_ours(read_text(extension)) else []
    except Refused:
        wired = []
    scope = "user" if setup.global_scope else "project"
    return [Connection(NAME, scope, base / "mcp.json", server, extension, wired)]
