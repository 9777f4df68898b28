"""A small source commits once: its messages, what extraction found in them and its stamp (adr/0046).

Each case imports a real Claude Code session of 43 messages (three decisions and a learning are
extracted from it) into a real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters import get_adapter
from recall.ingest import ImportSummary, run_import
from recall.store import Store

SESSION = Path(__file__).parent / "fixtures/transcripts/claude-code/real/spotter/subagent.jsonl"
RECORDS = ("decisions", "learnings", "breadcrumbs")


def _import(store: Store) -> ImportSummary:
    return run_import(
        store, [get_adapter("claude")], paths=[SESSION], embed_budget_seconds=0, read_ahead=False
    )


def _counts(store: Store) -> dict[str, int]:
    conn = store.connection
    return {
        t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("messages", "source_files", *RECORDS)
    }


def test_the_session_its_records_and_its_stamp_are_one_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "recall.db")
    statements: list[str] = []
    store.connection.set_trace_callback(statements.append)
    summary = _import(store)
    store.connection.set_trace_callback(None)
    assert summary.messages_added == 43
    # Nothing of the file is committed before the statement that stamps it (the summary and the
    # connections of the whole import come after, in transactions of their own).
    stamp = next(i for i, statement in enumerate(statements) if "INTO source_files" in statement)
    assert "BEGIN IMMEDIATE" in statements[:stamp] and "COMMIT" not in statements[:stamp]
    counts = _counts(store)
    assert counts["messages"] == 43 and counts["source_files"] == 1
    assert counts["decisions"] == 3 and counts["learnings"] == 1


def test_a_stamp_that_fails_leaves_nothing_of_the_file_and_the_next_import_stores_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "recall.db")

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("disk said no")

    with monkeypatch.context() as patch:
        patch.setattr(Store, "stamp_source", refuse)
        failed = _import(store)
    assert failed.files_failed == 1
    # The messages were not committed without their stamp: nothing of the file is stored.
    assert set(_counts(store).values()) == {0}
    again = _import(store)
    assert again.messages_added == 43
    assert _counts(store)["decisions"] == 3 and _counts(store)["source_files"] == 1


def test_extraction_that_fails_undoes_only_its_own_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "recall.db")
    real = Store.write_extraction

    def half_then_fail(self: Store, batch: object) -> object:
        real(self, batch)  # written inside its savepoint, then undone with it
        raise ValueError("a rule's bug")

    def failing(self: Store, batch: object) -> object:
        with self.transaction():
            return half_then_fail(self, batch)

    monkeypatch.setattr(Store, "write_extraction", failing)
    summary = _import(store)
    assert summary.extraction is not None and summary.extraction.errors
    counts = _counts(store)
    assert counts["messages"] == 43 and counts["source_files"] == 1  # the import itself committed
    assert counts["decisions"] == counts["learnings"] == 0


CLAUDE = Path(__file__).parent / "fixtures/transcripts/claude-code"


def test_small_files_share_commits_and_one_that_fails_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import's small files commit a few together (``commit_group``); a file whose write fails
    rolls back alone, and is read again by the next import."""
    alone = Store(tmp_path / "alone.db")
    expected = run_import(
        alone, [get_adapter("claude")], paths=[CLAUDE], embed_budget_seconds=0, read_ahead=False
    )
    files = expected.files_seen
    store = Store(tmp_path / "recall.db")
    real = Store.stamp_source

    def refuse_one(self: Store, source: object, **counts: int) -> None:
        if str(getattr(source, "path", "")).endswith("short.jsonl"):
            raise ValueError("disk said no")
        real(self, source, **counts)  # type: ignore[arg-type]

    statements: list[str] = []
    store.connection.set_trace_callback(statements.append)
    with monkeypatch.context() as patch:
        patch.setattr(Store, "stamp_source", refuse_one)
        first = run_import(
            store, [get_adapter("claude")], paths=[CLAUDE], embed_budget_seconds=0, read_ahead=False
        )
    store.connection.set_trace_callback(None)
    stamping = [i for i, statement in enumerate(statements) if "INTO source_files" in statement]
    commits = [i for i, statement in enumerate(statements) if statement == "COMMIT"]
    # Fewer commits than files up to the last stamp: files shared them.
    assert len(stamping) == files - 1 and len([c for c in commits if c < stamping[-1]]) < files - 1
    assert first.files_failed == 1 and first.messages_added == expected.messages_added - 9
    again = run_import(
        store, [get_adapter("claude")], paths=[CLAUDE], embed_budget_seconds=0, read_ahead=False
    )
    assert (again.files_unchanged, again.messages_added) == (files - 1, 9)
    assert _counts(store) == _counts(alone)
