"""State derived from the database: per-process caches and the files beside it.

The vector index lives in memory (``Store.cache``) and, when large, in a snapshot beside the
database (adr/0012). Both are copies of what the tables hold, so they can always be rebuilt; after
an erase they must go at once (adr/0014), which is why the store, not the search layer, names them.
"""

from __future__ import annotations

import glob
from pathlib import Path

VECTOR_INDEXES = "vector_indexes"  # Store.cache key: model key -> in-memory vector index


def vector_snapshot_path(database: Path, key: int) -> Path | None:
    """``<database>.vectors-<model key>.npz`` beside a database file; None for an in-memory store."""
    if str(database) == ":memory:":
        return None
    return database.with_name(f"{database.name}.vectors-{key}.npz")


def remove_vector_snapshots(database: Path) -> int:
    """Delete every vector snapshot of ``database``, and any being written (``.part``); how many went."""
    if str(database) == ":memory:":
        return 0
    name = glob.escape(database.name)
    for partial in database.parent.glob(f"{name}.vectors-*.npz.*.part"):
        partial.unlink(missing_ok=True)
    snapshots = list(database.parent.glob(f"{name}.vectors-*.npz"))
    for snapshot in snapshots:
        snapshot.unlink(missing_ok=True)
    return len(snapshots)
