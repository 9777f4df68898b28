"""Reading scattered fixed-size rows of a file in one system call, without mapping their pages.

A vector search rescores 10,000 rows scattered over a million (adr/0006). Read through the
snapshot's mapping, each one maps 64 KiB of pages or more into the process (the kernel's
fault-around), so a search made ~280 MiB of the 366 MiB of vectors resident; letting those pages
go and faulting them in again cost 11 ms of CPU a search under load (adr/0043). Linux's native
asynchronous I/O takes up to ``BATCH`` rows in one ``io_submit``: the kernel copies each from the
page cache into a buffer of the process (completed before the call returns, since the file is not
opened with ``O_DIRECT``), ~1 µs a row, and maps nothing. ``os.pread`` row by row costs 2-3 µs.

Only on Linux, little-endian, x86-64 and arm64 (the system call numbers differ elsewhere); where
``io_setup`` fails (no AIO in the kernel, a seccomp filter, the system's ``aio-max-nr`` in use)
``RowReader.open`` returns None and the caller reads through its mapping instead.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
import weakref
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

# io_setup, io_destroy, io_submit, io_getevents
_SYSCALLS = {"x86_64": (206, 207, 209, 208), "aarch64": (0, 1, 2, 4)}
BATCH = 1_024  # requests per io_submit; the context reserves this many of the system's aio-max-nr
_IOCB = np.dtype(
    [("data", "<u8"), ("key", "<u4"), ("rw_flags", "<i4"), ("opcode", "<u2"), ("reqprio", "<i2"),
     ("fildes", "<u4"), ("buf", "<u8"), ("nbytes", "<u8"), ("offset", "<i8"), ("reserved2", "<u8"),
     ("flags", "<u4"), ("resfd", "<u4")]
)  # fmt: skip  # struct iocb (linux/aio_abi.h), little-endian
_EVENT = np.dtype([("data", "<u8"), ("obj", "<u8"), ("res", "<i8"), ("res2", "<i8")])  # struct io_event
_PREAD = 0  # IOCB_CMD_PREAD


@cache
def _syscall() -> tuple[Callable[..., int], tuple[int, int, int, int]] | None:
    numbers = _SYSCALLS.get(platform.machine())
    if not sys.platform.startswith("linux") or sys.byteorder != "little" or numbers is None:
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    call = libc.syscall
    call.restype = ctypes.c_long
    return call, numbers


class RowReader:
    """Rows of ``row_bytes`` bytes at ``offset + row * row_bytes`` of one file, read by the kernel."""

    def __init__(self, fd: int, context: int, row_bytes: int, offset: int) -> None:
        self.fd, self.context, self.row_bytes, self.offset = fd, context, row_bytes, offset
        self._iocbs = np.zeros(BATCH, dtype=_IOCB)
        self._iocbs["opcode"] = _PREAD
        self._iocbs["fildes"] = fd
        self._iocbs["nbytes"] = row_bytes
        self._pointers = self._iocbs.ctypes.data + np.arange(BATCH, dtype=np.uint64) * _IOCB.itemsize
        self._events = np.zeros(BATCH, dtype=_EVENT)
        weakref.finalize(self, _close, fd, context)

    @classmethod
    def open(cls, fd: int, row_bytes: int, offset: int) -> RowReader | None:
        """A reader of the file open as ``fd``, which it owns from now on (and closes); None,
        with ``fd`` closed, where this kernel or process offers no AIO."""
        found = _syscall()
        context = ctypes.c_ulong(0)
        if found is None or found[0](ctypes.c_long(found[1][0]), ctypes.c_long(BATCH), ctypes.byref(context)):
            os.close(fd)
            return None
        return cls(fd, context.value, row_bytes, offset)

    def read(self, rows: NDArray[np.int64]) -> NDArray[np.int8]:
        """The rows, in the order given; OSError if the kernel refused or read short."""
        out = np.empty((rows.size, self.row_bytes), dtype=np.int8)
        found = _syscall()
        assert found is not None  # a reader exists only where the call does
        call, (_, _, submit, getevents) = found
        for start in range(0, rows.size, BATCH):
            count = min(BATCH, rows.size - start)
            iocbs = self._iocbs[:count]
            iocbs["buf"] = out[start].ctypes.data + np.arange(count, dtype=np.uint64) * self.row_bytes
            iocbs["offset"] = rows[start : start + count] * self.row_bytes + self.offset
            sent = call(ctypes.c_long(submit), ctypes.c_ulong(self.context), ctypes.c_long(count),
                        ctypes.c_void_p(self._pointers.ctypes.data))  # fmt: skip
            done = 0
            while done < max(sent, 0):  # buffered reads complete inside io_submit: no wait here
                got = call(ctypes.c_long(getevents), ctypes.c_ulong(self.context), ctypes.c_long(sent - done),
                           ctypes.c_long(sent - done), ctypes.c_void_p(self._events[done:].ctypes.data), None)  # fmt: skip
                if got < 0 and ctypes.get_errno() == errno.EINTR:
                    continue  # a signal arrived while waiting: the reads are still there to reap
                if got <= 0:
                    raise OSError(ctypes.get_errno(), "io_getevents failed")
                done += got
            if sent != count or not np.all(self._events["res"][:count] == self.row_bytes):
                raise OSError(ctypes.get_errno(), f"io_submit read {sent} of {count} rows")
        return out


def _close(fd: int, context: int) -> None:
    found = _syscall()
    if found is not None:
        call, (_, destroy, _, _) = found
        call(ctypes.c_long(destroy), ctypes.c_ulong(context))
    if fd >= 0:
        os.close(fd)
