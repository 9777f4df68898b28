"""The disk side of forgetting: free space from older files, and FTS5's own secure delete."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from residue import index_leftovers, leftovers, plain_canary

from recall.errors import StoreUnavailable
from recall.memory import Memory
from recall.migrations import migrate
from recall.models import RecordKind
from recall.search.embedder import FakeEmbedder
from recall.store import NewRecord, Store
from recall.store.writer import Writer


def test_a_database_from_before_secure_delete_is_vacuumed_by_its_first_forget(db_path: Path) -> None:
    """What an older recall forgot stayed in free space; the first erase after the upgrade wipes it."""
    canary = plain_canary()
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA secure_delete = OFF")  # the default of most SQLite builds (Debian's has it on)
    migrate(conn, target=5)
    stamp = "'2026-01-01T00:00:00+00:00'"
    for content in (f"because {canary} said so", "use sqlite"):
        conn.execute(
            f"INSERT INTO decisions (project, created_at, updated_at, provenance, content) "
            f"VALUES ('p', {stamp}, {stamp}, 'user_authored', '{content}')"
        )
    conn.execute("DELETE FROM decisions WHERE id = 1")  # the old `recall forget`
    conn.close()
    assert leftovers(db_path.parent, canary)  # still in the file

    with Memory(db_path, embedder=FakeEmbedder()) as memory:
        store = memory.store
        assert store.connection.execute("SELECT count(*) FROM vacuum_pending").fetchone()[0] == 1
        unrelated = store.add(NewRecord(RecordKind.LEARNING, "an unrelated note", "p"))
        report = memory.forget(
            unrelated, "learning"
        )  # another table: the old decision's page stays as it was
        assert leftovers(db_path.parent, canary) == {} and index_leftovers(db_path, canary) == []
        assert report.wiped is not None and report.wiped.vacuumed
        assert store.connection.execute("SELECT count(*) FROM vacuum_pending").fetchone()[0] == 0
        assert memory.forget("decision#2").wiped.vacuumed is False  # once is enough


def test_a_new_database_owes_no_vacuum(memory: Memory, store: Store) -> None:
    assert store.connection.execute("SELECT count(*) FROM vacuum_pending").fetchone()[0] == 0
    memory.forget(store.add(NewRecord(RecordKind.DECISION, "short lived", "p")), "decision")
    assert store.connection.execute("SELECT count(*) FROM vacuum_pending").fetchone()[0] == 0


def test_sqlite_3_43_erases_index_entries_in_place_and_an_older_sqlite_is_told(db_path: Path) -> None:
    """FTS5's secure-delete, run by a newer SQLite than this Python's (pysqlite3-binary bundles one)."""
    newer = pytest.importorskip("pysqlite3.dbapi2")
    canary = plain_canary()
    with Store(db_path) as store:
        store.add(NewRecord(RecordKind.LEARNING, "wal mode helps readers", "p"))
        gone = store.add(NewRecord(RecordKind.LEARNING, f"the {canary} flag", "p"))
    conn = newer.connect(str(db_path), isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN IMMEDIATE")
    assert Writer(conn).erase_index_in_place()  # type: ignore[arg-type]
    conn.execute("DELETE FROM learnings WHERE id = ?", (gone,))
    conn.execute("COMMIT")  # no merge of the index: the words went with the delete
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert index_leftovers(db_path, canary) == [] and leftovers(db_path.parent, canary) == {}
    conn.close()
    if sqlite3.sqlite_version_info < (3, 43):
        with pytest.raises(StoreUnavailable, match="3.43 or newer"):
            Store(db_path)
