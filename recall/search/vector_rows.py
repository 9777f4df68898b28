"""The vector index's int8 rows, mapped from its snapshot file instead of copied into the process.

Issue 16 asks for an MCP server holding 1,000,000 vectors in at most 600 MiB. The vectors alone are
366 MiB at 384 dimensions, and a search reads only the rows its sign-bit prefilter keeps (10,000
of a million). So the snapshot's ``vectors`` member is memory-mapped, read-only (adr/0041): its
pages are the page cache's, shared by every process that maps the same snapshot, and the kernel
can drop them and read them again; none of them is the process's own memory. Yet a mapped page
counts in the process's resident memory while it stays mapped, and the kernel maps 64 KiB (or a
large folio) at each fault, so a search reads only the first ``KEEP_MAPPED_BYTES`` of rows through
the mapping and has the kernel copy the others (``recall.search.row_reader``), or, where it cannot,
lets go of their pages as it reads them (``let_go``, adr/0043). Once searches stop for a moment the
process lets go of every page (``release``), so an idle server holds none. Mapped rows are never
written: a row that must change (its session gained a turn, so it is mixed again) is copied to the
rows ``added`` after the mapping, and its old place hidden (``VectorIndex._move_to_end``).

The snapshot stays the ``.npz`` file ``numpy.savez`` writes (uncompressed zip members holding
``.npy`` arrays), so older files load and older recall versions read the new ones. A member is
mapped only when it is stored uncompressed with the expected header; anything else is read as before.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import numpy as np

from recall.private_files import open_private
from recall.search.row_reader import RowReader

if TYPE_CHECKING:
    from numpy.typing import NDArray

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # zip local file header: signature … name and extra lengths
_LOCAL_SIGNATURE = b"PK\x03\x04"
_WRITE_ROWS = 16_384  # rows copied at a time when a snapshot is written
_CAN_RELEASE = hasattr(mmap, "MADV_DONTNEED") and hasattr(mmap.mmap, "madvise")
# Mapped vector bytes a search reads through the mapping and leaves mapped for the next one; rows
# past them are read by the kernel (``VectorRows.gather``). At a million 384-d rows (366 MiB) an MCP
# server then holds ~550 MiB after its searches, under issue 16's 600 (adr/0043); an index of up to
# ~520,000 rows reads everything through the mapping.
KEEP_MAPPED_BYTES = 192 * 2**20
# A fault maps the 64 KiB around it (fault-around): with more than this many wanted rows in each,
# mapping them costs less than the kernel's ~1 µs a row of reading them (a scan of every row).
_FAULT_AROUND = 64 * 1024
_KERNEL_READS_UP_TO = 6


class VectorRows:
    """int8 rows in two parts: ``base`` (read from SQLite, or mapped from the snapshot) and the rows
    ``added`` since. A row added to a mapped index goes to ``added``, so one new vector does not copy
    a million mapped ones into memory. Indexing takes positions over both parts, as one array would."""

    def __init__(
        self,
        base: NDArray[np.int8],
        mapping: mmap.mmap | None = None,
        offset: int = 0,
        reader: RowReader | None = None,
    ) -> None:
        self.base = base
        self.added: NDArray[np.int8] = np.zeros((0, base.shape[1]), dtype=np.int8)
        self.mapping = mapping  # the read-only file mapping ``base`` views, if it views one
        self.offset = offset  # where ``base`` starts in the mapping
        self.reader = reader  # reads mapped rows past ``KEEP_MAPPED_BYTES`` without mapping them

    def gather(self, positions: NDArray[np.int64]) -> NDArray[np.int8]:
        """``self[positions]`` for a search, leaving no mapped page past the first
        ``KEEP_MAPPED_BYTES`` in this process's memory (adr/0043). Scattered rows there are read by
        the kernel (``RowReader``); rows as dense as a scan's, or all of them where there is no
        reader, are read through the mapping and their pages let go of at once (``let_go``)."""
        if self.mapping is None:
            return self[positions]
        far = (positions >= KEEP_MAPPED_BYTES // self.base.shape[1]) & (positions < self.frozen)
        if not far.any():
            return self[positions]
        rows = positions[far]
        span = (int(rows.max()) - int(rows.min()) + 1) * int(self.base.shape[1])
        if self.reader is not None and rows.size * _FAULT_AROUND < _KERNEL_READS_UP_TO * span:
            try:
                read = self.reader.read(rows)
            except OSError:
                self.reader = None  # this kernel or process refuses: through the mapping from now on
            else:
                out = np.empty((positions.size, self.base.shape[1]), dtype=np.int8)
                out[far], out[~far] = read, self[positions[~far]]
                return out
        out = self[positions]
        self.let_go(int(rows.max()))
        return out

    @property
    def frozen(self) -> int:
        """Rows before this position are mapped from the file and must not be written."""
        return int(self.base.shape[0]) if self.mapping is not None else 0

    def release(self) -> None:
        """Drop the mapped pages this process has read from its resident memory; the page cache
        keeps them, so the next read maps them again without reading the disk (Linux, macOS)."""
        if self.mapping is not None and _CAN_RELEASE:
            self.mapping.madvise(mmap.MADV_DONTNEED)

    def let_go(self, before_row: int | None = None) -> None:
        """Drop the mapped pages past the first ``KEEP_MAPPED_BYTES`` of rows, up to the page that
        holds row ``before_row`` (all of them when None), from resident memory.

        The kernel maps a file's pages 64 KiB or a whole large folio at a fault, so the 10,000
        scattered rows one search rescores at a million rows made ~280 MiB of a 366 MiB mapping
        resident, and a burst of searches all of it (adr/0043). Read in file order and let go of
        behind, every page is faulted in at most once a search and the stretches never add up."""
        if self.mapping is None or not _CAN_RELEASE:
            return
        page = mmap.PAGESIZE
        start = -(-(self.offset + KEEP_MAPPED_BYTES) // page) * page
        if before_row is None:
            end = len(self.mapping)
        else:
            end = (self.offset + min(before_row, self.frozen) * int(self.base.shape[1])) // page * page
        if end > start:
            self.mapping.madvise(mmap.MADV_DONTNEED, start, end - start)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self), int(self.base.shape[1]))

    @property
    def nbytes(self) -> int:
        return int(self.base.nbytes + self.added.nbytes)

    def __len__(self) -> int:
        return int(self.base.shape[0] + self.added.shape[0])

    def extend(self, rows: NDArray[np.int8]) -> None:
        """Add rows at the end; the first rows of an empty index are taken as they are, not copied."""
        if not len(self):
            self.base, self.mapping, self.reader = rows, None, None
        else:
            self.added = np.concatenate([self.added, rows])

    def __getitem__(self, where: Any) -> Any:
        split = int(self.base.shape[0])
        if isinstance(where, slice):
            start, stop, step = where.indices(len(self))
            if step == 1 and start >= split:
                return self.added[start - split : stop - split]
            if step == 1 and stop <= split:
                return self.base[start:stop]
            where = np.arange(start, stop, step)
        positions = np.asarray(where)
        if positions.ndim == 0:
            at = int(positions)
            return self.base[at] if at < split else self.added[at - split]
        if not self.added.shape[0]:
            return self.base[positions]
        out = np.empty((positions.size, self.base.shape[1]), dtype=np.int8)
        low = positions < split
        out[low] = self.base[positions[low]]
        out[~low] = self.added[positions[~low] - split]
        return out

    def __setitem__(self, positions: NDArray[np.int64], values: NDArray[np.int8]) -> None:
        split = int(self.base.shape[0])
        low = positions < split
        if low.any():  # never true for a mapped base (``frozen``): that array is read-only
            self.base[positions[low]] = values[low]
        self.added[positions[~low] - split] = values[~low]


class RowChunks(NamedTuple):
    """int8 rows that are not in memory, handed over a slice at a time (a first load's rows, read
    back from the file they were mixed in: ``recall.search.first_load``)."""

    shape: tuple[int, int]
    chunks: Callable[[], Iterator[NDArray[np.int8]]]


def publish_snapshot(
    path: Path,
    arrays: Mapping[str, NDArray[Any] | VectorRows | RowChunks],
    rows: NDArray[np.int64] | None = None,
) -> bool:
    """Write the snapshot beside ``path`` and rename it over ``path`` once it is whole and on disk.

    A reader never sees half a file: it is written under a name of its own (``.part``, 0600 from its
    first byte), flushed to the disk (``fsync``) and only then renamed. Without the ``fsync`` a
    system crash after the rename could leave the new name over blocks never written, and the
    vectors member is mapped without a check of its CRC (adr/0047). False when the file could not
    be written (a full disk, a read-only folder): the next start loads from SQLite again."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        with open_private(partial) as handle:
            write_snapshot(handle, arrays, rows)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException as exc:  # an error or an interrupt: no half-written file stays behind
        partial.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            return False
        raise
    return True


def write_snapshot(
    handle: IO[bytes],
    arrays: Mapping[str, NDArray[Any] | VectorRows | RowChunks],
    rows: NDArray[np.int64] | None = None,
) -> None:
    """What ``numpy.savez`` writes, with ``VectorRows`` and ``RowChunks`` written a slice at a time
    (never gathered into one copy in memory), only the ``rows`` of a ``VectorRows`` when given, and
    every member stored uncompressed, so ``map_member`` can map it."""
    with zipfile.ZipFile(handle, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                if isinstance(value, np.ndarray):
                    np.lib.format.write_array(member, np.ascontiguousarray(value), allow_pickle=False)
                    continue
                chunks = value.chunks() if isinstance(value, RowChunks) else _slices(value, rows)
                count = value.shape[0] if rows is None or isinstance(value, RowChunks) else int(rows.size)
                header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.int8)),
                          "fortran_order": False, "shape": (count, value.shape[1])}  # fmt: skip
                np.lib.format.write_array_header_1_0(member, header)
                for chunk in chunks:
                    member.write(np.ascontiguousarray(chunk).data)


def _slices(value: VectorRows, rows: NDArray[np.int64] | None) -> Iterator[NDArray[np.int8]]:
    """``value``'s rows (only ``rows`` when given), ``_WRITE_ROWS`` at a time."""
    count = len(value) if rows is None else int(rows.size)
    for at in range(0, count, _WRITE_ROWS):
        yield value[at : at + _WRITE_ROWS] if rows is None else value[rows[at : at + _WRITE_ROWS]]


def map_rows(path: Path, shape: Sequence[int]) -> VectorRows | None:
    """The snapshot's ``vectors`` member, mapped read-only; None when it cannot be mapped."""
    mapped = map_member(path, "vectors", np.int8, shape)
    if mapped is None:
        return None
    array, mapping, offset, fd = mapped
    # The reader reads the file the mapping views, even if the path was replaced since.
    return VectorRows(array, mapping, offset, RowReader.open(fd, int(shape[1]), offset))


def map_member(
    path: Path, name: str, dtype: type[np.generic], shape: Sequence[int]
) -> tuple[NDArray[Any], mmap.mmap, int, int] | None:
    """Member ``name`` of the snapshot at ``path`` as a read-only mapping of the file, with the
    mapping, where the array starts in it and a descriptor of the same file (the caller's to
    close); None when it is not stored as a plain uncompressed array of ``dtype`` and ``shape``."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(f"{name}.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        with open(path, "rb") as handle:
            handle.seek(info.header_offset)
            fields = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
            if fields[0] != _LOCAL_SIGNATURE:
                return None
            handle.seek(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])
            version = np.lib.format.read_magic(handle)
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            found_shape, fortran, found_dtype = read_header(handle)
            offset = handle.tell()
            if fortran or found_dtype != np.dtype(dtype) or tuple(found_shape) != tuple(shape):
                return None
            count = int(np.prod(shape))
            if count == 0:
                return None
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            fd = os.dup(handle.fileno())
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, struct.error):
        return None
    if hasattr(mapping, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        mapping.madvise(mmap.MADV_RANDOM)  # a search reads scattered rows: no read-ahead around them
    try:
        array = np.frombuffer(mapping, dtype=dtype, count=count, offset=offset).reshape(tuple(shape))
    except ValueError:  # the file is shorter than its header says
        os.close(fd)
        return None
    return array, mapping, offset, fd
