"""Where a Cursor session was working: the folder recall later resolves to a project.

Ground truth (``shared/ref/transcript-formats.md`` §6.1), in order of trust:

1. ``composerData.workspaceIdentifier.uri`` (``fsPath``, ``path`` or the ``external`` URI), or
   ``workspaceUri``, written by newer builds into the composer itself;
2. the ``workspace.json`` of the workspace database whose ``ItemTable['composer.composerData']`` lists
   the composer: ``{"folder": "file:///abs/path"}``, or ``{"workspace": "file:///…/x.code-workspace"}``
   for a multi-root window, where the workspace file's folder is used. ``workspaceStorage/<id>`` is a
   VS Code hash, not a hash of the path, so the file has to be read;
3. ``messageRequestContext:<composerId>:<bubbleId>`` rows: ``projectLayouts`` is a list of JSON strings
   with a ``rootPath``.

Only the folder is found here; naming the project is the store's job (``recall.project``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from adapters._cursor_messages import as_str, first_list, parent_path, parse_json, uri_to_path
from adapters._files import read_side_file
from adapters._sqlite import Unreadable, open_readonly, prefix_range
from recall.transcript import ParseReport

COMPOSERS_KEY = "composer.composerData"


def workspace_folder(workspace_dir: Path) -> str | None:
    """The folder a workspace database belongs to, from its ``workspace.json``."""
    raw = read_side_file(workspace_dir / "workspace.json")
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if folder := as_str(data.get("folder")):
        return uri_to_path(folder)
    workspace_file = uri_to_path(as_str(data.get("workspace")) or "")
    return parent_path(workspace_file) if workspace_file else None  # multi-root: the file's folder


def declared_folder(data: dict[str, Any]) -> str | None:
    identifier = data.get("workspaceIdentifier")
    uri = identifier.get("uri") if isinstance(identifier, dict) else None
    if isinstance(uri, dict):
        found = as_str(uri.get("fsPath")) or as_str(uri.get("path")) or as_str(uri.get("external"))
        if found:
            return uri_to_path(found)
    workspace_uri = data.get("workspaceUri")
    if isinstance(workspace_uri, dict):
        workspace_uri = workspace_uri.get("fsPath") or workspace_uri.get("external")
    return uri_to_path(workspace_uri) if isinstance(workspace_uri, str) and as_str(workspace_uri) else None


def workspace_folders(global_db: Path) -> dict[str, str]:
    """composerId → folder of the workspace database that lists it, for composers that do not say."""
    storage = global_db.parent.parent / "workspaceStorage"
    if global_db.parent.name != "globalStorage" or not storage.is_dir():
        return {}
    folders: dict[str, str] = {}
    for db in sorted(storage.glob("*/state.vscdb")):
        folder = workspace_folder(db.parent)
        if folder is None:
            continue
        try:
            with open_readonly(db) as conn:
                row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (COMPOSERS_KEY,)).fetchone()
        except (Unreadable, sqlite3.Error):
            continue  # read as a source of its own, where the failure is reported
        data = parse_json(row[0], ParseReport(), "") if row else None
        heads = data if isinstance(data, list) else first_list(data, "allComposers") or []
        for head in heads:
            if isinstance(head, dict) and as_str(head.get("composerId")):
                folders.setdefault(head["composerId"], folder)
    return folders


def request_context_root(conn: sqlite3.Connection, composer_id: str) -> str | None:
    rows = conn.execute(
        "SELECT value FROM cursorDiskKV WHERE key >= ? AND key < ? LIMIT 5",
        prefix_range(f"messageRequestContext:{composer_id}:"),
    ).fetchall()
    for (value,) in rows:
        context = parse_json(value, ParseReport(), "")  # a hint, not a message: failures are not counted
        for layout in first_list(context, "projectLayouts") or []:
            layout = parse_json(layout, ParseReport(), "") if isinstance(layout, str) else layout
            if isinstance(layout, dict) and as_str(layout.get("rootPath")):
                return layout["rootPath"]
    return None
