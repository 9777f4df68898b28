"""Reading one row of any kind, including sessions, for `recall show` and the MCP get tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from recall.errors import NotFound
from recall.store.records import parse_kind

if TYPE_CHECKING:
    from recall.store import Store


def load_row(store: Store, kind_name: str, row_id: int) -> dict[str, Any]:
    """The row with the entities it touched (files, commands, errors, ...) under ``entities``."""
    from recall.connections import row_entities

    if kind_name in ("session", "sessions"):
        row = load_session(store, row_id)
    else:
        row = store.require(parse_kind(kind_name), row_id)
    row["entities"] = row_entities(store, row["kind"], row_id)
    return row


def load_session(store: Store, row_id: int) -> dict[str, Any]:
    from recall.store import plain_row

    with store.reading() as conn:
        row = conn.execute("SELECT * FROM sessions WHERE id = ?", (row_id,)).fetchone()
        if row is None:
            raise NotFound(f"no session with id {row_id}")
        count = conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (row_id,)).fetchone()[0]
    out = plain_row(row, "session")
    out["message_count"] = count
    return out
