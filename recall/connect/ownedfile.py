"""Files recall writes whole for a host: an OpenCode plugin, a Pi extension.

Such a file is recall's alone, recognised by its first line (``MARKER``): connect writes it, a re-run
with the same settings changes nothing, a run with another database rewrites it, and disconnect
deletes it. A file of the same name without the marker is the user's and is never touched.
"""

from __future__ import annotations

from recall.connect.plan import Change, Refused

MARKER = "// recall: written by `recall connect --hooks`; `recall disconnect` removes this file"


def is_ours(text: str | None) -> bool:
    return text is not None and text.split("\n", 1)[0].rstrip("\r") == MARKER


def add_file(text: str | None, content: str) -> Change:
    """``content`` (which starts with ``MARKER``) as the whole file."""
    if text == content:
        return Change(text, "unchanged")
    if text is None:
        return Change(content, "added")
    if not is_ours(text):
        raise Refused(
            "a file of that name is already there and is not recall's; rename it or remove it first"
        )
    return Change(content, "updated")


def remove_file(text: str | None) -> Change:
    return Change(None, "removed") if is_ours(text) else Change(text, "unchanged")
