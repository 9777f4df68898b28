"""recall's entries in an agent's ``hooks.<event>`` lists, added, updated and removed in place.

Two layouts exist. Claude Code's settings and Codex's ``hooks.json`` group handlers:
``[{"matcher"?, "hooks": [{"type": "command", "command": ...}]}]``. Cursor's ``hooks.json`` lists
them flat: ``[{"command": ...}]``. Everything else is shared: recall's handler is recognised by the
shape of its command (``launcher.is_recall_hook``), edits keep every other byte of the file, a
re-run changes nothing, and removal prunes only the lists that recall itself emptied (a list the
user left empty is theirs to keep).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from recall.connect import jsonedit
from recall.connect.launcher import is_recall_hook
from recall.connect.plan import Change, Refused

# (event, the recall verb its command runs, the handler to write)
Wanted = tuple[str, tuple[str, ...], dict[str, Any]]


def find(text: str, event: str, verb: tuple[str, ...], *, grouped: bool) -> tuple[int | str, ...] | None:
    """Path below ``("hooks", event)`` of recall's handler for ``verb``, if any."""
    entries = jsonedit.get(text, ("hooks", event))
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise Refused(f"its hooks.{event} is not a list")
    for index, entry in enumerate(entries):
        if not grouped:
            if isinstance(entry, dict) and is_recall_hook(entry.get("command"), verb):
                return (index,)
            continue
        handlers = entry.get("hooks") if isinstance(entry, dict) else None
        for position, handler in enumerate(handlers if isinstance(handlers, list) else []):
            if isinstance(handler, dict) and is_recall_hook(handler.get("command"), verb):
                return (index, "hooks", position)
    return None


def add(text: str | None, new_file: str, wanted: Sequence[Wanted], *, grouped: bool) -> Change:
    """Each wanted handler added, or updated where recall's handler for its verb already is."""
    current = text if text and text.strip() else new_file
    added: list[str] = []
    updated: list[str] = []
    for event, verb, handler in wanted:
        found = find(current, event, verb, grouped=grouped)
        if found is None:
            current = jsonedit.append(current, ("hooks", event), {"hooks": [handler]} if grouped else handler)
            added.append(event)
            continue
        before = current
        current = jsonedit.set_value(current, ("hooks", event, *found), handler)
        if current != before:
            updated.append(event)
    if not added and not updated:
        return Change(text, "unchanged")
    return Change(current, "added" if added else "updated", ", ".join(added or updated))


def remove(
    text: str | None,
    hooks: Iterable[tuple[str, tuple[str, ...]]],
    *,
    grouped: bool,
    empty: Sequence[Any] = ({},),
) -> Change:
    """recall's handlers taken out, with a group that held nothing else; ``empty`` files vanish."""
    if text is None or not text.strip():
        return Change(text, "unchanged")
    current = text
    for event, verb in hooks:
        before = current
        while (found := find(current, event, verb, grouped=grouped)) is not None:
            group = ("hooks", event, found[0])
            alone = grouped and len(jsonedit.get(current, (*group, "hooks"))) == 1
            current = jsonedit.remove(current, group if alone else ("hooks", event, *found))
        if current != before:
            current = jsonedit.prune(current, ("hooks", event))
    if current == text:
        return Change(text, "unchanged")
    return Change(None if jsonedit.load(current) in empty else current, "removed")


def wired(text: str | None, hooks: Iterable[tuple[str, tuple[str, ...]]], *, grouped: bool) -> list[str]:
    """The events whose list runs recall (for doctor)."""
    if text is None or not text.strip():
        return []
    return [event for event, verb in hooks if find(text, event, verb, grouped=grouped) is not None]
