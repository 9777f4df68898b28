"""The schema: created and upgraded by numbered migrations, in step with the SQLModel classes."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from recall.db import connect
from recall.errors import StoreUnavailable
from recall.migrations import latest_version, load_migrations, migrate, split_statements
from recall.models import TABLE_NAMES, TABLES, RecordKind, Session
from recall.results import Hit
from recall.search.keyword import keyword_search
from recall.store import NewRecord, Store


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


def test_numbered_steps_have_no_gaps() -> None:
    steps = load_migrations()
    assert [s.version for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0].name == "m0001_initial"


def test_an_empty_file_is_brought_to_the_latest_version(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    sqlite3.connect(db_path).close()
    with Store(db_path) as store:
        version = store.connection.execute("PRAGMA user_version").fetchone()[0]
    assert version == latest_version()


def test_an_older_database_is_upgraded_and_keeps_its_rows(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, target=1)
    conn.execute(
        "INSERT INTO decisions (project, created_at, updated_at, provenance, content) "
        "VALUES ('p', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00', 'user_authored', 'keep me')"
    )
    conn.close()
    with Store(db_path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == latest_version()
        assert [h.content for h in keyword(store, "keep", project="p")] == ["keep me"]


def test_a_newer_database_is_refused_with_advice(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {latest_version() + 5}")
    conn.close()
    with pytest.raises(StoreUnavailable, match="upgrade recall"):
        Store(db_path)


def test_a_file_that_is_not_a_database_is_reported(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreUnavailable, match="not a readable recall database"):
        Store(db_path)


def test_store_file_is_private_and_in_wal_mode(db_path: Path) -> None:
    with Store(db_path) as store:
        mode = store.connection.execute("PRAGMA journal_mode").fetchone()[0]
        timeout = store.connection.execute("PRAGMA busy_timeout").fetchone()[0]
    assert mode == "wal"
    assert timeout >= 5000
    if os.name == "posix":
        assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


def test_models_match_the_migrated_schema(db_path: Path) -> None:
    conn = connect(db_path)
    for table_name, model in [("sessions", Session), *((TABLE_NAMES[k], m) for k, m in TABLES.items())]:
        db_columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table_name})")}
        assert db_columns == set(model.model_fields), table_name
    conn.close()


def test_trigger_bodies_stay_whole_when_split() -> None:
    sql = "CREATE TABLE a (x);\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n"
    assert len(split_statements(sql)) == 2


def test_a_locked_database_is_reported_not_crashed(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import recall.db

    monkeypatch.setattr(recall.db, "BUSY_TIMEOUT_MS", 200)
    with Store(db_path) as store:
        blocker = sqlite3.connect(db_path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process is writing and does not let go
        try:
            with pytest.raises(StoreUnavailable, match="locked by another process"):
                store.add(NewRecord(RecordKind.DECISION, "x", "p"))
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert store.add(NewRecord(RecordKind.DECISION, "x", "p")) == 1
