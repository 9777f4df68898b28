"""The ``recall`` entry in a JSON MCP config (Claude Code, Cursor, VS Code), added and removed by splicing.

A file recall creates starts as ``{}``; when removing our entry leaves it (or its container) empty, the
empty parts go too, so a file that connect created is deleted by disconnect and a file it edited gets
its original bytes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recall.connect import jsonedit
from recall.connect.launcher import is_recall_server
from recall.connect.plan import Change, Refused, Step

SERVER_NAME = "recall"
NEW_FILE = "{}\n"


def add_server(text: str | None, *, container: str, entry: dict[str, Any]) -> Change:
    current = text if text and text.strip() else NEW_FILE
    servers = jsonedit.get(current, (container,))
    if servers is not None and not isinstance(servers, dict):
        raise Refused(f'its "{container}" is not an object')
    existing = (servers or {}).get(SERVER_NAME)
    if existing is not None and not is_recall_server(existing):
        raise Refused(
            f'it already has a different MCP server named "{SERVER_NAME}"; rename or remove it first'
        )
    if existing == entry:
        return Change(text, "unchanged")
    updated = jsonedit.set_value(current, (container, SERVER_NAME), entry)
    return Change(updated, "updated" if existing is not None else "added")


def remove_server(text: str | None, *, container: str) -> Change:
    if text is None or not is_recall_server(server_entry(text, container)):
        return Change(text, "unchanged")
    updated = jsonedit.prune(jsonedit.remove(text, (container, SERVER_NAME)), (container,))
    return Change(None if jsonedit.load(updated) == {} else updated, "removed")


def server_entry(text: str | None, container: str) -> Any:
    """Our entry as written (any shape), or None; refuses a file that does not parse."""
    if text is None or not text.strip():
        return None
    servers = jsonedit.get(text, (container,))
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def server_step(
    agent: str, path: Path, *, container: str, entry: dict[str, Any], remove: bool, prune_dirs: int = 0
) -> Step:
    """The step that adds (or removes) recall's entry in an agent's JSON MCP config."""
    apply = (
        (lambda t: remove_server(t, container=container))
        if remove
        else (lambda t: add_server(t, container=container, entry=entry))
    )
    return Step(agent, "MCP server", path, apply, prune_dirs)
