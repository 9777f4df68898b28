"""Which part of a damaged database is damaged, so `recall doctor` can say more than "malformed".

SQLite reports damage by page number ("Page 7: btreeInitPage() returns error code 11") or only as
a failed read ("database disk image is malformed"). ``PRAGMA quick_check(TABLE)`` checks one table
and its indexes, so after a failed check of the whole file each table is checked on its own and
the damaged ones are named. The FTS5 shadow tables are named as the keyword index they make up.
A file shorter than its header says was cut off (a copy that stopped, a full disk), which no table
check explains, so the header is read first.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

KEYWORD_INDEX = "search_index"
_HEADER = b"SQLite format 3\x00"
_PER_TABLE_CHECK = (3, 33, 0)  # the first SQLite that takes a table name in quick_check


@dataclass(frozen=True, slots=True)
class Damage:
    table: str  # as recall's own words name it: "messages", "search_index (the keyword index)"
    detail: str  # SQLite's first line about it


@dataclass(frozen=True, slots=True)
class Integrity:
    ok: bool
    truncated: str | None = None  # "it holds 81,920 of 159,744 bytes"
    unreadable: str | None = None  # the schema itself cannot be read: nothing can
    damaged: tuple[Damage, ...] = ()
    problems: tuple[str, ...] = ()  # the whole-file check's first lines


def check_integrity(conn: sqlite3.Connection, path: Path) -> Integrity:
    """Check the database behind ``conn`` (opened on ``path``); read-only, and never raises for damage."""
    truncated = _truncation(path)
    try:
        problems = tuple(row[0] for row in conn.execute("PRAGMA quick_check"))
    except sqlite3.DatabaseError as exc:
        problems = (str(exc),)
    if problems == ("ok",) and truncated is None:
        return Integrity(ok=True)
    try:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as exc:
        return Integrity(ok=False, truncated=truncated, unreadable=str(exc), problems=problems)
    damaged: dict[str, Damage] = {}
    if sqlite3.sqlite_version_info >= _PER_TABLE_CHECK:
        for table in tables:
            detail = _table_problem(conn, table)
            name = _known_as(table)
            if detail is not None and name not in damaged:
                damaged[name] = Damage(name, detail)
    return Integrity(ok=False, truncated=truncated, damaged=tuple(damaged.values()), problems=problems[:3])


def _table_problem(conn: sqlite3.Connection, table: str) -> str | None:
    quoted = table.replace('"', '""')
    try:
        rows = [row[0] for row in conn.execute(f'PRAGMA quick_check("{quoted}")')]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    if rows == ["ok"]:
        return None
    return " ".join(line for line in rows[0].splitlines() if not line.startswith("***"))


def _known_as(table: str) -> str:
    if table == KEYWORD_INDEX or table.startswith(f"{KEYWORD_INDEX}_"):
        return f"{KEYWORD_INDEX} (the keyword index)"
    return table


def _truncation(path: Path) -> str | None:
    """ "it holds N of M bytes" when the file is shorter than the page count its header states."""
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
        size = path.stat().st_size
    except OSError:
        return None
    if not header.startswith(_HEADER[: len(header)]) or not header:
        return None  # empty (SQLite starts a new database), or not a database file at all
    if len(header) < 100:
        return f"it holds {size:,} bytes, less than a database header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    counted = header[24:28] == header[92:96]  # the page count is valid only when these agree
    expected = page_size * pages
    if counted and pages and size < expected:
        return f"it holds {size:,} of {expected:,} bytes"
    return None
