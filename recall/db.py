"""Opening the SQLite file: permissions, pragmas, FTS5 check and migrations, in one place.

One file per user, shared by every CLI call, hook and MCP server at once: WAL lets readers run
beside the single writer, and the busy timeout makes a second writer wait instead of failing.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from recall.errors import StoreUnavailable
from recall.migrations import migrate
from recall.private_files import create_private, tighten_existing

BUSY_TIMEOUT_MS = 10_000
FTS5_SECURE_DELETE = (3, 43, 0)  # FTS5's 'secure-delete' option, and its index format 5 (adr/0014)

SIDE_FILES = ("-wal", "-shm", "-journal")

# SQLite's primary result codes for problems with the file rather than with a statement.
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR = 3, 5, 6, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 13, 14, 26
_STORE_PROBLEMS = frozenset(
    {SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR}
    | {SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB}
)

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
        conn.execute("PRAGMA secure_delete = ON")  # freed space is zeroed: forgotten text leaves the file
        if migrate_schema:
            migrate(conn)
            _check_index_format(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(describe_sqlite_error(exc, path)) from exc
    return conn


def is_store_problem(exc: sqlite3.Error) -> bool:
    """Whether an error is about the file (locked, damaged, unwritable, full), not about a statement."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _STORE_PROBLEMS


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
    """One line: what is wrong with the database file, and what to do about it."""
    text = str(exc)
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (SQLITE_BUSY, SQLITE_LOCKED) or "locked" in text or "busy" in text:
        return (
            f"the database {path} is locked by another process for more than "
            f"{BUSY_TIMEOUT_MS // 1000} s; wait for it to finish and retry"
        )
    if code == SQLITE_CORRUPT or "malformed" in text:
        return (
            f"the database {path} is damaged ({text}); `recall doctor` names the damaged table; move the file "
            "aside and run `recall import` to rebuild what transcripts still hold"
        )
    if code == SQLITE_NOTADB or "not a database" in text:
        return f"{path} is not a readable recall database ({text}); move it aside or pass another --db"
    if code == SQLITE_FULL:
        return f"the disk holding {path} is full; free some space and retry"
    if (
        code in (SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM)
        or "readonly" in text
        or "unable to open" in text
    ):
        return f"cannot write {path} ({text}); check its permissions or pass another --db"
    if code == SQLITE_IOERR:
        return f"cannot read or write {path} ({text}); check the disk it is on and retry"
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


def sqlite_version(conn: sqlite3.Connection) -> tuple[int, ...]:
    """The version of the SQLite library behind this connection (not necessarily the stdlib's)."""
    text = conn.execute("SELECT sqlite_version()").fetchone()[0]
    return tuple(int(part) for part in text.split("."))


def _check_index_format(conn: sqlite3.Connection) -> None:
    """A forget under SQLite 3.43+ moves the keyword index to FTS5 format 5, which older SQLite refuses."""
    if sqlite_version(conn) >= FTS5_SECURE_DELETE:
        return
    row = conn.execute("SELECT v FROM search_index_config WHERE k = 'version'").fetchone()
    if row is not None and row[0] > 4:
        found = ".".join(map(str, sqlite_version(conn)))
        raise StoreUnavailable(
            f"the keyword index was written by SQLite 3.43 or newer and this Python's SQLite is {found}; "
            "run recall with a Python whose sqlite3.sqlite_version is 3.43 or newer"
        )


def _check_fts5(conn: sqlite3.Connection) -> None:
    options = {row[0] for row in conn.execute("PRAGMA compile_options")}
    if "ENABLE_FTS5" not in options:
        raise StoreUnavailable(
            "this Python's SQLite was built without FTS5, which recall needs for search; "
            "use a standard CPython build (python.org, pyenv, or your distribution's python3)"
        )
