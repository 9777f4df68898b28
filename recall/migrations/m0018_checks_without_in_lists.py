"""Every ``CHECK (x IN ('a', 'b', 'c'))`` becomes ``CHECK (x = 'a' OR x = 'b' OR x = 'c')`` (adr/0046).

The SQLite Debian ships (3.40) evaluates a CHECK whose IN list holds three values or more by
building a temporary b-tree of the list for every row written: four per message (provenance,
role, origin, kind), one per entity and one per entity link, each a page allocated and zeroed. That
was a fifth of what inserting a message cost. The comparisons accept exactly the same values.

A constraint cannot be altered in place, and copying the message table to change it would make an
upgrade of a large store take minutes, so the stored definitions are rewritten as SQLite documents
for changing CHECK constraints (``PRAGMA writable_schema``, then a new ``schema_version``): every
row already satisfies the new constraint, since it is the same one. Where the library refuses
(a build in defensive mode), the definitions stay as they were: the store is only slower.
"""

from __future__ import annotations

import re
import sqlite3

SQL = ""

_VALUE = r"(?:'[^']*'|-?\d+)"
_IN_LIST = re.compile(rf"\b(\w+)\s+IN\s*\(\s*({_VALUE}(?:\s*,\s*{_VALUE}){{2,}})\s*\)")


def comparisons(definition: str) -> str:
    """``definition`` with each IN list of three constants or more written as comparisons."""

    def spelled_out(match: re.Match[str]) -> str:
        column = match.group(1)
        values = re.findall(_VALUE, match.group(2))
        return "(" + " OR ".join(f"{column} = {value}" for value in values) + ")"

    return _IN_LIST.sub(spelled_out, definition)


def apply(conn: sqlite3.Connection) -> None:
    tables = conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%CHECK%'")
    changed = [(comparisons(sql), name) for name, sql in tables.fetchall() if comparisons(sql) != sql]
    if not changed:
        return
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    conn.execute("SAVEPOINT checks")
    try:
        conn.execute("PRAGMA writable_schema = ON")
        conn.executemany("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?", changed)
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    except sqlite3.DatabaseError:
        conn.execute("ROLLBACK TO checks")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
        conn.execute("RELEASE checks")
    conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # the new definitions parse
