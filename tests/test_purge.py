"""`recall purge`: a project, an age or the expired breadcrumbs, deleted for good and then vacuumed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from residue import index_leftovers, leftovers, plain_canary

from recall.cli import cli
from recall.errors import InvalidInput
from recall.models import RecordKind
from recall.search import semantic
from recall.search.embedder import FakeEmbedder
from recall.store import NewRecord, Store
from recall.store.purge import purge
from recall.transcript import Origin, Role, Transcript, TranscriptMessage

NOW = datetime.now(UTC)


def session(external_id: str, text: str, *, days_ago: int = 0) -> Transcript:
    when = NOW - timedelta(days=days_ago)
    messages = tuple(
        TranscriptMessage(f"{external_id}-{n}", role, f"{text} turn {n}", when, origin)
        for n, (role, origin) in enumerate([(Role.USER, Origin.HUMAN), (Role.ASSISTANT, Origin.AGENT)] * 3)
    )
    return Transcript("test", external_id, messages, started_at=when, ended_at=when)


def counts(store: Store) -> dict[str, int]:
    tables = (
        "sessions",
        "messages",
        "session_summaries",
        "decisions",
        "learnings",
        "breadcrumbs",
        "embeddings",
    )
    return {t: store.connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


@pytest.fixture
def two_projects(store: Store) -> tuple[Store, str]:
    """Projects p (whose text holds a canary) and q, each with a session, a summary, records, vectors
    and a profile."""
    from recall.store.profiles import set_value
    from recall.summary_queue import write_due_summaries

    canary = plain_canary()
    for project, text in (("p", f"deploy {canary} today"), ("q", "deploy the other service")):
        store.import_transcripts([session(f"s-{project}", text)], project=project)
        write_due_summaries(store)
        store.add(NewRecord(RecordKind.DECISION, f"{text} decided", project))
        store.add(NewRecord(RecordKind.BREADCRUMB, f"{text} halfway", project))
        set_value(store, project, "notes", f"{text} from the profile")
    semantic.embed_pending(store, FakeEmbedder())
    return store, canary


def test_a_dry_run_counts_exactly_what_the_purge_deletes(two_projects: tuple[Store, str]) -> None:
    store, _ = two_projects
    before = counts(store)
    dry = purge(store, project="p", dry_run=True)
    assert counts(store) == before
    real = purge(store, project="p")
    assert dry.counts == real.counts
    assert real.counts == {
        "session": 1, "message": 6, "session_summary": 1, "vector": 9, "extracted record": 0, "decision": 1,
        "learning": 0, "breadcrumb": 1, "profile": 1, "note": 0,
    }  # fmt: skip


def test_purging_a_project_leaves_the_others_and_no_text_on_disk(
    two_projects: tuple[Store, str], db_path: Path
) -> None:
    store, canary = two_projects
    assert leftovers(db_path.parent, canary)
    report = purge(store, project="p")
    assert report.wiped is not None and report.wiped.vacuumed
    assert leftovers(db_path.parent, canary) == {} and index_leftovers(db_path, canary) == []
    assert counts(store) == {
        "sessions": 1, "messages": 6, "session_summaries": 1, "decisions": 1, "learnings": 0, "breadcrumbs": 1,
        "embeddings": 9,
    }  # fmt: skip
    again = store.import_transcripts([session("s-p", f"deploy {canary} today")], project="p")
    assert again.sessions == [] and again.forgotten == {"forgotten_session": 1}


def test_older_than_goes_by_a_session_s_last_activity(store: Store) -> None:
    store.import_transcripts(
        [session("old", "long ago", days_ago=40), session("new", "this week")], project="p"
    )
    old_note = store.add(NewRecord(RecordKind.LEARNING, "old learning", "p"))
    with store.transaction():
        old = (NOW - timedelta(days=40)).isoformat()
        store.connection.execute("UPDATE learnings SET created_at = ? WHERE id = ?", (old, old_note))
    report = purge(store, older_than_days=30)
    assert (report.counts["session"], report.counts["message"], report.counts["learning"]) == (1, 6, 1)
    assert [r[0] for r in store.connection.execute("SELECT external_id FROM sessions")] == ["new"]


def test_expired_takes_only_records_whose_time_has_passed(store: Store) -> None:
    gone = store.add(NewRecord(RecordKind.BREADCRUMB, "expired", "p", valid_until=NOW - timedelta(hours=1)))
    live = store.add(NewRecord(RecordKind.BREADCRUMB, "still live", "p", valid_until=NOW + timedelta(days=1)))
    store.add(NewRecord(RecordKind.BREADCRUMB, "never expires", "p"))
    store.add(NewRecord(RecordKind.DECISION, "a decision stays", "p"))
    old = store.add(
        NewRecord(RecordKind.DECISION, "a freeze that ended", "p", valid_until=NOW - timedelta(days=2))
    )
    store.add(
        NewRecord(
            RecordKind.LEARNING, "a workaround for a fixed bug", "p", valid_until=NOW - timedelta(days=1)
        )
    )
    store.import_transcripts([session("s", "a session stays")], project="p")
    report = purge(store, expired=True)
    assert report.counts["breadcrumb"] == 1 and report.counts["session"] == 0
    assert report.counts["decision"] == 1 and report.counts["learning"] == 1
    assert store.get(RecordKind.BREADCRUMB, gone) is None and store.get(RecordKind.BREADCRUMB, live)
    assert store.get(RecordKind.DECISION, old) is None
    assert counts(store)["decisions"] == 1 and counts(store)["sessions"] == 1
    assert counts(store)["learnings"] == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "purge what"),
        ({"project": "*"}, "purge what"),  # every project is not a scope on its own
        ({"older_than_days": 0}, "at least 1"),
        ({"older_than_days": 0.5}, "at least 1"),
    ],
)
def test_a_purge_needs_a_scope_and_a_real_age(store: Store, arguments: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        purge(store, **arguments)


def test_the_command_prints_counts_and_json(db_path: Path) -> None:
    with Store(db_path) as store:
        store.add(NewRecord(RecordKind.BREADCRUMB, "expired", "p", valid_until=NOW - timedelta(hours=1)))

    def run(*args: str):
        return CliRunner().invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    dry = run("purge", "--expired", "--dry-run")
    assert dry.exit_code == 0 and "would purge breadcrumb 1" in dry.output
    done = json.loads(run("purge", "--expired", "--json").output)
    assert done["counts"]["breadcrumb"] == 1 and done["dry_run"] is False
    assert run("purge").exit_code == 1
