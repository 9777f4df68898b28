"""VS Code: the MCP server in ``.vscode/mcp.json`` (or the user profile's ``mcp.json``), key ``servers``.

VS Code's own chats are not a host recall imports, so there is nothing for a hook to capture: VS Code
gets the MCP server (and, with ``--instructions``, the AGENTS.md block it reads) only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from recall.connect import instructions, mcp_json
from recall.connect.launcher import Setup, describe_server
from recall.connect.plan import Connection, Refused, Step, read_text

NAME = "vscode"


def user_dir(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User"


def mcp_file(setup: Setup) -> Path:
    return user_dir(setup.home) / "mcp.json" if setup.global_scope else setup.root / ".vscode" / "mcp.json"


def detected(home: Path) -> bool:
    return user_dir(home).is_dir()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    entry = setup.mcp_entry(with_type=True)
    found = [
        mcp_json.server_step(
            NAME,
            mcp_file(setup),
            container="servers",
            entry=entry,
            remove=remove,
            prune_dirs=0 if setup.global_scope else 1,
        )
    ]
    if (guidance or remove) and not setup.global_scope:
        apply = instructions.remove_block if remove else instructions.add_block
        found.append(Step(NAME, "instructions", setup.root / "AGENTS.md", apply))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    return ["VS Code gets the MCP server only: recall does not import VS Code chats."] if hooks else []


def connections(setup: Setup) -> list[Connection]:
    path = mcp_file(setup)
    try:
        server = describe_server(mcp_json.server_entry(read_text(path), "servers"), setup.db_path)
    except Refused as exc:
        server = f"unreadable: {exc}"
    return [Connection(NAME, "user" if setup.global_scope else "project", path, server)]
