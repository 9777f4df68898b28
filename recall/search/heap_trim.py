"""Handing freed C heap back to the kernel after a one-off load (issue 16: an MCP server with
1,000,000 vectors in at most 600 MiB).

Loading the embedding model frees about 50 MiB of the C heap (onnxruntime's parsed graph, its
int8 initializers once folded to float32, the tokenizer's JSON), but glibc only returns memory at
the heap's top, so the freed blocks stayed resident for the life of the server (adr/0043).
``malloc_trim(0)`` hands back every whole free page, wherever it lies; the next allocation takes
fresh pages from the kernel, so it is worth calling only after a load that will not happen again.
Elsewhere (macOS, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache

from recall import heap


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None on a C library without it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "malloc_trim"):
        return None
    trim = libc.malloc_trim
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim


def supported() -> bool:
    """Whether this process's C library has ``malloc_trim`` (glibc)."""
    return _malloc_trim() is not None


def give_back() -> bool:
    """Return the heap's free pages to the kernel; False when there is no such call, or while an
    import keeps its heap on purpose (``recall.heap.roomy_heap``, adr/0042)."""
    trim = _malloc_trim()
    if trim is None or heap.roomy():
        return False
    trim(0)
    return True
