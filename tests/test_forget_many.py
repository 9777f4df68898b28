"""Bulk deletes are guarded: an age of at least a day, every tag, one project unless '*', and a count
confirmed by the caller before anything goes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from residue import index_leftovers, leftovers, plain_canary

from recall.cli import cli
from recall.errors import InvalidInput
from recall.memory import Memory
from recall.models import RecordKind
from recall.store import NewRecord, Store


def count(store: Store, table: str) -> int:
    return store.connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def age(store: Store, table: str, row_id: int, days: int) -> None:
    when = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="microseconds")
    with store.transaction():
        store.connection.execute(f"UPDATE {table} SET created_at = ? WHERE id = ?", (when, row_id))


@pytest.mark.parametrize("days", [0, 0.5, -1])
def test_an_age_under_one_day_is_refused_and_deletes_nothing(
    memory: Memory, store: Store, days: float
) -> None:
    store.add(NewRecord(RecordKind.DECISION, "keep", "p"))
    store.add(NewRecord(RecordKind.LEARNING, "keep too", "q"))
    with pytest.raises(InvalidInput, match="at least 1"):
        memory.forget_many(project="*", older_than_days=days, confirm=2)
    assert count(store, "decisions") + count(store, "learnings") == 2


def test_without_the_matching_count_nothing_is_deleted_and_a_sample_says_what(
    memory: Memory, store: Store
) -> None:
    for n in range(7):
        store.add(NewRecord(RecordKind.LEARNING, f"scratch note {n}", "p", tags=("scratch",)))

    counted = memory.forget_many(project="p", tags=["scratch"])
    assert (counted.matched, counted.confirmed, counted.total) == (7, False, 0)
    assert len(counted.sample) == 5 and counted.sample[0].preview == "scratch note 0"
    assert "confirm 7" in counted.message
    stale = memory.forget_many(project="p", tags=["scratch"], confirm=6)
    assert not stale.confirmed and count(store, "learnings") == 7

    done = memory.forget_many(project="p", tags=["scratch"], confirm=7)
    assert done.confirmed and done.deleted == {"decision": 0, "learning": 7, "breadcrumb": 0}
    assert count(store, "learnings") == 0


def test_every_tag_must_match(memory: Memory, store: Store) -> None:
    both = store.add(NewRecord(RecordKind.DECISION, "both", "p", tags=("ci", "flaky")))
    store.add(NewRecord(RecordKind.DECISION, "only ci", "p", tags=("ci",)))
    store.add(NewRecord(RecordKind.DECISION, "only flaky", "p", tags=("flaky",)))
    counted = memory.forget_many(project="p", tags=["CI", "flaky"])
    assert counted.matched == 1 and [m.id for m in counted.sample] == [both]


def test_other_projects_are_touched_only_with_star(memory: Memory, store: Store) -> None:
    mine = store.add(NewRecord(RecordKind.BREADCRUMB, "old crumb", "p"))
    theirs = store.add(NewRecord(RecordKind.BREADCRUMB, "old crumb elsewhere", "q"))
    for row_id in (mine, theirs):
        age(store, "breadcrumbs", row_id, days=40)
    assert memory.forget_many(project="p", older_than_days=30).matched == 1
    assert memory.forget_many(project="*", older_than_days=30).matched == 2
    assert memory.forget_many(project="*", older_than_days=30, confirm=2).total == 2
    with pytest.raises(InvalidInput, match="refusing"):
        memory.forget_many(project="*")


def test_confirmed_bulk_forget_leaves_no_text_on_disk(memory: Memory, store: Store, db_path: Path) -> None:
    canary = plain_canary()
    store.add(NewRecord(RecordKind.LEARNING, f"temporary {canary}", "p", tags=("tmp",)))
    store.add(NewRecord(RecordKind.LEARNING, "stays", "p"))
    memory.forget_many(project="p", tags=["tmp"], confirm=1)
    assert leftovers(db_path.parent, canary) == {} and index_leftovers(db_path, canary) == []


def test_the_command_counts_first_and_deletes_on_confirm(db_path: Path) -> None:
    def run(*args: str):
        return CliRunner().invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    with Store(db_path) as store:
        for project in ("p", "q"):
            store.add(NewRecord(RecordKind.LEARNING, f"scratch in {project}", project, tags=("scratch",)))

    counted = run("forget", "--tag", "scratch", "--project", "p")
    assert counted.exit_code == 0 and "1 records match" in counted.output and "confirm 1" in counted.output
    everywhere = json.loads(run("forget", "--tag", "scratch", "--all-projects", "--json").output)
    assert everywhere["matched"] == 2 and everywhere["total"] == 0
    done = json.loads(run("forget", "--tag", "scratch", "--all-projects", "--confirm", "2", "--json").output)
    assert done["confirmed"] is True and done["total"] == 2
    refused = run("forget", "--older-than", "0", "--all-projects")
    assert refused.exit_code == 2 and "--older-than" in refused.output
    both = run("forget", "decision", "1", "--tag", "x")
    assert both.exit_code == 2
