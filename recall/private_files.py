"""Files only their owner can read: every file recall writes is 0600 and every folder it makes 0700.

The database, its snapshot and the log hold private conversations, so the mode is set when a file
is created, never fixed afterwards: a chmod after the fact leaves a window in which another user can
open the file and keep reading it. SQLite creates the ``-wal``, ``-shm`` and ``-journal`` files with
the mode of the database file itself, so creating the database 0600 covers them too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from recall.config import recall_home

FILE_MODE = 0o600
FOLDER_MODE = 0o700
_LOOSE = 0o077  # group and other bits


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` and each missing parent with 0700 (``mkdir(parents=True)`` gives parents 0755).

    A folder that already exists keeps its mode (a database may live in a folder the user chose),
    except recall's own home, which an older recall made 0755.
    """
    if folder.exists():
        if os.name == "posix" and _is_home(folder) and folder.stat().st_mode & _LOOSE:
            os.chmod(folder, FOLDER_MODE)
        return
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            continue  # another process made it between the check and here
        os.chmod(path, FOLDER_MODE)  # mkdir's mode passes through the umask, which may drop the x bit


def create_private(path: Path) -> None:
    """Create an empty ``path`` with 0600 if it does not exist, and tighten it if it is looser."""
    make_private_folder(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except FileExistsError:
        tighten_existing(path)  # never opened for writing here: a read-only database stays readable
        return
    os.close(fd)


def open_private(path: Path, *, append: bool = False) -> BinaryIO:
    """Open ``path`` for writing (truncated, or appended to) as a file that is 0600 from its first byte."""
    make_private_folder(path.parent)
    flags = os.O_CREAT | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    try:
        _tighten(fd)
        return os.fdopen(fd, "ab" if append else "wb")
    except BaseException:
        os.close(fd)
        raise


def tighten_existing(path: Path) -> None:
    """Make a file recall wrote earlier (perhaps with a looser mode) 0600; a missing one is fine."""
    try:
        if os.name == "posix" and path.stat().st_mode & _LOOSE:
            os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        pass


def _is_home(folder: Path) -> bool:
    try:
        return folder.samefile(recall_home())
    except OSError:
        return False


def _tighten(fd: int) -> None:
    """An existing file keeps its mode on open, so one left 0644 by an older recall is fixed here."""
    if os.name == "posix" and os.fstat(fd).st_mode & _LOOSE:
        os.fchmod(fd, FILE_MODE)
