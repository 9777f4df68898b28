"""Messages written in bulk are indexed by one statement instead of the row trigger (m0017, adr/0046).

A contentless FTS5 index deletes a row only when given the very values it was indexed with, so the
bulk statement must index exactly what the trigger would: the index is read term by term
(``fts5vocab``) and compared, then emptied through the delete trigger.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import recall.store.writer
from adapters import get_adapter
from recall.ingest import run_import
from recall.rowkinds import Provenance
from recall.store import Store
from recall.store.writer import clean_row

SESSION = (
    Path(__file__).parent
    / "fixtures/transcripts/claude-code/real/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
)


def _imported(db: Path) -> Store:
    store = Store(db)
    run_import(store, [get_adapter("claude")], paths=[SESSION], embed_budget_seconds=0, read_ahead=False)
    return store


def _message_terms(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, search_index, instance)"
    )
    return conn.execute(
        "SELECT term, doc, col, offset FROM temp.terms WHERE doc % 8 = 5 ORDER BY term, doc, col, offset"
    ).fetchall()


def _deferred(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM message_index_deferred").fetchone()[0])


def test_bulk_indexing_writes_what_the_row_trigger_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk = _imported(tmp_path / "bulk.db")
    monkeypatch.setattr(recall.store.writer, "BULK_INDEX_ROWS", 10**9)  # every row by the trigger
    by_row = _imported(tmp_path / "by-row.db")
    terms = _message_terms(bulk.connection)
    assert len(terms) > 10_000
    assert terms == _message_terms(by_row.connection)
    assert _deferred(bulk.connection) == 0


def test_the_delete_trigger_takes_bulk_indexed_messages_out_entirely(tmp_path: Path) -> None:
    store = _imported(tmp_path / "recall.db")
    with store.transaction():
        store.connection.execute("DELETE FROM messages")
    assert _message_terms(store.connection) == []


def test_a_bulk_insert_that_fails_partway_indexes_what_it_wrote_and_defers_nothing_after(
    tmp_path: Path,
) -> None:
    store = _imported(tmp_path / "recall.db")
    conn = store.connection
    session, project = conn.execute("SELECT id, project FROM sessions").fetchone()
    values = {"role": "user", "origin": "human", "kind": "text", "content": "", "content_hash": "h"}
    rows = [
        clean_row("messages", {**values, "external_id": f"new-{i}", "content": f"zyzzyva{i}"})
        for i in range(12)
    ]
    rows[9] = clean_row("messages", {**values, "external_id": "new-3", "content": "duplicate key"})
    fills = [{"project": project, "session_id": session, "ordinal": 1000 + i} for i in range(12)]
    with store.transaction() as writer:
        with pytest.raises(sqlite3.IntegrityError):
            writer.insert_clean(rows, Provenance.VERBATIM, fills)
        assert _deferred(conn) == 0
        found = {term for term, *_ in _message_terms(conn) if str(term).startswith("zyzzyva")}
        assert found == {f"zyzzyva{i}" for i in range(9)}  # the nine rows before the failing one
        writer.insert("messages", {**values, "external_id": "after", "content": "quagga", "project": project,
                                   "session_id": session, "ordinal": 2000}, Provenance.VERBATIM)  # fmt: skip
    assert any(term == "quagga" for term, *_ in _message_terms(conn))  # the row trigger indexes again
