"""Vector search: an in-memory index over the stored int8 vectors of one model (adr/0006).

Vectors are stored as int8 with a per-row scale; a process loads them once and then only the rows
added since (``embeddings.seq``). Filters (project, kind) apply before ranking. Up to
``EXACT_LIMIT`` candidate rows are ranked exactly (dequantised dot products, cosine error < 0.01);
beyond that a sign-bit Hamming pass picks ``PREFILTER`` candidates that are then rescored exactly,
which keeps a query over a million vectors in tens of milliseconds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

EXACT_LIMIT = 60_000
PREFILTER_MIN = 2_000
PREFILTER_PER_RESULT = 40


def quantize(matrix: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Symmetric per-row int8: row ≈ int8 * scale."""
    peak = np.abs(matrix).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return quantized, scale


class VectorIndex:
    """The vectors of one model key, mirrored from SQLite into numpy arrays."""

    def __init__(self, model_key: int, dim: int) -> None:
        self.model_key = model_key
        self.dim = dim
        self._lock = threading.Lock()
        self._last_seq = 0
        self._count = 0
        self.codes = np.zeros(0, dtype=np.int8)
        self.ids = np.zeros(0, dtype=np.int64)
        self.projects = np.zeros(0, dtype=np.int32)
        self.vectors = np.zeros((0, dim), dtype=np.int8)
        self.scales = np.zeros(0, dtype=np.float32)
        self.bits = np.zeros((0, max(1, dim // 64)), dtype=np.uint64)
        self._project_ids: dict[str, int] = {}
        self._position: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Load rows added since the last call; reload everything if rows were removed."""
        with self._lock:
            count, last = conn.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM embeddings WHERE model_key = ?", (self.model_key,)
            ).fetchone()
            if count == self._count and last == self._last_seq:
                return
            rows = conn.execute(
                "SELECT seq, kind_code, row_id, project, scale, vector FROM embeddings "
                "WHERE model_key = ? AND seq > ? ORDER BY seq",
                (self.model_key, self._last_seq),
            ).fetchall()
            if self._count + len(rows) != count:
                self.__init__(self.model_key, self.dim)  # type: ignore[misc]
                rows = conn.execute(
                    "SELECT seq, kind_code, row_id, project, scale, vector FROM embeddings "
                    "WHERE model_key = ? ORDER BY seq",
                    (self.model_key,),
                ).fetchall()
            self._append(rows)
            self._count, self._last_seq = count, last

    def _append(self, rows: Sequence[sqlite3.Row | tuple]) -> None:
        if not rows:
            return
        start = len(self)
        codes = np.fromiter((r[1] for r in rows), dtype=np.int8, count=len(rows))
        ids = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
        projects = np.fromiter((self._project_id(r[3]) for r in rows), dtype=np.int32, count=len(rows))
        scales = np.fromiter((r[4] for r in rows), dtype=np.float32, count=len(rows))
        vectors = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.int8).reshape(len(rows), self.dim)
        replaced = [self._position.get((int(c), int(i))) for c, i in zip(codes, ids, strict=True)]
        self.codes = np.concatenate([self.codes, codes])
        self.ids = np.concatenate([self.ids, ids])
        self.projects = np.concatenate([self.projects, projects])
        self.scales = np.concatenate([self.scales, scales])
        self.vectors = np.concatenate([self.vectors, vectors])
        self.bits = np.concatenate([self.bits, _sign_bits(vectors)])
        stale = [p for p in replaced if p is not None]
        if stale:  # an INSERT OR REPLACE re-embedded a row: hide its old copy
            self.codes[stale] = -1
        for offset, (code, row_id) in enumerate(zip(codes, ids, strict=True)):
            self._position[(int(code), int(row_id))] = start + offset

    def _project_id(self, name: str) -> int:
        return self._project_ids.setdefault(name, len(self._project_ids))

    def search(
        self,
        query: NDArray[np.float32],
        *,
        k: int,
        project: str | None = None,
        kinds: Iterable[int] | None = None,
    ) -> list[tuple[int, int, float]]:
        """The ``k`` nearest rows as (kind code, id, cosine), filtered before ranking."""
        with self._lock:
            mask = self._mask(project, kinds)
            if mask is not None and not mask.any():
                return []
            rows = np.flatnonzero(mask) if mask is not None else None
            total = len(self) if rows is None else rows.size
            if total == 0:
                return []
            if total > EXACT_LIMIT:
                pool = self._prefilter(query, rows, max(PREFILTER_MIN, k * PREFILTER_PER_RESULT))
            else:
                pool = rows if rows is not None else np.arange(len(self))
            scores = self._cosines(query, pool)
            take = min(k, pool.size)
            best = np.argpartition(-scores, take - 1)[:take]
            best = best[np.argsort(-scores[best], kind="stable")]
            return [(int(self.codes[pool[i]]), int(self.ids[pool[i]]), float(scores[i])) for i in best]

    def cosines_for(self, query: NDArray[np.float32], pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], float]:
        """Exact-ish cosine for specific rows (keyword candidates in hybrid search)."""
        with self._lock:
            found = [(pair, self._position[pair]) for pair in pairs if pair in self._position]
            if not found:
                return {}
            positions = np.array([p for _, p in found], dtype=np.int64)
            scores = self._cosines(query, positions)
            return {pair: float(score) for (pair, _), score in zip(found, scores, strict=True)}

    def _mask(self, project: str | None, kinds: Iterable[int] | None) -> NDArray[np.bool_] | None:
        mask = self.codes >= 0
        if project is not None:
            pid = self._project_ids.get(project)
            if pid is None:
                return np.zeros(len(self), dtype=bool)
            mask &= self.projects == pid
        if kinds is not None:
            mask &= np.isin(self.codes, np.fromiter(kinds, dtype=np.int8))
        return mask

    def _cosines(self, query: NDArray[np.float32], positions: NDArray[np.int64]) -> NDArray[np.float32]:
        out = np.empty(positions.size, dtype=np.float32)
        step = 32_768
        for start in range(0, positions.size, step):
            chunk = positions[start : start + step]
            out[start : start + step] = (self.vectors[chunk].astype(np.float32) @ query) * self.scales[chunk]
        return out

    def _prefilter(self, query: NDArray[np.float32], rows: NDArray[np.int64] | None, size: int) -> NDArray[np.int64]:
        bits = self.bits if rows is None else self.bits[rows]
        query_bits = _sign_bits(query[None, :])[0]
        distance = np.bitwise_count(bits ^ query_bits).sum(axis=1, dtype=np.uint16)
        size = min(size, distance.size)
        nearest = np.argpartition(distance, size - 1)[:size]
        return nearest if rows is None else rows[nearest]


def _sign_bits(matrix: NDArray[np.generic]) -> NDArray[np.uint64]:
    packed = np.packbits(matrix > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return packed.view(np.uint64)
