"""The C heap during long writes: freed memory is kept for the next batch, not handed back at once.

glibc's malloc returns the top of its heap to the kernel whenever more than ``M_TRIM_THRESHOLD``
(128 KiB, until a large mmapped block happens to be freed) lies free there. An import frees each
transaction's rows, strings and SQLite and FTS5 buffers, then allocates as much again for the next
one, so the same pages went back to the kernel and were faulted in again: 1.2 million minor page
faults and a third of the CPU time of a 20,000-message import (adr/0042). Inside ``roomy_heap`` up to
``KEEP_BYTES`` of free memory stay with the process; on leaving, the threshold is glibc's default
again. Elsewhere (macOS, musl) this does nothing: their allocators have no such setting.

The opposite is wanted after a one-off load that will not happen again (the embedding model, a
vector index: adr/0043): glibc returns memory only at the heap's top, so the blocks such a load
freed stayed resident for the life of an MCP server. ``give_back`` calls ``malloc_trim(0)``, which
hands back every whole free page wherever it lies; it does nothing inside ``roomy_heap``.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter number (malloc.h)
DEFAULT_TRIM_BYTES = 128 * 1024  # glibc's default threshold
KEEP_BYTES = 32 * 1024 * 1024  # at most this much free memory stays in the process during the work

_lock = threading.Lock()
_holders = 0


@cache
def _glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc: musl exports a ``mallopt`` that ignores its
    arguments, and macOS has neither call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "gnu_get_libc_version") else None


@cache
def _mallopt() -> Callable[[int, int], int] | None:
    libc = _glibc()
    if libc is None or not hasattr(libc, "mallopt"):
        return None
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    libc = _glibc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return None
    trim = libc.malloc_trim
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim


def supported() -> bool:
    """Whether this process's allocator takes the setting (glibc)."""
    return _mallopt() is not None


def can_give_back() -> bool:
    """Whether this process's C library has ``malloc_trim`` (glibc)."""
    return _malloc_trim() is not None


def give_back() -> bool:
    """Return the heap's free pages to the kernel; False when there is no such call, or while an
    import keeps its heap on purpose (``roomy_heap``, adr/0042)."""
    trim = _malloc_trim()
    if trim is None or roomy():
        return False
    trim(0)
    return True


def roomy() -> bool:
    """Whether some caller is inside ``roomy_heap`` now."""
    return _holders > 0


def roomy_for_good() -> None:
    """The setting for the rest of this process: a worker that only ever reads ahead (recall.read_ahead)."""
    global _holders
    mallopt = _mallopt()
    with _lock:
        _holders += 1
        if mallopt is not None:
            mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)


@contextmanager
def roomy_heap() -> Iterator[None]:
    """Keep up to ``KEEP_BYTES`` of freed memory for the duration; nested and concurrent uses
    (imports in one MCP server) share the setting, and the last one out restores the default."""
    global _holders
    mallopt = _mallopt()
    with _lock:
        _holders += 1
        if _holders == 1 and mallopt is not None:
            mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and mallopt is not None:
                mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_BYTES)
