"""Counts per kind and project, and facts about the file: what `recall stats` and memory_stats show."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from recall.connections import entity_counts
from recall.migrations import latest_version
from recall.rowkinds import TABLE_NAMES, RecordKind
from recall.store.writer import to_db_time, utc_now


def collect_stats(conn: sqlite3.Connection, path: Path) -> dict[str, Any]:
    per_kind: dict[str, int] = {}
    per_project: dict[str, dict[str, int]] = {}
    tables = {"session": "sessions", **{kind.value: table for kind, table in TABLE_NAMES.items()}}
    for kind, table in tables.items():
        total = 0
        for project, count in conn.execute(f"SELECT project, count(*) FROM {table} GROUP BY project"):
            per_project.setdefault(project, {})[kind] = count
            total += count
        per_kind[kind] = total
    now = to_db_time(utc_now())
    expired = conn.execute(
        "SELECT count(*) FROM breadcrumbs WHERE valid_until IS NOT NULL AND valid_until <= ?", (now,)
    ).fetchone()[0]
    decisions = dict(conn.execute("SELECT status, count(*) FROM decisions GROUP BY status").fetchall())
    indexed = conn.execute("SELECT count(*) FROM search_index").fetchone()[0]
    unconnected = conn.execute(
        "SELECT count(*) FROM sessions WHERE id NOT IN (SELECT session_id FROM entity_scans)"
    ).fetchone()[0]
    searchable = sum(per_kind[kind.value] for kind in TABLE_NAMES)
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    return {
        "database": str(path),
        "size_bytes": size,
        "schema_version": conn.execute("PRAGMA user_version").fetchone()[0],
        "schema_latest": latest_version(),
        "counts": per_kind,
        "projects": dict(sorted(per_project.items())),
        "decisions_by_status": decisions,
        "breadcrumbs_expired": expired,
        # What sessions and records touched (recall.connections); a session not yet connected waits
        # for the next import.
        "entities": entity_counts(conn),
        "sessions_unconnected": unconnected,
        "kinds": [kind.value for kind in RecordKind],
        # Every searchable row should be in the FTS index; a gap means a write bypassed the triggers.
        "keyword_index": {"rows": searchable, "indexed": indexed, "complete": searchable == indexed},
    }
