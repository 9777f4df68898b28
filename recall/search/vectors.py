"""Vector search: an in-memory index over the stored int8 vectors of one model (adr/0006).

Vectors are stored as int8 with a per-row scale; a process loads them once and then only the rows
added since (``embeddings.seq``), and checks for changes only when the database changed. Filters
(project, kind) apply before ranking. Up to ``EXACT_LIMIT`` candidate rows are ranked exactly
(dequantised dot products, cosine error < 0.01); beyond that a sign-bit Hamming pass keeps the
``PREFILTER_PER_RESULT * k`` (at least ``PREFILTER_MIN``) nearest rows, which are then rescored
exactly. bench/vector_latency.py measures the prefilter's recall against exact ranking.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

EXACT_LIMIT = 20_000
PREFILTER_MIN = 10_000
PREFILTER_PER_RESULT = 100
_EXACT_CHUNK = 16_384  # rows dequantised at a time: bounds the float32 temporary to 24 MB


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
        self._reset()

    def _reset(self) -> None:
        self._seen: tuple[int, int] | None = None  # (total_changes, data_version) at the last check
        self._last_seq = 0
        self._tail: tuple[float, bytes] = (0.0, b"")  # (scale, vector) of the row at _last_seq
        self._count = 0
        self.codes = np.zeros(0, dtype=np.int8)  # kind code; -1 hides a row replaced by a newer copy
        self.ids = np.zeros(0, dtype=np.int64)
        self.projects = np.zeros(0, dtype=np.int32)
        self.vectors = np.zeros((0, self.dim), dtype=np.int8)
        self.scales = np.zeros(0, dtype=np.float32)
        # Sign bits, one row per 64-bit word (word-major): XOR + popcount run over contiguous memory.
        self.bits = np.zeros((max(1, -(-self.dim // 64)), 0), dtype=np.uint64)
        self._project_ids: dict[str, int] = {}
        self._position: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Load rows added since the last call; reload everything if rows were removed.

        Counting a million embeddings costs ~20 ms, so it only happens when this connection wrote
        or another one committed since the last check (``total_changes``, ``PRAGMA data_version``).
        ``seq`` is a plain rowid: SQLite hands the highest one out again after it was deleted, so
        the row at the last loaded ``seq`` must still hold the scale and vector that were loaded.
        """
        with self._lock:
            seen = (conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0])
            if seen == self._seen:
                return
            if self._last_seq:
                tail = conn.execute(
                    "SELECT scale, vector FROM embeddings WHERE model_key = ? AND seq = ?",
                    (self.model_key, self._last_seq),
                ).fetchone()
                if tail is None or tuple(tail) != self._tail:
                    self._reset()
            count, last = conn.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM embeddings WHERE model_key = ?",
                (self.model_key,),
            ).fetchone()
            if count != self._count or last != self._last_seq:
                rows = self._rows_since(conn, self._last_seq)
                # A re-embedded row (edit → trigger delete → new vector) replaces its old copy, which
                # _append hides; only rows deleted for good force a full reload.
                replaced = sum((r[0], r[1]) in self._position for r in rows)
                if self._count + len(rows) - replaced != count:
                    self._reset()
                    rows = self._rows_since(conn, 0)
                self._append(rows)
                self._count, self._last_seq = count, last
            self._seen = seen

    def _rows_since(self, conn: sqlite3.Connection, seq: int) -> list[sqlite3.Row]:
        return conn.execute(
            "SELECT kind_code, row_id, project, scale, vector FROM embeddings "
            "WHERE model_key = ? AND seq > ? ORDER BY seq",
            (self.model_key, seq),
        ).fetchall()

    def _append(self, rows: Sequence[sqlite3.Row | tuple]) -> None:
        if not rows:
            return
        start = len(self)
        codes = np.fromiter((r[0] for r in rows), dtype=np.int8, count=len(rows))
        ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        projects = np.fromiter((self._project_id(r[2]) for r in rows), dtype=np.int32, count=len(rows))
        scales = np.fromiter((r[3] for r in rows), dtype=np.float32, count=len(rows))
        vectors = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.int8).reshape(len(rows), self.dim)
        replaced = [self._position.get((int(c), int(i))) for c, i in zip(codes, ids, strict=True)]
        self.codes = np.concatenate([self.codes, codes])
        self.ids = np.concatenate([self.ids, ids])
        self.projects = np.concatenate([self.projects, projects])
        self.scales = np.concatenate([self.scales, scales])
        self.vectors = np.concatenate([self.vectors, vectors])
        self.bits = np.concatenate([self.bits, _sign_bits(vectors).T], axis=1)
        stale = [p for p in replaced if p is not None]
        if stale:  # an INSERT OR REPLACE re-embedded a row: hide its old copy
            self.codes[stale] = -1
        for offset, (code, row_id) in enumerate(zip(codes.tolist(), ids.tolist(), strict=True)):
            self._position[(code, row_id)] = start + offset
        self._tail = (float(rows[-1][3]), bytes(rows[-1][4]))

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
            allowed = self._allowed(project, kinds)
            total = len(self) if allowed is None else int(allowed.size)
            if total == 0 or k <= 0:
                return []
            if total > EXACT_LIMIT:
                pool = self._prefilter(query, allowed, max(PREFILTER_MIN, k * PREFILTER_PER_RESULT))
            else:
                pool = allowed if allowed is not None else np.arange(len(self))
            scores = self.exact_scores(query, pool)
            take = min(k, pool.size)
            best = np.argpartition(-scores, take - 1)[:take]
            best = best[np.argsort(-scores[best], kind="stable")]
            return [(int(self.codes[pool[i]]), int(self.ids[pool[i]]), float(scores[i])) for i in best]

    def cosines_for(
        self, query: NDArray[np.float32], pairs: Iterable[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        """Cosine for specific rows (the keyword-only candidates of hybrid search)."""
        with self._lock:
            found = [(pair, self._position[pair]) for pair in pairs if pair in self._position]
            if not found:
                return {}
            positions = np.array([p for _, p in found], dtype=np.int64)
            scores = self.exact_scores(query, positions)
            return {pair: float(score) for (pair, _), score in zip(found, scores, strict=True)}

    def project_mask(self, project: str) -> NDArray[np.bool_]:
        pid = self._project_ids.get(project)
        return np.zeros(len(self), dtype=bool) if pid is None else self.projects == pid

    def exact_scores(self, query: NDArray[np.float32], positions: NDArray[np.int64]) -> NDArray[np.float32]:
        """Dequantised dot products with the query (its cosine, as stored rows are unit vectors)."""
        out = np.empty(positions.size, dtype=np.float32)
        for start in range(0, positions.size, _EXACT_CHUNK):
            chunk = positions[start : start + _EXACT_CHUNK]
            out[start : start + _EXACT_CHUNK] = (
                self.vectors[chunk].astype(np.float32) @ query
            ) * self.scales[chunk]
        return out

    def _allowed(self, project: str | None, kinds: Iterable[int] | None) -> NDArray[np.int64] | None:
        """Positions that pass the filters, or ``None`` for "every row" (no copy at a million rows)."""
        mask = self.codes >= 0
        if project is not None:
            mask &= self.project_mask(project)
        if kinds is not None:
            mask &= np.isin(self.codes, np.fromiter(kinds, dtype=np.int8))
        return None if (project is None and kinds is None and mask.all()) else np.flatnonzero(mask)

    def _prefilter(
        self, query: NDArray[np.float32], rows: NDArray[np.int64] | None, size: int
    ) -> NDArray[np.int64]:
        """The ``size`` rows nearest by Hamming distance of sign bits (7 ms per million rows)."""
        query_bits = _sign_bits(query[None, :])[0]
        distance = np.bitwise_count(self.bits[0] ^ query_bits[0]).astype(np.uint16)
        for word in range(1, self.bits.shape[0]):
            distance += np.bitwise_count(self.bits[word] ^ query_bits[word])
        if rows is not None:
            distance = distance[rows]
        # A histogram finds the cut-off distance faster than argpartition; ties at the cut-off are trimmed.
        cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance)), min(size, distance.size)))
        below = np.flatnonzero(distance < cutoff)
        nearest = np.concatenate([below, np.flatnonzero(distance == cutoff)[: size - below.size]])
        return nearest if rows is None else rows[nearest]


def _sign_bits(matrix: NDArray[np.generic]) -> NDArray[np.uint64]:
    packed = np.packbits(matrix > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return packed.view(np.uint64)
