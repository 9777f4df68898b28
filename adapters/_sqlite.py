"""Opening hosts' SQLite files (Cursor's ``state.vscdb`` and ``store.db``, OpenCode's ``opencode.db``)
without disturbing the host that has them open.

Ground truth, measured with SQLite 3.40: both hosts keep their database open in WAL mode while they
run, so ``-wal`` and ``-shm`` files sit beside it and vanish when the host exits. A ``mode=ro``
connection never writes the database, but on a WAL-mode file with no ``-wal`` beside it SQLite still
*creates* ``-wal`` and ``-shm`` and leaves them behind. Hence:

- a live WAL database (``-wal`` present) is read in place, read-only. ``immutable=1`` is never used: it
  skips locking and would read half-written pages while the host writes;
- a WAL database nobody has open is read from a private temporary copy, so nothing appears beside it;
- a rollback-journal database (most sample files) is read in place, read-only.

Every statement is fetched whole before the caller yields, so no read lock outlives a call and the
host can always write. A lock that outlasts ``BUSY_TIMEOUT_S`` is reported as ``locked`` and the file
is skipped: the reader never waits long, retries in a loop or touches the file.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from adapters._files import NotRegularFile, open_regular

BUSY_TIMEOUT_S = 1.0

_HEADER = b"SQLite format 3\x00"
_WAL_READ_VERSION_OFFSET = 18  # header byte 18 is 2 for a WAL-mode database
_LOCKED = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})
_CORRUPT = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


class Unreadable(Exception):
    """A database that cannot be read now; ``reason`` is the ParseReport key it is counted under."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def failure_reason(exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    if name in _LOCKED:
        return "locked"
    if name in _CORRUPT:
        return "corrupt_database"
    return "unreadable"


@contextmanager
def open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path``; raises ``Unreadable`` instead of any open-time error."""
    try:
        with open_regular(path) as handle:
            header = handle.read(100)
    except NotRegularFile as exc:
        raise Unreadable(exc.kind, f"{path}: {exc.strerror}") from exc
    except OSError as exc:
        raise Unreadable("unreadable", f"{path}: {exc}") from exc
    if not header:
        raise Unreadable("empty_file", str(path))
    if not header.startswith(_HEADER):
        raise Unreadable("not_a_database", str(path))
    wal = len(header) > _WAL_READ_VERSION_OFFSET and header[_WAL_READ_VERSION_OFFSET] == 2
    if not wal or Path(f"{path}-wal").exists():
        with _connect(path, path) as conn:
            yield conn
        return
    with tempfile.TemporaryDirectory(prefix="recall-sqlite-") as tmp:
        copy = Path(tmp) / path.name
        try:
            shutil.copyfile(path, copy)
        except OSError as exc:
            raise Unreadable("unreadable", f"{path}: {exc}") from exc
        with _connect(copy, path) as conn:
            yield conn


@contextmanager
def _connect(database: Path, shown: Path) -> Iterator[sqlite3.Connection]:
    try:
        conn = sqlite3.connect(
            f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
        )
    except sqlite3.Error as exc:
        raise Unreadable(failure_reason(exc), f"{shown}: {exc}") from exc
    try:
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # locks and corruption show here
        except sqlite3.Error as exc:
            raise Unreadable(failure_reason(exc), f"{shown}: {exc}") from exc
        yield conn
    finally:
        conn.close()


def table_names(conn: sqlite3.Connection) -> frozenset[str]:
    return frozenset(name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


def prefix_range(prefix: str) -> tuple[str, str]:
    """Bounds for ``key >= ? AND key < ?``: unlike ``LIKE 'p%'`` this uses the key index."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)
