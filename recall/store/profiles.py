"""A project's profile: a few named values a person keeps about the project (adr/0027).

One row per project and key in ``profiles``. Keys are words from a short list (stack, conventions,
build, test, lint, people, owners, notes) or the caller's own, checked here so the page stays a
page: at most ``MAX_KEYS`` keys, each value at most ``MAX_VALUE_CHARS``. Values pass the one
scrubber on the way in (``Writer``); provenance is ``user_authored``, stamped by the write path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.profile import KNOWN_KEYS
from recall.rowkinds import Provenance

if TYPE_CHECKING:
    import sqlite3

    from recall.store import Store

MAX_KEYS = 24
MAX_VALUE_CHARS = 2000
_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def check_key(key: str) -> str:
    """A profile key: lower-case, spaces as ``_``; a known key or a short word of the caller's own."""
    text = "_".join(str(key).strip().lower().split())
    if not _KEY.match(text):
        raise InvalidInput(
            f"profile key {key!r} is not a short word; use one of {', '.join(KNOWN_KEYS)} "
            "or your own (letters, digits, - and _, up to 40)"
        )
    return text


def check_value(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("a profile value must not be empty; to remove a key use unset")
    if len(value) > MAX_VALUE_CHARS:
        raise InvalidInput(
            f"a profile value is at most {MAX_VALUE_CHARS:,} characters (got {len(value):,}); "
            "keep documents as notes or decisions"
        )
    return value.strip()


def profile_rows(conn: sqlite3.Connection, project: str) -> list[dict[str, Any]]:
    """The project's values, known keys first in their order, then the caller's own by name."""
    rows = conn.execute(
        "SELECT key, value, created_at, updated_at, provenance FROM profiles WHERE project = ?", (project,)
    ).fetchall()
    order = {key: n for n, key in enumerate(KNOWN_KEYS)}
    return sorted(
        (dict(row) for row in rows), key=lambda row: (order.get(row["key"], len(order)), row["key"])
    )


def set_value(store: Store, project: str, key: str, value: str) -> dict[str, int]:
    """Set one key of a project's profile; returns what the scrubber redacted from the value."""
    key, value = check_key(key), check_value(value)
    with store.transaction() as writer:
        conn = store.connection
        found = conn.execute(
            "SELECT id FROM profiles WHERE project = ? AND key = ?", (project, key)
        ).fetchone()
        if found is not None:
            writer.update("profiles", int(found[0]), {"value": value})
        else:
            count = conn.execute("SELECT count(*) FROM profiles WHERE project = ?", (project,)).fetchone()[0]
            if count >= MAX_KEYS:
                raise InvalidInput(
                    f"the profile of {project} already has {MAX_KEYS} keys; unset one first, or put more "
                    "into notes"
                )
            writer.insert(
                "profiles", {"project": project, "key": key, "value": value}, Provenance.USER_AUTHORED
            )
        return dict(writer.redactions)


def unset_value(store: Store, project: str, key: str) -> bool:
    """Remove one key; whether it was there. The caller wipes (the value may have been sensitive)."""
    key = check_key(key)
    with store.transaction():
        deleted = store.connection.execute(
            "DELETE FROM profiles WHERE project = ? AND key = ?", (project, key)
        ).rowcount
    return bool(deleted)
