"""Listing stored rows newest first, filtered, one page at a time (`recall list`, MCP ``memory_list``).

Pages are cut by keyset, not by offset: the cursor names the last row shown (its time, kind and id),
so a row written while someone pages through does not shift the next page, and page 1,000 costs what
page 1 does. Several kinds list together in one time order through a ``UNION ALL``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.kinds import Kind
from recall.store.records import normalise_tags
from recall.store.writer import to_db_time, utc_now

if TYPE_CHECKING:
    from recall.store import Store

MAX_PAGE = 500

_TABLES: dict[Kind, str] = {
    Kind.DECISION: "decisions",
    Kind.LEARNING: "learnings",
    Kind.BREADCRUMB: "breadcrumbs",
    Kind.SESSION_SUMMARY: "session_summaries",
    Kind.SESSION: "sessions",
    Kind.MESSAGE: "messages",
    Kind.NOTE: "notes",
}
# When a row "happened": a session when it started, a message when it was said, a record when written.
_WHEN: dict[Kind, str] = {
    Kind.SESSION: "coalesce(started_at, created_at)",
    Kind.MESSAGE: "coalesce(timestamp, created_at)",
}
_TAGGED = frozenset((Kind.DECISION, Kind.LEARNING, Kind.BREADCRUMB))
# Which kinds each status applies to: decisions have a lifecycle; every typed kind may expire.
STATUSES: dict[str, frozenset[Kind]] = {
    "active": frozenset({Kind.DECISION}),
    "superseded": frozenset({Kind.DECISION}),
    "reverted": frozenset({Kind.DECISION}),
    "live": _TAGGED,
    "expired": _TAGGED,
}
DEFAULT_KINDS: tuple[Kind, ...] = (Kind.DECISION, Kind.LEARNING, Kind.BREADCRUMB, Kind.SESSION_SUMMARY)


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What to list; ``project=None`` lists every project."""

    kinds: tuple[Kind, ...] = DEFAULT_KINDS
    project: str | None = None
    status: str | None = None
    provenance: str | None = None
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    limit: int = 20
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class ListedPage:
    rows: tuple[tuple[Kind, int], ...]  # (kind, id), newest first
    next_cursor: str | None  # None on the last page


def list_rows(store: Store, query: ListQuery) -> ListedPage:
    """One page of (kind, id) pairs matching every filter, newest first."""
    if not 1 <= query.limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be from 1 to {MAX_PAGE}, got {query.limit}")
    kinds = _applicable(query)
    if not kinds:
        return ListedPage((), None)
    parts: list[str] = []
    params: list[Any] = []
    for kind in kinds:
        sql, values = _select(kind, query)
        parts.append(sql)
        params.extend(values)
    sql = f"SELECT kind, id, happened, rank FROM ({' UNION ALL '.join(parts)})"
    if query.cursor:
        sql += " WHERE (happened, rank, id) < (?, ?, ?)"
        params.extend(_decode(query.cursor))
    sql += " ORDER BY happened DESC, rank DESC, id DESC LIMIT ?"
    params.append(query.limit + 1)
    with store.reading() as conn:
        found = conn.execute(sql, params).fetchall()
    page = found[: query.limit]
    more = len(found) > query.limit
    cursor = _encode(page[-1]["happened"], page[-1]["rank"], page[-1]["id"]) if more and page else None
    return ListedPage(tuple((Kind(row["kind"]), int(row["id"])) for row in page), cursor)


def _applicable(query: ListQuery) -> tuple[Kind, ...]:
    """The kinds every filter can apply to; naming a kind a filter cannot apply to is an error."""
    kinds = query.kinds
    if query.status is not None:
        owner = STATUSES.get(query.status)
        if owner is None:
            raise InvalidInput(f"unknown status {query.status!r}; use one of: {', '.join(STATUSES)}")
        kinds = _narrow(kinds, owner, f"status {query.status}")
    if query.tags:
        kinds = _narrow(kinds, _TAGGED, "tags")
    return kinds


def _narrow(kinds: tuple[Kind, ...], allowed: set[Kind] | frozenset[Kind], what: str) -> tuple[Kind, ...]:
    kept = tuple(kind for kind in kinds if kind in allowed)
    if not kept and len(kinds) == 1:
        raise InvalidInput(f"{what} does not apply to {kinds[0].value} rows")
    return kept


def _select(kind: Kind, query: ListQuery) -> tuple[str, list[Any]]:
    when = _WHEN.get(kind, "created_at")
    clauses: list[str] = []
    params: list[Any] = [kind.value, _rank(kind)]
    if query.project is not None:
        clauses.append("project = ?")
        params.append(query.project)
    if query.provenance is not None:
        clauses.append("provenance = ?")
        params.append(query.provenance)
    if query.since is not None:
        clauses.append(f"{when} >= ?")
        params.append(to_db_time(query.since))
    for tag in normalise_tags(list(query.tags)):
        clauses.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.value = ?)")
        params.append(tag)
    if query.status in ("active", "superseded", "reverted"):
        clauses.append("status = ?")
        params.append(query.status)
    elif query.status == "expired":
        clauses.append("valid_until IS NOT NULL AND valid_until <= ?")
        params.append(to_db_time(utc_now()))
    elif query.status == "live":
        clauses.append("(valid_until IS NULL OR valid_until > ?)")
        params.append(to_db_time(utc_now()))
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return f"SELECT ? AS kind, id, {when} AS happened, ? AS rank FROM {_TABLES[kind]}{where}", params


def _rank(kind: Kind) -> int:
    return list(Kind).index(kind)


def _encode(happened: str, rank: int, row_id: int) -> str:
    raw = json.dumps([happened, rank, row_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> list[Any]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        happened, rank, row_id = json.loads(raw)
        if not (isinstance(happened, str) and isinstance(rank, int) and isinstance(row_id, int)):
            raise TypeError(cursor)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise InvalidInput("this cursor is not one recall gave out; start again without --cursor") from None
    return [happened, rank, row_id]
