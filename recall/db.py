"""Opening the SQLite file: permissions, pragmas, FTS5 check and migrations, in one place.

One file per user, shared by every CLI call, hook and MCP server at once: WAL lets readers run
beside the single writer, and the busy timeout makes a second writer wait instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from recall.errors import StoreUnavailable
from recall.migrations import migrate

BUSY_TIMEOUT_MS = 10_000
WRITE_LOCK_POLL_S = 0.001  # first pause between two tries for the write lock
WRITE_LOCK_POLL_MAX_S = 0.004  # the longest pause: shorter than the gap between two import transactions


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


def begin_immediate(conn: sqlite3.Connection, path: Path) -> None:
    """``BEGIN IMMEDIATE``, trying for the write lock every few milliseconds for up to the busy timeout.

    Why not SQLite's own busy handler: it sleeps longer the longer it waits, up to 100 ms between
    tries, and an import that commits every few tens of milliseconds leaves gaps shorter than that,
    so a waiting `recall add` could miss gap after gap for seconds (adr/0016). Trying this often
    takes each gap; a try costs microseconds.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = WRITE_LOCK_POLL_S
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") != "SQLITE_BUSY" or time.monotonic() >= deadline:
                    raise StoreUnavailable(describe_sqlite_error(exc, path)) from exc
            time.sleep(pause)
            pause = min(pause * 2, WRITE_LOCK_POLL_MAX_S)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


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
    """Create the folder (0700) and file (0600): transcripts hold private conversations."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        if os.name == "posix" and (path.stat().st_mode & 0o077):
            os.chmod(path, 0o600)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the database at {path}: {exc.strerror}") from exc


def _check_fts5(conn: sqlite3.Connection) -> None:
    options = {row[0] for row in conn.execute("PRAGMA compile_options")}
    if "ENABLE_FTS5" not in options:
        raise StoreUnavailable(
            "this Python's SQLite was built without FTS5, which recall needs for search; "
            "use a standard CPython build (python.org, pyenv, or your distribution's python3)"
        )
