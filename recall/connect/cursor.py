"""Cursor: MCP server in ``.cursor/mcp.json``, a ``stop`` hook in ``.cursor/hooks.json``, a rule file.

Cursor's hooks file is ``{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}``. The ``stop``
event fires when an agent run ends and passes ``conversation_id`` and ``workspace_roots`` (newer
versions also ``transcript_path``) on stdin; ``recall dump --from-hook`` imports that conversation's
agent transcript. Chats that exist only inside Cursor's own database have no file to hand over, so
they arrive with ``recall import`` (or ``recall import --watch``). Cursor keeps user-level rules in
its settings, not in a file, so the instruction rule is written for projects only.
"""

from __future__ import annotations

from pathlib import Path

from recall.connect import instructions, jsonedit, mcp_json
from recall.connect.launcher import DUMP_HOOK, Setup, describe_server, is_recall_hook
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "cursor"
EVENT = "stop"


def folder(setup: Setup) -> Path:
    return (setup.home if setup.global_scope else setup.root) / ".cursor"


def detected(home: Path) -> bool:
    return (home / ".cursor").is_dir()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    entry = setup.mcp_entry(with_type=False)
    base = folder(setup)
    found = [
        mcp_json.server_step(
            NAME, base / "mcp.json", container="mcpServers", entry=entry, remove=remove, prune_dirs=1
        )
    ]
    if hooks or remove:
        found.append(
            Step(
                NAME, "hooks", base / "hooks.json", remove_hook if remove else lambda t: add_hook(t, setup), 1
            )
        )
    if (guidance or remove) and not setup.global_scope:
        head = instructions.CURSOR_RULE_HEAD
        apply = (
            (lambda t: instructions.remove_block(t, head=head))
            if remove
            else (lambda t: instructions.add_block(t, head=head))
        )
        found.append(Step(NAME, "instructions", base / "rules" / "recall.mdc", apply, 2))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    found = []
    if hooks:
        found.append(
            "Cursor's stop hook imports agent transcripts; chats kept only in Cursor's database arrive "
            "with `recall import` (run `recall import --watch` to keep them current)."
        )
    return found


def add_hook(text: str | None, setup: Setup) -> Change:
    current = text if text and text.strip() else '{\n  "version": 1\n}\n'
    wanted = {"command": setup.hook_command(DUMP_HOOK, "--source", NAME)}
    position = _find(current)
    if position is None:
        return Change(jsonedit.append(current, ("hooks", EVENT), wanted), "added", EVENT)
    updated = jsonedit.set_value(current, ("hooks", EVENT, position), wanted)
    return Change(text, "unchanged") if updated == current else Change(updated, "updated", EVENT)


def remove_hook(text: str | None) -> Change:
    if text is None or not text.strip():
        return Change(text, "unchanged")
    current = text
    while (position := _find(current)) is not None:
        current = jsonedit.remove(current, ("hooks", EVENT, position))
    if current == text:
        return Change(text, "unchanged")
    current = jsonedit.prune(current, ("hooks", EVENT))
    return Change(None if jsonedit.load(current) in ({}, {"version": 1}) else current, "removed")


def connections(setup: Setup) -> list[Connection]:
    base = folder(setup)
    try:
        server = describe_server(
            mcp_json.server_entry(read_text(base / "mcp.json"), "mcpServers"), setup.db_path
        )
    except Refused as exc:
        server = f"unreadable: {exc}"
    try:
        wired = [EVENT] if _find(read_text(base / "hooks.json") or "{}") is not None else []
    except Refused:
        wired = []
    scope = "user" if setup.global_scope else "project"
    return [Connection(NAME, scope, base / "mcp.json", server, base / "hooks.json", wired)]


def _find(text: str) -> int | None:
    entries = jsonedit.get(text, ("hooks", EVENT))
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise Refused(f"its hooks.{EVENT} is not a list")
    for position, entry in enumerate(entries):
        if isinstance(entry, dict) and is_recall_hook(entry.get("command"), DUMP_HOOK):
            return position
    return None
