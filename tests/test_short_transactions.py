"""An import holds the write lock in short transactions and stays whole when it is cut short.

Other processes (`recall add`, an MCP server's memory_add, a hook's dump) wait while an import holds
SQLite's one write lock, so the import scrubs outside its transactions and writes at most
``ROWS_PER_TRANSACTION`` messages in each. A crash between two transactions must leave nothing that
the next import cannot finish: the source file is stamped only by its last transaction, and a session
that gained messages is queued for its summary by the transaction that gave them (adr/0016).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import recall.store
import recall.store.transcripts as transcripts_module
from adapters import get_adapter
from recall.ingest import run_import
from recall.store import Store
from recall.store.writer import Writer
from recall.summary import build_summary
from recall.summary_queue import summaries_due, summarise_session, write_due_summaries
from recall.transcript import Origin, Role, Transcript, TranscriptMessage

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SPOTTER = FIXTURES / "claude-code" / "real" / "spotter"
SMALL_BATCH = 7


class Killed(Exception):
    """Stands for a kill -9: nothing after it runs, not even an except clause of the importer."""


def _transcript(external_id: str, count: int, *, start: int = 0) -> Transcript:
    when = datetime(2026, 3, 1, tzinfo=UTC)
    messages = tuple(
        TranscriptMessage(
            f"k{n}",
            Role.USER if n % 2 == 0 else Role.ASSISTANT,
            f"turn {n} of {external_id}: we decided to keep the sqlite wal",
            when + timedelta(minutes=n),
            Origin.HUMAN if n % 2 == 0 else Origin.AGENT,
        )
        for n in range(start, start + count)
    )
    return Transcript("claude", external_id, messages, cwd="/nowhere/app", title=f"session {external_id}")


def _state(store: Store) -> dict[str, Any]:
    """What must be equal after a repaired import and a clean one: rows by natural key, summaries,
    keyword index entries and source stamps (ids and write times may differ)."""
    conn = store.connection
    messages = conn.execute(
        "SELECT s.external_id, m.external_id, m.ordinal, m.content_hash, m.content FROM messages m "
        "JOIN sessions s ON s.id = m.session_id ORDER BY 1, 3"
    ).fetchall()
    summaries = conn.execute(
        "SELECT s.external_id, ss.title, ss.content FROM session_summaries ss "
        "JOIN sessions s ON s.id = ss.session_id ORDER BY 1"
    ).fetchall()
    indexed = {row[0] for row in conn.execute("SELECT id FROM search_index_docsize")}
    expected = {
        row[0]
        for row in conn.execute(
            "SELECT id * 8 + 5 FROM messages UNION SELECT id * 8 + 4 FROM session_summaries "
            "UNION SELECT id * 8 + 1 FROM decisions UNION SELECT id * 8 + 2 FROM learnings "
            "UNION SELECT id * 8 + 3 FROM breadcrumbs"  # extracted records are indexed too
        )
    }
    return {
        "sessions": conn.execute(
            "SELECT host, external_id, project, title FROM sessions ORDER BY 2"
        ).fetchall(),
        "messages": [tuple(row) for row in messages],
        "summaries": [tuple(row) for row in summaries],
        "index_complete": indexed == expected,
        "sources": conn.execute(
            "SELECT host, path, size, mtime_ns, sessions FROM source_files ORDER BY 2"
        ).fetchall(),
        "summaries_due": summaries_due(store),
    }


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcripts_module, "ROWS_PER_TRANSACTION", SMALL_BATCH)


@pytest.fixture
def other_store(db_path: Path) -> Iterator[Store]:
    """A second connection to the same file: another process."""
    with Store(db_path) as opened:
        yield opened


def test_no_message_is_scrubbed_while_the_write_lock_is_held(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recall.store.caps as writer_module  # where the write path calls the scrubber

    scrubbed_in_transaction: list[str] = []
    scrubbed: list[str] = []

    def watching(real: Any) -> Any:
        def scrub(text: str) -> Any:
            if text.startswith("turn "):
                (scrubbed_in_transaction if store.connection.in_transaction else scrubbed).append(text)
            return real(text)

        return scrub

    monkeypatch.setattr(writer_module, "scrub", watching(writer_module.scrub))
    monkeypatch.setattr(writer_module, "scrub_short", watching(writer_module.scrub_short))
    outcome = store.import_transcripts([_transcript("s1", 50), _transcript("s2", 30)])
    assert outcome.added == 80
    assert len(scrubbed) == 80 and scrubbed_in_transaction == []


def test_each_transaction_writes_at_most_a_batch_of_messages(
    store: Store, small_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    per_transaction: list[int] = []
    real_begin, real_insert = recall.store.begin_immediate, Writer.insert_clean

    def begin(*args: Any) -> None:
        real_begin(*args)
        per_transaction.append(0)

    def counting(self: Writer, rows: Any, provenance: Any, fills: Any) -> int:
        per_transaction[-1] += len(rows)
        return real_insert(self, rows, provenance, fills)

    monkeypatch.setattr(recall.store, "begin_immediate", begin)
    monkeypatch.setattr(Writer, "insert_clean", counting)
    outcome = store.import_transcripts([_transcript("big", 30), _transcript("small", 3)])
    assert outcome.added == 33
    assert max(per_transaction) <= SMALL_BATCH and sum(per_transaction) == 33
    ordinals = [row[0] for row in store.connection.execute(
        "SELECT ordinal FROM messages m JOIN sessions s ON s.id = m.session_id "
        "WHERE s.external_id = 'big' ORDER BY m.id"
    )]  # fmt: skip
    assert ordinals == list(range(30))


def test_an_import_killed_between_transactions_is_finished_by_the_next(
    store: Store, db_path: Path, tmp_path: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(tmp_path / "clean.db") as clean:
        run_import(clean, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
        wanted = _state(clean)
    real = Writer.insert_clean
    calls = {"n": 0}

    def dying(self: Writer, rows: Any, provenance: Any, fills: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 12:
            raise Killed  # mid-file: some of this file's sessions and messages are committed
        return real(self, rows, provenance, fills)

    monkeypatch.setattr(Writer, "insert_clean", dying)
    with pytest.raises(Killed):
        run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    monkeypatch.setattr(Writer, "insert_clean", real)
    cut = _state(store)
    assert 0 < len(cut["messages"]) < len(wanted["messages"]) and cut["summaries"] == []
    assert len(cut["sources"]) < len(wanted["sources"])  # the file cut short is not stamped
    run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    assert _state(store) == wanted
    assert wanted["index_complete"] and wanted["summaries_due"] == 0


def test_summaries_lost_to_a_kill_are_written_by_the_next_import(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # killed before summaries
    monkeypatch.setattr("recall.ingest.write_due_summaries", lambda store, ahead=None: 0)
    run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    monkeypatch.undo()
    top = store.connection.execute(
        "SELECT count(*) FROM sessions WHERE parent_external_id IS NULL"
    ).fetchone()[0]
    assert (
        summaries_due(store) == top
        and store.connection.execute("SELECT count(*) FROM session_summaries").fetchone()[0] == 0
    )
    again = run_import(store, [get_adapter("claude")], paths=[SPOTTER], embed_budget_seconds=0)
    assert again.files_read == 0 and again.summaries == top
    assert summaries_due(store) == 0
    assert store.connection.execute("SELECT count(*) FROM session_summaries").fetchone()[0] == top


def test_a_summary_built_from_older_messages_leaves_the_session_queued(
    store: Store, other_store: Store
) -> None:
    store.import_transcripts([_transcript("s1", 4)])
    session_id = store.connection.execute("SELECT id FROM sessions").fetchone()[0]
    stale = build_summary("session s1", store.session_messages(session_id))
    generation = store.connection.execute("SELECT generation FROM summaries_due").fetchone()[0]
    other_store.import_transcripts([_transcript("s1", 4, start=4)])  # new messages meanwhile
    store.write_summary(session_id, stale, due_generation=generation)
    assert summaries_due(store) == 1
    assert write_due_summaries(store) == 1 and summaries_due(store) == 0
    summary = store.connection.execute("SELECT content FROM session_summaries").fetchone()[0]
    assert summary != stale.content


def test_rows_another_process_wrote_since_the_plan_are_not_written_twice(
    store: Store, other_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = _transcript("s1", 10)
    real = transcripts_module._batches

    def racing(plans: Any) -> Any:
        monkeypatch.setattr(transcripts_module, "_batches", real)
        other_store.import_transcripts([transcript])  # a hook's dump of the same session, in between
        yield from real(plans)

    monkeypatch.setattr(transcripts_module, "_batches", racing)
    outcome = store.import_transcripts([transcript])
    assert outcome.added == 0 and not outcome.sessions[0].new_session
    assert store.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 10


def test_a_dry_run_counts_without_taking_the_write_lock(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.import_transcripts([_transcript("s1", 5)])

    def no_lock() -> Any:
        raise AssertionError("a dry run took the write lock")

    monkeypatch.setattr(store, "transaction", no_lock)
    outcome = store.import_transcripts([_transcript("s1", 8), _transcript("s2", 2)], dry_run=True)
    assert (outcome.added, outcome.updated) == (5, 0)
    assert [s.new_session for s in outcome.sessions] == [False, True]


def test_the_summary_queue_survives_in_the_file(store: Store, db_path: Path) -> None:
    store.import_transcripts([_transcript("s1", 3)])
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT count(*) FROM summaries_due").fetchone()[0] == 1
    conn.close()
    session_id = store.connection.execute("SELECT id FROM sessions").fetchone()[0]
    assert summarise_session(store, session_id) is not None and summaries_due(store) == 0


def test_summaries_of_many_sessions_share_transactions_and_say_the_same(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """45 queued sessions take three transactions, not 45, and each summary is the one a session
    summarised alone gets (adr/0035)."""
    from recall.summary_queue import SUMMARIES_PER_TRANSACTION

    store.import_transcripts([_transcript(f"s{n}", 4) for n in range(45)])
    store.import_transcripts([Transcript("claude", "empty", (), cwd="/nowhere/app")])
    transactions: list[int] = []
    real_begin = recall.store.begin_immediate

    def begin(*args: Any) -> None:
        real_begin(*args)
        transactions.append(1)

    monkeypatch.setattr(recall.store, "begin_immediate", begin)
    assert write_due_summaries(store) == 45
    assert len(transactions) == -(-45 // SUMMARIES_PER_TRANSACTION) == 3
    assert summaries_due(store) == 0
    conn = store.connection
    for session_id, content in conn.execute("SELECT session_id, content FROM session_summaries").fetchall():
        title = conn.execute("SELECT title FROM sessions WHERE id = ?", (session_id,)).fetchone()[0]
        assert content == build_summary(title, store.session_messages(session_id)).content


def test_sessions_waiting_for_their_parent_are_found_through_an_index(store: Store) -> None:
    """Each import transaction links children to parents that arrived (``_link_parents``): through
    m0015's partial index it visits only sessions still waiting, not every session."""
    plan = " ".join(
        row[3]
        for row in store.connection.execute(
            "EXPLAIN QUERY PLAN UPDATE sessions SET parent_id = (SELECT p.id FROM sessions p "
            "WHERE p.host = sessions.host AND p.external_id = sessions.parent_external_id) "
            "WHERE parent_id IS NULL AND parent_external_id IS NOT NULL"
        )
    )
    assert "USING INDEX sessions_waiting_for_parent" in plan
    child = Transcript("claude", "child", _transcript("c", 2).messages, parent_external_id="parent")
    store.import_transcripts([child, _transcript("other", 2)])
    assert (
        store.connection.execute("SELECT parent_id FROM sessions WHERE external_id = 'child'").fetchone()[0]
        is None
    )
    store.import_transcripts([_transcript("parent", 2)])
    parent = store.connection.execute("SELECT id FROM sessions WHERE external_id = 'parent'").fetchone()[0]
    assert (
        store.connection.execute("SELECT parent_id FROM sessions WHERE external_id = 'child'").fetchone()[0]
        == parent
    )
