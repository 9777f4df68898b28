"""Vector search: an in-memory index over the stored int8 vectors of one model (adr/0006).

Vectors are stored as int8 with a per-row scale; a process loads them once and then only the rows
added since (``embeddings.seq``), and checks for changes only when the database changed. Filters
(project, kind) apply before ranking. Up to ``EXACT_LIMIT`` candidate rows are ranked exactly
(dequantised dot products, cosine error < 0.01); beyond that a sign-bit Hamming pass keeps the
``PREFILTER_PER_RESULT * k`` (at least ``PREFILTER_MIN``) nearest rows, which are then rescored
exactly. bench/vector_latency.py measures the prefilter's recall against exact ranking.

Message rows hold the search vector of ``neighbours.mix_turns`` (the message mixed with the turns
around it, adr/0011), built here from the stored single-turn vectors: when a new vector lands in a
session, the session's rows already in memory are mixed again from their stored vectors.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import weakref
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from recall.rowkinds import KIND_CODES, RecordKind
from recall.search.neighbours import MIX_WEIGHTS, mix_turns
from recall.search.vector_rows import VectorRows, map_rows, publish_snapshot

if TYPE_CHECKING:
    from numpy.typing import NDArray

EXACT_LIMIT = 20_000
PREFILTER_MIN = 10_000
PREFILTER_PER_RESULT = 100
_EXACT_CHUNK = 16_384  # rows dequantised at a time: bounds the float32 temporary to 24 MB
_SCORE_CHUNK = 1_024  # rows scored at a time by a search: 1.5 MB of float32 (adr/0043)
_HAMMING_CHUNK = 131_072  # rows of sign bits compared at a time by the prefilter
_MESSAGE_CODE = KIND_CODES[RecordKind.MESSAGE]  # the only kind mixed with its neighbours
_SQL_VARIABLES = 900
SNAPSHOT_FORMAT = 1
_SNAPSHOT_ARRAYS = ("codes", "ids", "projects", "sessions", "ordinals", "vectors", "scales", "bits")


def quantize(matrix: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Symmetric per-row int8: row ≈ int8 * scale."""
    peak = np.abs(matrix).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return quantized, scale


class Refreshed(NamedTuple):
    """What one ``VectorIndex.refresh`` did: rows read, and whether it threw the loaded ones away."""

    loaded: int
    reloaded: bool


READ_BATCH = 16_384  # stored vectors fetched at a time when the index loads
RELEASE_AFTER_S = 2.0  # searches stopped this long: the mapped vector pages are let go (adr/0041)


class _Rows(NamedTuple):
    """Stored vectors read from SQLite, as arrays (``VectorIndex._rows_since``)."""

    codes: NDArray[np.int8]
    ids: NDArray[np.int64]
    projects: NDArray[np.int32]
    scales: NDArray[np.float32]
    vectors: NDArray[np.int8]
    sessions: NDArray[np.int64]
    ordinals: NDArray[np.int64]
    tail: tuple[float, bytes] | None  # (scale, vector) of the last row as stored


class VectorIndex:
    """The vectors of one model key, mirrored from SQLite into numpy arrays."""

    def __init__(self, model_key: int, dim: int, mix: dict[int, float] | None = None) -> None:
        self.model_key = model_key
        self.dim = dim
        self.mix = mix  # None: neighbours.MIX_WEIGHTS
        self._lock = threading.Lock()
        self._idle: threading.Timer | None = None
        self._reset()

    def _reset(self) -> None:
        self._seen: tuple[int, int] | None = None  # (total_changes, data_version) at the last check
        self._last_seq = 0
        self._tail: tuple[float, bytes] = (0.0, b"")  # (scale, vector) of the row at _last_seq
        self._count = 0
        self.codes = np.zeros(0, dtype=np.int8)  # kind code; -1 hides a row replaced by a newer copy
        self.ids = np.zeros(0, dtype=np.int64)
        self.projects = np.zeros(0, dtype=np.int32)
        self.sessions = np.zeros(0, dtype=np.int64)  # session id of a message row, -1 for records
        self.ordinals = np.zeros(0, dtype=np.int64)
        self.vectors = VectorRows(np.zeros((0, self.dim), dtype=np.int8))  # mapped from a snapshot
        self.scales = np.zeros(0, dtype=np.float32)
        # Sign bits, one row per 64-bit word (word-major): XOR + popcount run over contiguous memory.
        self.bits = np.zeros((max(1, -(-self.dim // 64)), 0), dtype=np.uint64)
        self._project_ids: dict[str, int] = {}
        self._positions = _Positions()

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def _release_later(self) -> None:
        """Let go of the mapped vector pages once no search has run for ``RELEASE_AFTER_S``
        (``VectorRows.release``): a burst of searches keeps them, an idle server holds none."""
        if not self.vectors.frozen:
            return
        if self._idle is not None:
            self._idle.cancel()
        # A weak reference: a dropped index (an erase, adr/0014) unmaps its snapshot at once.
        self._idle = threading.Timer(RELEASE_AFTER_S, _release, (weakref.ref(self),))
        self._idle.daemon = True
        self._idle.start()

    def refresh(self, conn: sqlite3.Connection, *, reload_in_memory: bool = True) -> Refreshed:
        """Load rows added since the last call; reload everything if rows were removed.

        With ``reload_in_memory`` False a reload stops once the index is emptied (``reloaded``, no
        rows), so the caller can start it again from a snapshot written straight from SQLite
        (``build_snapshot``) instead of reading every vector into the process (adr/0047).

        Counting a million embeddings costs ~20 ms, so it only happens when this connection wrote
        or another one committed since the last check (``total_changes``, ``PRAGMA data_version``).
        ``seq`` is a plain rowid: SQLite hands the highest one out again after it was deleted, so
        the row at the last loaded ``seq`` must still hold the scale and vector that were loaded.
        """
        with self._lock:
            seen = (conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0])
            if seen == self._seen:
                return Refreshed(0, reloaded=False)
            loaded, reloaded = 0, False
            if self._last_seq:
                tail = conn.execute(
                    "SELECT scale, vector FROM embeddings WHERE model_key = ? AND seq = ?",
                    (self.model_key, self._last_seq),
                ).fetchone()
                if tail is None or tuple(tail) != self._tail:
                    self._reset()
                    if not reload_in_memory:
                        return Refreshed(0, reloaded=True)
                    reloaded = True
            count, last = conn.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM embeddings WHERE model_key = ?",
                (self.model_key,),
            ).fetchone()
            if count != self._count or last != self._last_seq:
                rows = self._rows_since(conn, self._last_seq)
                # A re-embedded row (edit → trigger delete → new vector) replaces its old copy, which
                # _append hides; only rows deleted for good force a full reload.
                replaced = int(np.count_nonzero(self._positions.find(_keys(rows.codes, rows.ids)) >= 0))
                if self._count + rows.ids.size - replaced != count:
                    self._reset()
                    if not reload_in_memory:
                        return Refreshed(0, reloaded=True)
                    reloaded = True
                    rows = self._rows_since(conn, 0)
                self._append(conn, rows)
                self._release_later()
                self._count, self._last_seq = count, last
                loaded = int(rows.ids.size)
            self._seen = seen
            return Refreshed(loaded, reloaded)

    def save(self, path: Path, identity: str) -> None:
        """Write what is loaded to one ``.npz`` file, so the next process starts from it.

        A million rows take seconds to read from SQLite and mix, but well under a second from this
        file; ``restore`` trusts nothing in it that ``refresh`` does not check again against the
        database (count, last ``seq`` and the vector stored there). The file is written beside
        and renamed over the old one, so a reader never sees half of it.
        """
        with self._lock:
            meta = self.snapshot_meta(identity) | {
                "count": self._count, "last_seq": self._last_seq, "tail_scale": self._tail[0],
                "tail_vector": self._tail[1].hex(), "projects": list(self._project_ids),
            }  # fmt: skip
            # Hidden rows (replaced or moved copies) are left out, so they do not pile up in the file.
            live = None if self.codes.min(initial=0) >= 0 else np.flatnonzero(self.codes >= 0)
            arrays: dict[str, Any] = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
            for name in _SNAPSHOT_ARRAYS:
                value = getattr(self, name)
                if live is not None and name != "vectors":
                    value = value[:, live] if name == "bits" else value[live]
                arrays[name] = value
            if not publish_snapshot(path, arrays, live):  # a full disk or a read-only folder
                return
        # The index starts again from the file just written (the same rows, mapped): a first load
        # from SQLite does not keep 366 MB of vectors of its own at a million rows (adr/0041).
        self._load_snapshot(path, identity)

    def build_snapshot(self, conn: sqlite3.Connection, path: Path, identity: str) -> bool:
        """Load an empty index by writing its snapshot straight from SQLite, then mapping it as a
        restart does (``recall.search.first_load``): the first start of a large store never holds
        its vectors in the process (adr/0047). False (and still empty) when it could not be written."""
        from recall.search.first_load import build_snapshot

        if len(self):
            return False
        built = build_snapshot(
            conn,
            path,
            model_key=self.model_key,
            dim=self.dim,
            mix=self.mix,
            meta=self.snapshot_meta(identity),
        )
        return built and self._load_snapshot(path, identity)

    def restore(self, path: Path, identity: str) -> bool:
        """Start from a file ``save`` wrote for this model, mix and layout; False (and empty) otherwise."""
        return self._load_snapshot(path, identity)

    def _load_snapshot(self, path: Path, identity: str) -> bool:
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                arrays = {name: data[name] for name in _SNAPSHOT_ARRAYS if name != "vectors"}
                rows = arrays["ids"].shape[0]
                mapped = map_rows(path, (rows, self.dim))
                arrays["vectors"] = data["vectors"] if mapped is None else mapped.base
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return False
        expected = self.snapshot_meta(identity)
        if not isinstance(meta, dict) or any(meta.get(key) != value for key, value in expected.items()):
            return False
        shapes = {"vectors": (rows, self.dim), "bits": (max(1, -(-self.dim // 64)), rows)}
        dtypes = {"codes": np.int8, "ids": np.int64, "projects": np.int32, "sessions": np.int64,
                  "ordinals": np.int64, "vectors": np.int8, "scales": np.float32, "bits": np.uint64}  # fmt: skip
        for name, array in arrays.items():
            if array.dtype != dtypes[name] or array.shape != shapes.get(name, (rows,)):
                return False
        with self._lock:
            self._reset()
            for name, array in arrays.items():
                setattr(self, name, array)
            self.vectors = VectorRows(arrays["vectors"]) if mapped is None else mapped
            self._project_ids = {name: n for n, name in enumerate(meta["projects"])}
            live = np.flatnonzero(self.codes >= 0)
            self._positions.reset(_keys(self.codes[live], self.ids[live]), live.astype(np.int64))
            self._count, self._last_seq = int(meta["count"]), int(meta["last_seq"])
            self._tail = (float(meta["tail_scale"]), bytes.fromhex(meta["tail_vector"]))
        return True

    def snapshot_meta(self, identity: str) -> dict[str, object]:
        mix = MIX_WEIGHTS if self.mix is None else self.mix
        return {"format": SNAPSHOT_FORMAT, "model_key": self.model_key, "model": identity, "dim": self.dim,
                "mix": [[offset, weight] for offset, weight in sorted(mix.items())]}  # fmt: skip

    def _rows_since(self, conn: sqlite3.Connection, seq: int) -> _Rows:
        """Rows stored after ``seq``, read ``READ_BATCH`` at a time into arrays: a million rows
        fetched as one list held ~750 MB of Python objects at once, and the heap they left behind
        stayed in the process (issue 16: an MCP server's memory at 1M vectors). The vectors go
        straight into one array of the counted size: batches joined at the end made a second copy
        of every vector (366 MB at a million rows) for a moment (adr/0041)."""
        expected = conn.execute(
            "SELECT count(*) FROM embeddings WHERE model_key = ? AND seq > ?", (self.model_key, seq)
        ).fetchone()[0]
        vectors = np.empty((expected, self.dim), dtype=np.int8)
        cursor = conn.execute(
            "SELECT e.kind_code, e.row_id, e.project, e.scale, e.vector, m.session_id, m.ordinal "
            "FROM embeddings e LEFT JOIN messages m ON e.kind_code = ? AND m.id = e.row_id "
            "WHERE e.model_key = ? AND e.seq > ? ORDER BY e.seq",
            (_MESSAGE_CODE, self.model_key, seq),
        )
        parts: list[_Rows] = []
        read = 0
        while batch := cursor.fetchmany(READ_BATCH):
            part = self._arrays(batch)
            if read + len(batch) <= expected:  # rows committed after the count (no transaction) join below
                vectors[read : read + len(batch)] = part.vectors
                part = part._replace(vectors=vectors[read : read + len(batch)])
            read += len(batch)
            parts.append(part)
        if not parts:
            return self._arrays([])
        if len(parts) == 1:
            return parts[0]._replace(vectors=parts[0].vectors.copy()) if read > expected else parts[0]

        def joined(name: str) -> Any:
            return np.concatenate([getattr(part, name) for part in parts])

        if read == expected:  # the usual case: every batch was read into ``vectors`` in place
            joined_vectors = vectors
        elif read < expected:  # rows deleted after the count
            joined_vectors = vectors[:read]
        else:
            joined_vectors = joined("vectors")
        return _Rows(joined("codes"), joined("ids"), joined("projects"), joined("scales"), joined_vectors,
                     joined("sessions"), joined("ordinals"), parts[-1].tail)  # fmt: skip

    def _arrays(self, rows: Sequence[sqlite3.Row | tuple]) -> _Rows:
        count = len(rows)
        return _Rows(
            codes=np.fromiter((r[0] for r in rows), dtype=np.int8, count=count),
            ids=np.fromiter((r[1] for r in rows), dtype=np.int64, count=count),
            projects=np.fromiter((self._project_id(r[2]) for r in rows), dtype=np.int32, count=count),
            scales=np.fromiter((r[3] for r in rows), dtype=np.float32, count=count),
            vectors=np.frombuffer(b"".join(r[4] for r in rows), dtype=np.int8).reshape(count, self.dim),
            sessions=np.fromiter((-1 if r[5] is None else r[5] for r in rows), dtype=np.int64, count=count),
            ordinals=np.fromiter((r[6] or 0 for r in rows), dtype=np.int64, count=count),
            tail=(float(rows[-1][3]), bytes(rows[-1][4])) if rows else None,
        )

    def _append(self, conn: sqlite3.Connection, rows: _Rows) -> None:
        if not rows.ids.size:
            return
        start = len(self)
        codes, ids, sessions = rows.codes, rows.ids, rows.sessions
        keys = _keys(codes, ids)
        replaced = self._positions.find(keys)
        self.vectors.extend(rows.vectors)  # a first load takes them as read, without a second copy
        if start == 0:
            self.codes, self.ids, self.projects, self.scales = codes, ids, rows.projects, rows.scales
            self.sessions, self.ordinals = sessions, rows.ordinals
        else:
            self.codes = np.concatenate([self.codes, codes])
            self.ids = np.concatenate([self.ids, ids])
            self.projects = np.concatenate([self.projects, rows.projects])
            self.scales = np.concatenate([self.scales, rows.scales])
            self.sessions = np.concatenate([self.sessions, sessions])
            self.ordinals = np.concatenate([self.ordinals, rows.ordinals])
        stale = replaced[replaced >= 0]
        if stale.size:  # an INSERT OR REPLACE re-embedded a row: hide its old copy
            self.codes[stale] = -1
            self.sessions[stale] = -1
        self._positions.put(keys, np.arange(start, start + keys.size, dtype=np.int64))
        assert rows.tail is not None  # rows were read
        self._tail = rows.tail
        remixed = self._mix_sessions(conn, start, np.unique(sessions[sessions >= 0]))
        added = _sign_bits(self.vectors[start:])
        self.bits = added if start == 0 else np.concatenate([self.bits, added], axis=1)
        if remixed.size:
            self.bits[:, remixed] = _sign_bits(self.vectors[remixed])

    def _mix_sessions(
        self, conn: sqlite3.Connection, start: int, sessions: NDArray[np.int64]
    ) -> NDArray[np.int64]:
        """Replace the stored vectors of these sessions' messages by their mixed search vectors.

        Rows from ``start`` on hold stored (unmixed) vectors; older rows of the same sessions were
        mixed before, so their stored vectors are read back from SQLite. Returns those older
        positions, whose sign bits must be recomputed.
        """
        if sessions.size == 0:
            return np.zeros(0, dtype=np.int64)
        members = np.flatnonzero(np.isin(self.sessions, sessions))
        frozen = members[members < self.vectors.frozen]
        if frozen.size:  # mapped rows are read-only: they move to the end, after the new ones
            self._move_to_end(conn, frozen)
            members = np.flatnonzero(np.isin(self.sessions, sessions))
        older = members[members < start]
        if older.size:  # put their stored vectors back in place, then mix everything alike
            self.vectors[older], self.scales[older] = self._stored_vectors(conn, older)
        members = members[np.lexsort((self.ordinals[members], self.sessions[members]))]
        member_sessions = self.sessions[members]
        for chunk in _session_chunks(member_sessions):
            rows = members[chunk]
            stored = self.vectors[rows].astype(np.float32) * self.scales[rows, None]
            self.vectors[rows], self.scales[rows] = quantize(
                mix_turns(stored, member_sessions[chunk], self.mix)
            )
        return older

    def _move_to_end(self, conn: sqlite3.Connection, positions: NDArray[np.int64]) -> None:
        """Copy these rows, with their stored (unmixed) vectors, after the last row and hide them
        where they were, as a re-embedded row's old copy is hidden (``_append``). Each mapped row
        moves at most once: after that it lives in the rows added since the mapping."""
        vectors, scales = self._stored_vectors(conn, positions)
        codes, ids = self.codes[positions], self.ids[positions]
        at = len(self)
        self.vectors.extend(vectors)
        self.codes = np.concatenate([self.codes, codes])
        self.ids = np.concatenate([self.ids, ids])
        self.projects = np.concatenate([self.projects, self.projects[positions]])
        self.scales = np.concatenate([self.scales, scales])
        self.sessions = np.concatenate([self.sessions, self.sessions[positions]])
        self.ordinals = np.concatenate([self.ordinals, self.ordinals[positions]])
        self.codes[positions] = -1
        self.sessions[positions] = -1
        self._positions.put(_keys(codes, ids), np.arange(at, at + positions.size, dtype=np.int64))

    def _stored_vectors(
        self, conn: sqlite3.Connection, positions: NDArray[np.int64]
    ) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
        ids = self.ids[positions].tolist()
        vectors = self.vectors[positions].copy()  # a row deleted meanwhile keeps its vector until
        scales = self.scales[positions].copy()  # the next refresh reloads everything
        where = {row_id: n for n, row_id in enumerate(ids)}
        for begin in range(0, len(ids), _SQL_VARIABLES):
            batch = ids[begin : begin + _SQL_VARIABLES]
            marks = ", ".join("?" for _ in batch)
            for row_id, scale, vector in conn.execute(
                f"SELECT row_id, scale, vector FROM embeddings WHERE model_key = ? AND kind_code = ? "
                f"AND row_id IN ({marks})",
                (self.model_key, _MESSAGE_CODE, *batch),
            ):
                vectors[where[row_id]] = np.frombuffer(vector, dtype=np.int8)
                scales[where[row_id]] = scale
        return vectors, scales

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
            self._release_later()
            take = min(k, pool.size)
            best = np.argpartition(-scores, take - 1)[:take]
            best = best[np.argsort(-scores[best], kind="stable")]
            return [(int(self.codes[pool[i]]), int(self.ids[pool[i]]), float(scores[i])) for i in best]

    def cosines_for(
        self, query: NDArray[np.float32], pairs: Iterable[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        """Cosine for specific rows (the keyword-only candidates of hybrid search)."""
        with self._lock:
            wanted = list(pairs)
            where = self._positions.find(np.array([_key(*pair) for pair in wanted], dtype=np.int64))
            found = [(pair, int(p)) for pair, p in zip(wanted, where.tolist(), strict=True) if p >= 0]
            if not found:
                return {}
            positions = np.array([p for _, p in found], dtype=np.int64)
            scores = self.exact_scores(query, positions)
            self._release_later()
            return {pair: float(score) for (pair, _), score in zip(found, scores, strict=True)}

    def project_mask(self, project: str) -> NDArray[np.bool_]:
        pid = self._project_ids.get(project)
        return np.zeros(len(self), dtype=bool) if pid is None else self.projects == pid

    def exact_scores(self, query: NDArray[np.float32], positions: NDArray[np.int64]) -> NDArray[np.float32]:
        """Dequantised dot products with the query (its cosine, as stored rows are unit vectors).

        ``einsum`` rather than ``@``: a matrix-vector product goes to OpenBLAS, whose worker threads
        spin on the other cores after each call. On a busy 2-core machine they took the CPU from
        the rest of the search, and hybrid search at 100,000 rows waited 19-24 ms at the median
        instead of 9-14 (adr/0037); numpy's own loop costs ~0.2 ms more for 10,000 rows.
        """
        out = np.empty(positions.size, dtype=np.float32)
        # In file order: mapped rows past the kept part never add up in the process's memory, read
        # by the kernel or let go of behind (``VectorRows.gather``, adr/0043).
        order = np.argsort(positions, kind="stable")
        for start in range(0, positions.size, _SCORE_CHUNK):
            at = order[start : start + _SCORE_CHUNK]
            chunk = positions[at]
            dots = np.einsum("ij,j->i", self.vectors.gather(chunk).astype(np.float32), query)
            out[at] = dots * self.scales[chunk]
        self.vectors.let_go()
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
        distance = _hamming(self.bits, _sign_bits(query[None, :])[:, 0])
        if rows is not None:
            distance = distance[rows]
        # A histogram finds the cut-off distance faster than argpartition; ties at the cut-off are trimmed.
        cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance)), min(size, distance.size)))
        below = np.flatnonzero(distance < cutoff)
        nearest = np.concatenate([below, np.flatnonzero(distance == cutoff)[: size - below.size]])
        return nearest if rows is None else rows[nearest]


def _hamming(bits: NDArray[np.uint64], query_bits: NDArray[np.uint64]) -> NDArray[np.uint16]:
    """Hamming distance of every row's sign bits to the query's, ``_HAMMING_CHUNK`` rows at a time
    into small buffers. Whole-column temporaries (an 8 MB XOR per word at a million rows) grew the
    C heap by tens of MiB that the process then kept (adr/0043); the CPU time is the same."""
    rows = int(bits.shape[1])
    distance = np.empty(rows, dtype=np.uint16)
    xor = np.empty(min(rows, _HAMMING_CHUNK), dtype=np.uint64)
    count = np.empty(xor.size, dtype=np.uint8)
    for at in range(0, rows, _HAMMING_CHUNK):
        size = min(_HAMMING_CHUNK, rows - at)
        out, x, c = distance[at : at + size], xor[:size], count[:size]
        for word in range(bits.shape[0]):
            np.bitwise_xor(bits[word, at : at + size], query_bits[word], out=x)
            np.bitwise_count(x, out=c)
            if word:
                np.add(out, c, out=out)
            else:
                out[:] = c
    return distance


def _release(ref: weakref.ref[VectorIndex]) -> None:
    index = ref()
    if index is not None:
        with index._lock:
            index.vectors.release()


def _key(code: int, row_id: int) -> int:
    """One int for a (kind code, id) pair (``_Positions``)."""
    return (row_id << 8) | code


class _Positions:
    """Where each row sits in the index, by ``_key``: two sorted int64 arrays, 16 bytes a row.

    A dict keyed by (kind, id) tuples took ~150 MB at a million rows (issue 16: an MCP server's
    memory with 1M vectors at most 600 MiB). Lookups are a binary search; new rows are merged in
    instead of re-sorting everything, so a refresh that adds a few rows moves memory once."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int64)

    def reset(self, keys: NDArray[np.int64], rows: NDArray[np.int64]) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys, self.rows = keys[order], rows[order]

    def find(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row of each key, -1 where it has none."""
        if not self.keys.size or not keys.size:
            return np.full(keys.size, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        return np.where(self.keys[at] == keys, self.rows[at], -1)

    def put(self, keys: NDArray[np.int64], rows: NDArray[np.int64]) -> None:
        """Map ``keys`` to ``rows``; a key given twice keeps its last row, as dict updates did."""
        if not keys.size:
            return
        _, last = np.unique(keys[::-1], return_index=True)
        chosen = keys.size - 1 - last
        keys, rows = keys[chosen], rows[chosen]  # unique and sorted
        if self.keys.size:
            at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
            known = self.keys[at] == keys
            self.rows[at[known]] = rows[known]
            keys, rows = keys[~known], rows[~known]
        if keys.size:
            at = np.searchsorted(self.keys, keys)
            self.keys, self.rows = np.insert(self.keys, at, keys), np.insert(self.rows, at, rows)


def _keys(codes: NDArray[np.int8], ids: NDArray[np.int64]) -> NDArray[np.int64]:
    """``_key`` of every pair at once (kind codes of stored rows are 0-127)."""
    return (ids << 8) | codes.astype(np.int64)


def _session_chunks(sessions: NDArray[np.int64], size: int = _EXACT_CHUNK) -> list[slice]:
    """Slices of about ``size`` sorted rows that never split a session (bounds the float32 copy)."""
    chunks, begin = [], 0
    while begin < sessions.size:
        end = min(begin + size, sessions.size)
        while end < sessions.size and sessions[end] == sessions[end - 1]:
            end += 1
        chunks.append(slice(begin, end))
        begin = end
    return chunks


def _sign_bits(matrix: NDArray[np.generic]) -> NDArray[np.uint64]:
    """Sign bits of each row, word-major (one row per 64-bit word, one column per vector row).

    By slices into one preallocated array: a million rows at once made a 384 MB boolean temporary,
    and joining the slices and transposing made two more copies of the bits (issue 16: memory at 1M)."""
    rows, words = matrix.shape[0], -(-matrix.shape[1] // 64)
    out = np.empty((words, rows), dtype=np.uint64)
    for at in range(0, rows, _EXACT_CHUNK):
        packed = np.packbits(np.greater(matrix[at : at + _EXACT_CHUNK], 0), axis=1)
        pad = words * 8 - packed.shape[1]
        if pad:
            packed = np.pad(packed, ((0, 0), (0, pad)))
        out[:, at : at + _EXACT_CHUNK] = packed.view(np.uint64).T
    return out
