"""Finding and opening host files so that no file system oddity can stall or abort an import.

Every adapter's discovery walks folders with ``walk_files`` and every reader opens files with
``open_regular``, so a new adapter gets these guards by using them:

- Only regular files are yielded or opened. Opening a FIFO for reading blocks until a writer
  appears (forever, in a transcript folder), and a device or socket is no transcript. The walker
  checks each candidate with ``stat``; ``open_regular`` opens with ``O_NONBLOCK`` and checks the
  open file again, so a file swapped for a FIFO between the two cannot hang the reader either.
- Symlinked folders are followed, but each real folder (device and inode) is walked once, so a
  symlink loop ends and a folder reachable twice is not read twice; a file linked twice is yielded
  once. A link that points at itself or nowhere is counted, not followed.
- File names that are not valid UTF-8 arrive as surrogate escapes (PEP 383); they are yielded like
  any other, and counted, because the file's content may be perfectly good. The store writes such a
  name in its escaped form (``recall.pathnames``).

What is passed over is counted in the ``DiscoveryReport`` that the caller opened with
``discovery_report()`` (``recall import`` adds it to its summary); with none open, nothing is counted.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from recall.pathnames import is_utf8, printable

SIDE_FILE_MAX_BYTES = 64 * 1024 * 1024  # far above any real title index or meta file; a bigger one is not one
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # absent on Windows, which has no FIFOs in folders
_OPEN_FLAGS = os.O_RDONLY | _NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
_DETAIL_LIMIT = 50


@dataclass(slots=True)
class DiscoveryReport:
    """What discovery passed over, by reason, and how many names were not valid UTF-8."""

    skipped: Counter[str] = field(default_factory=Counter)
    non_utf8_names: int = 0
    details: list[str] = field(default_factory=list)

    def skip(self, reason: str, path: Path | str) -> None:
        self.skipped[reason] += 1
        self.note(f"{reason}: {printable(os.fspath(path))}")

    def note(self, detail: str) -> None:
        if len(self.details) < _DETAIL_LIMIT:
            self.details.append(detail)


_REPORT: ContextVar[DiscoveryReport | None] = ContextVar("recall_discovery_report", default=None)


@contextmanager
def discovery_report() -> Iterator[DiscoveryReport]:
    """Count what every ``walk_files`` inside this block passes over."""
    report = DiscoveryReport()
    token = _REPORT.set(report)
    try:
        yield report
    finally:
        _REPORT.reset(token)


def _skip(reason: str, path: Path | str) -> None:
    report = _REPORT.get()
    if report is not None:
        report.skip(reason, path)


class NotRegularFile(OSError):
    """A path that is a FIFO, socket or device where a regular file was expected."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        self.kind = kind


def file_kind(mode: int) -> str:
    """``fifo``, ``socket``, ``device`` or ``directory``: the reason a non-regular file is skipped."""
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "directory"
    return "special_file"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary mode; ``NotRegularFile`` (an OSError) unless it is a
    regular file. Never blocks: the open itself does not wait for a FIFO's writer."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, file_kind(mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_side_file(path: Path) -> bytes | None:
    """The bytes of a host's optional side file (a title index, a ``meta.json``); None when it is
    missing, unreadable, not a regular file or oversized."""
    try:
        with open_regular(path) as stream:
            data = stream.read(SIDE_FILE_MAX_BYTES + 1)
    except (OSError, ValueError):  # ValueError: a path with a NUL byte
        return None
    return data if len(data) <= SIDE_FILE_MAX_BYTES else None


def walk_files(
    root: Path, accept: Callable[[Path], bool], prune: frozenset[str] = frozenset()
) -> Iterator[Path]:
    """``root`` itself when it is a regular file, else the regular files under it that ``accept``
    takes, in a stable order (sorted; a folder's files before its subfolders).

    ``prune`` names folders never entered. Everything passed over for what it is, rather than for
    its name, is counted in the open ``DiscoveryReport``.
    """
    kind = _regular_or_reason(root)
    if kind is None:
        _count_name(root)
        yield root
        return
    if kind != "directory":
        _skip(kind, root)
        return
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()
    pending = [root]
    while pending:
        folder = pending.pop()
        entries = _list_folder(folder, seen_dirs)
        if entries is None:
            continue
        files, folders = entries
        for path in files:
            if accept(path):
                identity = _regular_identity(path)
                if identity is not None and identity not in seen_files:
                    seen_files.add(identity)
                    _count_name(path)
                    yield path
        pending.extend(reversed([path for path in folders if path.name not in prune]))


def _list_folder(folder: Path, seen: set[tuple[int, int]]) -> tuple[list[Path], list[Path]] | None:
    """(files, subfolders) of a folder not walked before, both sorted by name; None to pass it over."""
    try:
        info = folder.stat()
    except OSError as exc:
        _skip(_stat_failure(exc), folder)
        return None
    identity = (info.st_dev, info.st_ino)
    if identity in seen:
        _skip("folder_linked_twice", folder)  # only a symlink can lead back to a folder already walked
        return None
    seen.add(identity)
    files: list[Path] = []
    folders: list[Path] = []
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                try:
                    is_folder = entry.is_dir()  # follows symlinks; a broken one is not a folder
                except OSError:
                    is_folder = False
                (folders if is_folder else files).append(folder / entry.name)
    except OSError as exc:
        _skip(_stat_failure(exc, "unreadable_folder"), folder)
        return None
    return sorted(files), sorted(folders)


def _regular_or_reason(path: Path) -> str | None:
    """None for a regular file, ``directory`` for a folder, else why the path is passed over."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return _stat_failure(exc)
    except ValueError:  # a NUL byte in a name given on the command line
        return "bad_name"
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _regular_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a regular file; None, counted, for anything else."""
    try:
        info = path.stat()
    except OSError as exc:
        _skip(_stat_failure(exc), path)
        return None
    if not stat.S_ISREG(info.st_mode):
        _skip(file_kind(info.st_mode), path)
        return None
    return info.st_dev, info.st_ino


def _stat_failure(exc: OSError, default: str = "unreadable") -> str:
    if exc.errno == errno.ELOOP:
        return "symlink_loop"
    if exc.errno == errno.ENOENT:
        return "broken_symlink"
    return default


def _count_name(path: Path) -> None:
    if not is_utf8(os.fspath(path)):
        report = _REPORT.get()
        if report is not None:
            report.non_utf8_names += 1
            report.note(f"name not valid UTF-8 (read, stored escaped): {printable(os.fspath(path))}")
