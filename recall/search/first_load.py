"""A first load's vector snapshot, written from SQLite without holding the vectors (adr/0047).

Issue 16 asks for an MCP server holding 1,000,000 vectors in at most 600 MiB. Started with no
snapshot beside the database, the index read all 366 MiB of vectors into the process, mixed each
session's messages with their neighbours (adr/0011), wrote the snapshot and then mapped it: the
server peaked at 830-841 MiB (adr/0043). Here the stored vectors go from SQLite to a scratch file a
batch at a time; each session's messages are read back from it, mixed and written back
``_EXACT_CHUNK`` rows at a time; and the snapshot is written from that file. The process holds the
small per-row arrays (33 bytes a row) and the sign bits (8 bytes a row per 64 dimensions), never
the vectors; the index then maps the snapshot as a restart does (``VectorIndex.build_snapshot``).

Every row ends up as the in-memory load makes it, in the same order: the same stored vectors read
by the same query, mixed and quantised by the same functions over the same sessions (a session's
mixed rows depend on that session alone, so how sessions are grouped into chunks does not matter),
the same sign bits (tests/test_first_load.py).

The scratch file is unlinked as soon as it is open (POSIX), so a crash leaves no 366 MiB behind;
where an open file cannot be unlinked (Windows) it goes when the build ends.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from recall.private_files import FILE_MODE
from recall.search.neighbours import mix_turns
from recall.search.vector_rows import RowChunks, publish_snapshot
from recall.search.vectors import (
    _MESSAGE_CODE,
    READ_BATCH,
    _session_chunks,
    _sign_bits,
    quantize,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

_CHUNK_ROWS = 16_384  # rows read back at a time to write the snapshot and its sign bits (6 MiB at 384-d)


class _Loaded(NamedTuple):
    """The per-row arrays of a first load, in ``seq`` order (the vectors are in the scratch file)."""

    codes: NDArray[np.int8]
    ids: NDArray[np.int64]
    projects: NDArray[np.int32]
    scales: NDArray[np.float32]
    sessions: NDArray[np.int64]
    ordinals: NDArray[np.int64]
    project_names: list[str]
    last_seq: int
    tail: tuple[float, bytes]  # (scale, vector) of the last row as stored


def build_snapshot(
    conn: sqlite3.Connection,
    path: Path,
    *,
    model_key: int,
    dim: int,
    mix: dict[int, float] | None,
    meta: dict[str, object],
) -> bool:
    """Write the snapshot of every stored vector of ``model_key`` to ``path``, as ``VectorIndex.save``
    would after a full load; False when nothing was written (no rows, or a file could not be)."""
    try:
        with _Scratch.beside(path, dim) as scratch:
            loaded = _stream(conn, scratch, model_key)
            if loaded is None:
                return False
            _mix_sessions(scratch, loaded, mix)
            bits = np.empty((max(1, -(-dim // 64)), scratch.rows), dtype=np.uint64)
            for at, chunk in scratch.chunks():
                bits[:, at : at + chunk.shape[0]] = _sign_bits(chunk)
            meta = meta | {
                "count": scratch.rows, "last_seq": loaded.last_seq, "tail_scale": loaded.tail[0],
                "tail_vector": loaded.tail[1].hex(), "projects": loaded.project_names,
            }  # fmt: skip
            arrays: dict[str, Any] = {
                "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                "codes": loaded.codes, "ids": loaded.ids, "projects": loaded.projects,
                "sessions": loaded.sessions, "ordinals": loaded.ordinals,
                "vectors": RowChunks((scratch.rows, dim), lambda: (chunk for _, chunk in scratch.chunks())),
                "scales": loaded.scales, "bits": bits,
            }  # fmt: skip
            return publish_snapshot(path, arrays)
    except OSError:  # the scratch file: a full disk or a read-only folder
        return False


def _stream(conn: sqlite3.Connection, scratch: _Scratch, model_key: int) -> _Loaded | None:
    """Every stored row of ``model_key`` in ``seq`` order: its vector appended to ``scratch``, the
    rest into small arrays. One statement, so one consistent view of the database (WAL)."""
    cursor = conn.execute(
        "SELECT e.kind_code, e.row_id, e.project, e.scale, e.vector, m.session_id, m.ordinal, e.seq "
        "FROM embeddings e LEFT JOIN messages m ON e.kind_code = ? AND m.id = e.row_id "
        "WHERE e.model_key = ? AND e.seq > 0 ORDER BY e.seq",
        (_MESSAGE_CODE, model_key),
    )
    project_ids: dict[str, int] = {}
    parts: list[tuple[np.ndarray, ...]] = []
    last = None
    while batch := cursor.fetchmany(READ_BATCH):
        count = len(batch)
        parts.append((
            np.fromiter((r[0] for r in batch), dtype=np.int8, count=count),
            np.fromiter((r[1] for r in batch), dtype=np.int64, count=count),
            np.fromiter((project_ids.setdefault(r[2], len(project_ids)) for r in batch), dtype=np.int32, count=count),
            np.fromiter((r[3] for r in batch), dtype=np.float32, count=count),
            np.fromiter((-1 if r[5] is None else r[5] for r in batch), dtype=np.int64, count=count),
            np.fromiter((r[6] or 0 for r in batch), dtype=np.int64, count=count),
        ))  # fmt: skip
        scratch.append(b"".join(r[4] for r in batch), count)
        last = batch[-1]
    if last is None:
        return None
    codes, ids, projects, scales, sessions, ordinals = (
        np.concatenate(column) for column in zip(*parts, strict=True)
    )
    return _Loaded(codes, ids, projects, scales, sessions, ordinals, list(project_ids), int(last[7]),
                   (float(last[3]), bytes(last[4])))  # fmt: skip


def _mix_sessions(scratch: _Scratch, loaded: _Loaded, mix: dict[int, float] | None) -> None:
    """Replace each message's stored vector in ``scratch`` (and its scale) by its mixed search vector,
    as ``VectorIndex._mix_sessions`` does for a first load held in memory."""
    members = np.flatnonzero(loaded.sessions >= 0)
    members = members[np.lexsort((loaded.ordinals[members], loaded.sessions[members]))]
    member_sessions = loaded.sessions[members]
    for chunk in _session_chunks(member_sessions):
        rows = members[chunk]
        stored = scratch.read(rows).astype(np.float32) * loaded.scales[rows, None]
        mixed, loaded.scales[rows] = quantize(mix_turns(stored, member_sessions[chunk], mix))
        scratch.write(rows, mixed)


class _Scratch:
    """int8 rows of ``dim`` bytes in a file of their own, read and written by position with plain
    reads and writes: the page cache holds them, not this process (nothing is mapped)."""

    def __init__(self, file: io.FileIO, dim: int) -> None:
        self.file = file
        self.dim = dim
        self.rows = 0

    @classmethod
    @contextmanager
    def beside(cls, path: Path, dim: int) -> Iterator[_Scratch]:
        """A new 0600 scratch file in ``path``'s folder (a ``.part`` name, which an erase removes)."""
        name = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.rows.part")
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        file = io.FileIO(os.open(name, flags, FILE_MODE), "r+b")
        try:
            try:
                name.unlink()  # POSIX: the file lives on while it is open, and a crash leaves nothing
            except OSError:
                pass
            yield cls(file, dim)
        finally:
            file.close()
            name.unlink(missing_ok=True)

    def append(self, data: bytes, count: int) -> None:
        if len(data) != count * self.dim:
            raise ValueError(f"stored vectors of {len(data) / count} bytes, expected {self.dim}")
        self._write_at(memoryview(data), self.rows)
        self.rows += count

    def read(self, positions: NDArray[np.int64]) -> NDArray[np.int8]:
        """The rows at ``positions`` (unique, any order), one read per run of adjacent rows."""
        order = np.argsort(positions, kind="stable")
        ordered = positions[order]
        rows = np.empty((positions.size, self.dim), dtype=np.int8)
        for start, stop in _runs(ordered):
            self._read_into(rows[start:stop], int(ordered[start]))
        out = np.empty_like(rows)
        out[order] = rows
        return out

    def write(self, positions: NDArray[np.int64], rows: NDArray[np.int8]) -> None:
        """Put ``rows`` at ``positions`` (unique, any order), one write per run of adjacent rows."""
        order = np.argsort(positions, kind="stable")
        ordered, data = positions[order], np.ascontiguousarray(rows[order])
        for start, stop in _runs(ordered):
            self._write_at(data[start:stop].data.cast("B"), int(ordered[start]))

    def chunks(self) -> Iterator[tuple[int, NDArray[np.int8]]]:
        """(first row, rows) for every row in order, ``_CHUNK_ROWS`` at a time, in one reused buffer."""
        buffer = np.empty((min(_CHUNK_ROWS, self.rows), self.dim), dtype=np.int8)
        for at in range(0, self.rows, _CHUNK_ROWS):
            part = buffer[: min(_CHUNK_ROWS, self.rows - at)]
            self._read_into(part, at)
            yield at, part

    def _read_into(self, out: NDArray[np.int8], row: int) -> None:
        view = out.data.cast("B")
        self.file.seek(row * self.dim)
        done = 0
        while done < len(view):
            got = self.file.readinto(view[done:])
            if not got:
                raise OSError("the scratch file ended before its rows")
            done += got

    def _write_at(self, data: memoryview, row: int) -> None:
        self.file.seek(row * self.dim)
        done = 0
        while done < len(data):
            wrote = self.file.write(data[done:])
            if not wrote:
                raise OSError("the scratch file took no more bytes")
            done += wrote


def _runs(ordered: NDArray[np.int64]) -> Iterator[tuple[int, int]]:
    """(start, stop) of each stretch of ``ordered`` (sorted positions) that are one apart."""
    edges = np.concatenate(([0], np.flatnonzero(np.diff(ordered) != 1) + 1, [ordered.size]))
    return zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)
