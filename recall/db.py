"""Opening the SQLite file: permissions, pragmas, FTS5 check and migrations, in one place.

One file per user, shared by every CLI call, hook and MCP server at once: WAL lets readers run
beside the single writer, and the busy timeout makes a second writer wait instead of failing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recall.errors import StoreUnavailable
from recall.migrations import migrate
from recall.private_files import create_private, tighten_existing

BUSY_TIMEOUT_MS = 10_000
SIDE_FILES = ("-wal", "-shm", "-journal")


def connect(path: Path, *, migrate_schema: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` and bring its schema up to date."""
    _ensure_private_file(path)
    try:
        conn = sqlite3.connect(
            path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE for every write
            check_same_thread=False,  # the store serialises access with its own lock
        )
        conn.row_factory = sqlite3.Row
        _check_fts5(conn)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if migrate_schema:
            migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(describe_sqlite_error(exc, path)) from exc
    return conn


def describe_sqlite_error(exc: sqlite3.Error, path: Path) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return (
            f"the database {path} is locked by another process for more than "
            f"{BUSY_TIMEOUT_MS // 1000} s; wait for it to finish and retry"
        )
    if "not a database" in text or "malformed" in text:
        return f"{path} is not a readable recall database ({text}); move it aside or pass another --db"
    if "readonly" in text or "unable to open" in text:
        return f"cannot write {path} ({text}); check its permissions or pass another --db"
    return f"database error on {path}: {text}"


def _ensure_private_file(path: Path) -> None:
    """Create the folder (0700) and file (0600) before SQLite does: transcripts hold private conversations.

    SQLite gives the -wal, -shm and -journal files it creates the database file's mode; ones an older
    recall left looser are tightened here.
    """
    try:
        create_private(path)
        for suffix in SIDE_FILES:
            tighten_existing(Path(f"{path}{suffix}"))
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the database at {path}: {exc.strerror}") from exc


def _check_fts5(conn: sqlite3.Connection) -> None:
    options = {row[0] for row in conn.execute("PRAGMA compile_options")}
    if "ENABLE_FTS5" not in options:
        raise StoreUnavailable(
            "this Python's SQLite was built without FTS5, which recall needs for search; "
            "use a standard CPython build (python.org, pyenv, or your distribution's python3)"
        )
