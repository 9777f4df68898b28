"""What gets embedded, when, and how a query finds it by meaning.

Embedded: every decision, learning, breadcrumb and session summary on write, and the text messages
people and agents wrote (tool output, injected context and thinking are left to keyword search:
they are long, noisy and would cost most of the embedding time). A message is embedded alone, one
model pass per turn; the vector index mixes it with its neighbours' vectors at search time
(``neighbours.py``, adr/0011), which recovers most of what embedding the turns before it with
the message gained on LoCoMo at a third of the model time.

Vectors record the model key (model id + file hash); only vectors of the current model are ever
searched, and `recall embed --rebuild` re-embeds after a model change.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.rowkinds import KIND_BY_CODE, KIND_CODES, RecordKind, index_rowid, split_rowid
from recall.store.derived import VECTOR_INDEXES

if TYPE_CHECKING:
    from recall.search.embedder import Embedder
    from recall.search.vectors import VectorIndex
    from recall.store import Store

log = logging.getLogger(__name__)

EMBED_ORIGINS = ("human", "agent", "compaction")
BATCH_ROWS = 256
# Below this many vectors SQLite loads the index in under a second: no snapshot file (vector_index).
SNAPSHOT_MIN_ROWS = 50_000
# Queued records (m0010) a meaning search embeds before it searches, newest first: a few written by
# `recall add` since the last search cost milliseconds; a backlog left by `--embed-budget 0` is
# worked off a batch per search, or by `recall embed`, instead of stalling one query (adr/0029).
DUE_PER_SEARCH = 64

Progress = Callable[[int, int], None]

_RECORD_TEXT: dict[RecordKind, str] = {
    RecordKind.DECISION: "SELECT id, project, content || coalesce(char(10) || detail, '') AS text FROM decisions",
    RecordKind.LEARNING: "SELECT id, project, content || coalesce(char(10) || detail, '') AS text FROM learnings",
    RecordKind.BREADCRUMB: "SELECT id, project, content || coalesce(char(10) || detail, '') AS text FROM breadcrumbs",
    RecordKind.SESSION_SUMMARY: "SELECT id, project, title || char(10) || content AS text FROM session_summaries",
    RecordKind.NOTE: "SELECT id, project, path || char(10) || content AS text FROM notes",
}


def _message_sql() -> str:
    """Each text message people or agents wrote, alone (its neighbours join in the index)."""
    return f"""
SELECT m.id, m.project, m.content AS text
FROM messages m
WHERE m.kind = 'text' AND m.origin IN ({", ".join(f"'{o}'" for o in EMBED_ORIGINS)})
"""


@dataclass(slots=True)
class EmbedReport:
    embedded: int = 0
    pending: int = 0
    seconds: float = 0.0
    model_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "pending": self.pending, "seconds": round(self.seconds, 2),
                "model": self.model_id}  # fmt: skip


def model_key(store: Store, embedder: Embedder) -> int:
    """The key of this exact model file in this store, registered once per process (not per query)."""
    keys: dict[tuple[str, str], int] = store.cache.setdefault("model_keys", {})
    identity = (embedder.model_id, embedder.model_hash)
    if identity not in keys:
        with store.reading() as conn:  # a write transaction only the first time: it waits for the lock
            row = conn.execute(
                "SELECT id FROM embedding_models WHERE model_id = ? AND model_hash = ?", identity
            ).fetchone()
        if row is not None:
            keys[identity] = int(row[0])
        else:
            with store.transaction() as writer:
                keys[identity] = writer.register_model(*identity, embedder.dim)
    return keys[identity]


def _base_sql(kind: RecordKind) -> str:
    """Every row of ``kind`` that gets a vector, with its text."""
    return _message_sql() if kind is RecordKind.MESSAGE else _RECORD_TEXT[kind]


def _pending_sql(kind: RecordKind, project: str | None, limit: int | None) -> str:
    base = _base_sql(kind)
    alias = "m." if kind is RecordKind.MESSAGE else ""
    joiner = " AND " if kind is RecordKind.MESSAGE else " WHERE "
    clause = (
        f"NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_key = :key AND e.kind_code = {KIND_CODES[kind]} "
        f"AND e.row_id = {alias}id)"
    )
    if project is not None:
        clause += f" AND {alias}project = :project"
    sql = f"{base}{joiner}{clause} ORDER BY {alias}id"
    return sql + (f" LIMIT {int(limit)}" if limit else "")


def count_pending(store: Store, key: int, project: str | None = None) -> dict[str, int]:
    out = {}
    with store.reading() as conn:
        for kind in RecordKind:
            sql = f"SELECT count(*) FROM ({_pending_sql(kind, project, None)})"
            out[kind.value] = conn.execute(sql, {"key": key, "project": project}).fetchone()[0]
    return out


def has_pending(store: Store, embedder: Embedder) -> bool:
    """Whether rows of some kind outnumber their vectors of this model: two counts per kind, on
    indexes (m0006's ``messages_embeddable`` for messages), instead of a lookup per row. Editing or
    deleting a row drops its vectors, so more rows than vectors means some wait for one."""
    key = model_key(store, embedder)
    embedded = count_embedded(store, key)
    with store.reading() as conn:
        for kind in RecordKind:
            rows = conn.execute(f"SELECT count(*) FROM ({_base_sql(kind)})").fetchone()[0]
            if rows > embedded[kind.value]:
                return True
    return False


def count_embedded(store: Store, key: int) -> dict[str, int]:
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT kind_code, count(*) FROM embeddings WHERE model_key = ? GROUP BY kind_code", (key,)
        ).fetchall()
    counts = {kind.value: 0 for kind in RecordKind}
    counts.update({KIND_BY_CODE[code].value: n for code, n in rows})
    return counts


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    project: str | None = None,
    kinds: Iterable[RecordKind] = tuple(RecordKind),
    budget_seconds: float | None = None,
    progress: Progress | None = None,
) -> EmbedReport:
    """Embed what has no vector yet, in batches, each committed on its own (so it is resumable)."""
    started = time.perf_counter()
    key = model_key(store, embedder)
    report = EmbedReport(model_id=embedder.model_id)
    total = sum(count_pending(store, key, project).get(k.value, 0) for k in kinds)
    for kind in kinds:
        while True:
            if budget_seconds is not None and time.perf_counter() - started > budget_seconds:
                report.pending = total - report.embedded
                report.seconds = time.perf_counter() - started
                return report
            with store.reading() as conn:
                rows = conn.execute(
                    _pending_sql(kind, project, BATCH_ROWS), {"key": key, "project": project}
                ).fetchall()
            if not rows:
                break
            _embed_rows(store, embedder, key, kind, rows)
            report.embedded += len(rows)
            if progress:
                progress(report.embedded, total)
    report.pending = max(0, total - report.embedded)
    report.seconds = time.perf_counter() - started
    return report


def embed_one(store: Store, embedder: Embedder, kind: RecordKind, row_id: int) -> None:
    """Embed a record just written (on write, not in a batch job)."""
    key = model_key(store, embedder)
    base = (
        _message_sql() + " AND m.id = :id"
        if kind is RecordKind.MESSAGE
        else _RECORD_TEXT[kind] + " WHERE id = :id"
    )
    with store.reading() as conn:
        rows = conn.execute(base, {"id": row_id}).fetchall()
    if rows:
        _embed_rows(store, embedder, key, kind, rows)


def embed_due(store: Store, embedder: Embedder, limit: int = DUE_PER_SEARCH) -> int:
    """Embed the newest records queued in ``vectors_due`` (written while no model was loaded), so
    the search about to run finds them by meaning. Returns how many were embedded.

    An empty queue costs one indexed read. A failure to write (the lock held past its timeout, a
    read-only file) leaves the queue as it was and the search goes on without those rows.
    """
    from recall.errors import RecallError

    with store.reading() as conn:
        due = conn.execute(
            "SELECT kind_code, row_id FROM vectors_due ORDER BY seq DESC LIMIT ?", (limit,)
        ).fetchall()
    if not due:
        return 0
    wanted: dict[int, list[int]] = {}
    for code, row_id in due:
        wanted.setdefault(code, []).append(row_id)
    embedded = 0
    gone: list[tuple[int, int]] = []
    try:
        key = model_key(store, embedder)
        for code, ids in wanted.items():
            kind = KIND_BY_CODE[code]
            rows = _rows_by_id(store, kind, ids)
            present = {row["id"] for row in rows}
            gone.extend((code, row_id) for row_id in ids if row_id not in present)
            if rows:
                _embed_rows(store, embedder, key, kind, rows)
                embedded += len(rows)
        if gone:
            with store.transaction() as writer:
                writer.clear_due(gone)
    except RecallError as exc:
        log.warning("queued records stay pending for embedding: %s", exc)
    return embedded


def _rows_by_id(store: Store, kind: RecordKind, ids: list[int]) -> list[Any]:
    with store.reading() as conn:
        return conn.execute(_by_id_sql(kind, len(ids)), ids).fetchall()


def _by_id_sql(kind: RecordKind, count: int) -> str:
    """The rows of ``kind`` with ``count`` given ids that get a vector, with their text."""
    marks = ", ".join("?" for _ in range(count))
    if kind is RecordKind.MESSAGE:
        return f"{_message_sql()} AND m.id IN ({marks})"
    return f"{_RECORD_TEXT[kind]} WHERE id IN ({marks})"


def _embed_rows(store: Store, embedder: Embedder, key: int, kind: RecordKind, rows: list[Any]) -> None:
    from recall.search.vectors import quantize

    texts = [row["text"] for row in rows]
    matrix = embedder.embed_documents(texts)
    quantized, scales = quantize(matrix)
    code = KIND_CODES[kind]
    payload = [
        (code, row["id"], row["project"], _text_hash(text), float(scale), vector.tobytes())
        for row, text, scale, vector in zip(rows, texts, scales, quantized, strict=True)
    ]
    with store.transaction() as writer:
        # The text may have changed (or the row gone) while the model ran, outside any lock: store
        # only vectors whose text is still the row's text, so an edit is never masked by a stale vector.
        current = _current_hashes(store, kind, [row["id"] for row in rows])
        writer.store_vectors(key, [item for item in payload if current.get(item[1]) == item[3]])


def _current_hashes(store: Store, kind: RecordKind, ids: list[int]) -> dict[int, str]:
    rows = store.connection.execute(_by_id_sql(kind, len(ids)), ids).fetchall()
    return {row["id"]: _text_hash(row["text"]) for row in rows}


def _text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", errors="surrogatepass"), digest_size=8).hexdigest()


def embedding_stats(store: Store, embedder: Embedder) -> dict[str, Any]:
    """Embedded and pending counts per kind for the current model (the model file is not loaded)."""
    from recall.errors import ModelUnavailable

    try:
        key = model_key(store, embedder)
    except ModelUnavailable as exc:
        return {"model": None, "error": str(exc)}
    return {
        "model": embedder.model_id,
        "model_hash": embedder.model_hash,
        "embedded": count_embedded(store, key),
        "pending": count_pending(store, key),
        "not_embedded": count_not_embedded(store),
    }


def count_not_embedded(store: Store) -> dict[str, int]:
    """Messages that never get a vector, by why: keyword search covers them (see the module docstring)."""
    origins = ", ".join(f"'{o}'" for o in EMBED_ORIGINS)
    sql = f"""SELECT CASE WHEN kind IN ('tool_call', 'tool_result') THEN 'tool calls and their output'
                          WHEN kind = 'thinking' THEN 'model thinking'
                          ELSE 'text the host injected' END AS why, count(*)
              FROM messages WHERE NOT (kind = 'text' AND origin IN ({origins})) GROUP BY why"""
    with store.reading() as conn:
        return dict(conn.execute(sql).fetchall())


def drop_vectors(store: Store) -> int:
    """Forget every stored vector (all models), before a rebuild."""
    with store.transaction() as writer:
        return writer.drop_vectors()


def vector_index(store: Store, embedder: Embedder) -> VectorIndex:
    """The store's in-memory index for this embedder, brought up to date.

    A process starts from the index snapshot beside the database when there is one, then reads
    only the rows added since. With no usable snapshot, or when rows were deleted (a full reload),
    a large index writes a new snapshot straight from SQLite and maps it, never holding its
    vectors (adr/0047); a small one reloads into memory and deletes its snapshot, so a forgotten
    row's vector does not outlive the row. After reading ``SNAPSHOT_MIN_ROWS`` or more new rows it
    writes the snapshot again.
    """
    from recall import heap
    from recall.search.vectors import Refreshed, VectorIndex

    key = model_key(store, embedder)
    cache: dict[int, VectorIndex] = store.cache.setdefault(VECTOR_INDEXES, {})
    index = cache.get(key)
    snapshot = snapshot_path(store, key)
    identity = f"{embedder.model_id} {embedder.model_hash}"
    if index is None:
        index = cache[key] = VectorIndex(key, embedder.dim)
        if snapshot is not None and snapshot.exists() and index.restore(snapshot, identity):
            heap.give_back()  # reading the file's members left ~30 MiB of freed heap at 1M rows
        elif snapshot is not None and _build_snapshot(store, index, snapshot, identity):
            heap.give_back()
    with store.reading() as conn:
        refreshed = index.refresh(conn, reload_in_memory=snapshot is None)
    if snapshot is not None and refreshed.reloaded and not len(index):  # rows went: start as a first start
        built = _build_snapshot(store, index, snapshot, identity)
        if built:
            heap.give_back()
        with store.reading() as conn:
            again = index.refresh(conn)  # what came since the build, or everything if none was built
        refreshed = Refreshed(again.loaded, reloaded=not built)
    if snapshot is not None:
        if len(index) >= SNAPSHOT_MIN_ROWS and (refreshed.loaded >= SNAPSHOT_MIN_ROWS or refreshed.reloaded):
            index.save(snapshot, identity)
            # Reading the rows left their batches' freed heap behind: ~90 MiB at a million (adr/0043).
            heap.give_back()
        elif refreshed.reloaded:
            snapshot.unlink(missing_ok=True)
    return index


def _build_snapshot(store: Store, index: VectorIndex, snapshot: Path, identity: str) -> bool:
    """Start a large index with no usable snapshot by writing one from SQLite and mapping it: its
    vectors never sit in the process's memory (366 MiB at a million rows, adr/0047). A small one
    (under ``SNAPSHOT_MIN_ROWS``) gets no snapshot and loads into memory, as before."""
    with store.reading() as conn:
        count = conn.execute(
            "SELECT count(*) FROM embeddings WHERE model_key = ?", (index.model_key,)
        ).fetchone()[0]
        return bool(count >= SNAPSHOT_MIN_ROWS) and index.build_snapshot(conn, snapshot, identity)


def snapshot_path(store: Store, key: int) -> Path | None:
    return store.vector_snapshot_path(key)


def semantic_candidates(
    store: Store,
    embedder: Embedder,
    query: str,
    *,
    project: str | None,
    table: RecordKind | None,
    depth: int,
    only: set[int] | None = None,
) -> tuple[dict[int, float], Any, VectorIndex]:
    """Search index rowid (``index_rowid``) → cosine for the nearest rows, plus the query vector and index.

    Records written without the model since the last search are embedded first (``embed_due``).
    ``only`` (a tag filter's few records) is scored exactly, row by row, instead of searched for."""
    embed_due(store, embedder)
    index = vector_index(store, embedder)
    vector = embedder.embed_query(query)
    if only is not None:
        exact = index.cosines_for(vector, [split_rowid(rowid) for rowid in only])
        nearest = sorted(exact.items(), key=lambda item: -item[1])[:depth]
        return {index_rowid(code, row_id): cosine for (code, row_id), cosine in nearest}, vector, index
    kinds = [KIND_CODES[table]] if table else None
    found = index.search(vector, k=depth, project=project, kinds=kinds)
    return {index_rowid(code, row_id): cosine for code, row_id, cosine in found}, vector, index
