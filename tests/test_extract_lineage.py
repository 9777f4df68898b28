"""Extraction's guarantees: idempotence, lineage, review that sticks, supersession, backfill."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import ClaudeSession
from click.testing import CliRunner

from adapters import get_adapter
from adapters.base import ReadOptions
from recall.cli import cli
from recall.errors import InvalidInput
from recall.extract import stage
from recall.ingest import run_import
from recall.memory import Memory
from recall.models import RecordKind
from recall.store import NewRecord, Store
from recall.transcript import ParseReport

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"


def load(store: Store, *paths: Path, force: bool = False) -> Any:
    return run_import(store, [get_adapter("claude")], paths=list(paths), force=force, embed_budget_seconds=0)


def count(store: Store, sql: str, *args: object) -> int:
    return int(store.connection.execute(sql, args).fetchone()[0])


def extracted(store: Store) -> list[tuple[str, str]]:
    rows = store.connection.execute(
        "SELECT 'decision', content FROM decisions WHERE provenance = 'extracted' UNION ALL "
        "SELECT 'learning', content FROM learnings WHERE provenance = 'extracted' UNION ALL "
        "SELECT 'breadcrumb', content FROM breadcrumbs WHERE provenance = 'extracted' ORDER BY 1, 2"
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


def find(store: Store, table: str, text: str) -> int:
    return count(store, f"SELECT id FROM {table} WHERE content LIKE ?", f"%{text}%")


# -- idempotence and lineage -----------------------------------------------------------------------


def test_a_second_import_and_a_forced_one_write_nothing(store: Store) -> None:
    first = load(store, SPOTTER)
    before = extracted(store)
    stamps = store.connection.execute("SELECT updated_at FROM learnings ORDER BY id").fetchall()

    second = load(store, SPOTTER)
    forced = load(store, SPOTTER, force=True)

    assert sum(first.extraction.outcome.added.values()) == len(before) > 0
    assert second.extraction is None and forced.extraction is None  # no session gained a message
    assert extracted(store) == before
    assert store.connection.execute("SELECT updated_at FROM learnings ORDER BY id").fetchall() == stamps


def test_every_extracted_record_keeps_its_rule_version_and_source_messages(store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")
    decision_id = find(store, "decisions", "Which tools should we set up?")

    row = store.require(RecordKind.DECISION, decision_id)

    assert row["provenance"] == "extracted"
    assert row["extraction"]["rule"] == "user_answer" and row["extraction"]["rule_version"] == 1
    assert row["extraction"]["confidence"] == 0.75 and row["confidence"] == "medium"
    [message_id] = row["sources"]
    message = store.require(RecordKind.MESSAGE, message_id)
    assert message["tool_name"] == "AskUserQuestion" and message["session_id"] == row["session_id"]
    assert row["created_at"] == message["timestamp"]  # dated when it was said, not when imported


def test_the_cli_shows_a_record_with_its_sources_and_each_source_message(store: Store, db_path: Path) -> None:
    load(store, SPOTTER / "subagent.jsonl")
    decision_id = find(store, "decisions", "Approved plan")
    runner = CliRunner()

    shown = json.loads(
        runner.invoke(cli, ["--db", str(db_path), "show", "decision", str(decision_id), "--json"]).output
    )
    message = json.loads(
        runner.invoke(
            cli, ["--db", str(db_path), "show", "message", str(shown["sources"][-1]), "--json"]
        ).output
    )

    assert len(shown["sources"]) == 3 and shown["extraction"]["rule"] == "approved_plan"
    assert message["kind"] == "message" and "approved" in message["content"]


def test_user_records_have_no_extraction_lineage(store: Store) -> None:
    row_id = store.add(NewRecord(kind=RecordKind.LEARNING, content="pin the ruff version", project="p"))
    row = store.require(RecordKind.LEARNING, row_id)
    assert row["sources"] == [] and row["extraction"] is None


def test_deleting_a_source_message_or_a_record_leaves_no_dangling_lineage(
    memory: Memory, store: Store
) -> None:
    load(store, SPOTTER / "subagent.jsonl")
    decision_id = find(store, "decisions", "Which rig")

    memory.forget(f"decision#{decision_id}")

    assert (
        count(
            store,
            "SELECT count(*) FROM extraction_lineage WHERE kind_code = 1 AND record_id = ?",
            decision_id,
        )
        == 0
    )
    assert (
        count(store, "SELECT count(*) FROM record_sources WHERE kind_code = 1 AND record_id = ?", decision_id)
        == 0
    )


# -- review ----------------------------------------------------------------------------------------


def test_review_lists_records_with_the_message_lines_they_came_from(memory: Memory, store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")

    items = memory.review(project="spotter")

    assert [item.confidence for item in items] == sorted((item.confidence for item in items), reverse=True)
    plan = next(item for item in items if item.rule == "approved_plan")
    assert plan.ref == f"decision#{plan.id}" and plan.host == "claude"
    assert [source.tool_name for source in plan.sources] == [None, "ExitPlanMode", "ExitPlanMode"]
    assert plan.sources[-1].excerpt == "User has approved exiting plan mode. You can now proceed."


def test_a_rejected_record_is_never_extracted_again(memory: Memory, store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")
    decision_id = find(store, "decisions", "Which rig")

    assert memory.reject([f"decision#{decision_id}"]) == [f"decision#{decision_id}"]
    load(store, SPOTTER / "subagent.jsonl", force=True)
    removed, report = memory.extract(rebuild=True)

    assert removed > 0 and report.outcome.skipped_rejected == 1
    assert not any("Which rig" in content for _, content in extracted(store))


def test_an_accepted_record_survives_a_rebuild_and_enters_the_briefs(memory: Memory, store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")
    learning_id = find(store, "learnings", "No Igniter installers")
    assert store.require(RecordKind.LEARNING, learning_id)["extraction"]["confidence"] < 0.7

    [row] = memory.accept([f"learning#{learning_id}"])
    memory.extract(rebuild=True)

    assert row.data["extraction"]["review"] == "accepted"
    assert store.get(RecordKind.LEARNING, learning_id) is not None
    assert count(store, "SELECT count(*) FROM learnings WHERE content LIKE 'No Igniter installers%'") == 1
    assert f"learning#{learning_id}" not in [item.ref for item in memory.review(project="spotter")]
    assert learning_id in [item.id for item in memory.catch_up("spotter", limit=50).learnings]


def test_only_extracted_records_are_reviewed(memory: Memory, store: Store) -> None:
    row_id = store.add(NewRecord(kind=RecordKind.DECISION, content="tabs, not spaces", project="p"))
    with pytest.raises(InvalidInput, match="not extracted"):
        memory.reject([f"decision#{row_id}"])
    with pytest.raises(InvalidInput, match="kind#id"):
        memory.accept(["twelve"])


def test_review_from_the_command_line(store: Store, db_path: Path) -> None:
    load(store, SPOTTER / "short.jsonl")
    runner = CliRunner()
    base = ["--db", str(db_path), "review"]

    listed = json.loads(runner.invoke(cli, [*base, "--all-projects", "--json"]).output)
    ref = listed["records"][0]["ref"]
    rejected = runner.invoke(cli, [*base, "reject", ref])
    again = json.loads(runner.invoke(cli, [*base, "--all-projects", "--json"]).output)

    assert listed["records"][0]["sources"][0]["excerpt"] == "mix phx.server doesnt seem to start"
    assert rejected.exit_code == 0 and rejected.output.strip() == f"rejected {ref}"
    assert again["records"] == []


# -- near-duplicates, user records, supersession ----------------------------------------------------


def test_a_near_duplicate_of_a_user_record_only_adds_sources_to_it(store: Store, tmp_path: Path) -> None:
    user_id = store.add(
        NewRecord(
            kind=RecordKind.DECISION, content="Never use mocks for the database in tests", project="shop"
        )
    )
    before = store.require(RecordKind.DECISION, user_id)
    session = ClaudeSession(tmp_path).user("never use mocks for the database in tests!")
    session.assistant("Understood.")

    load(store, session.write())

    after = store.require(RecordKind.DECISION, user_id)
    assert count(store, "SELECT count(*) FROM decisions") == 1
    assert {k: v for k, v in after.items() if k != "sources"} == {
        k: v for k, v in before.items() if k != "sources"
    }
    assert len(after["sources"]) == 1


def test_a_near_duplicate_of_an_extracted_record_refreshes_it(store: Store, tmp_path: Path) -> None:
    start = datetime.now(UTC) - timedelta(days=2)
    first = ClaudeSession(tmp_path, start=start).user("Always run make check before pushing.")
    first.assistant("OK.")
    second = ClaudeSession(tmp_path, start=start + timedelta(days=1)).user(
        "always run `make check` before pushing"
    )
    second.assistant("Will do.")
    load(store, first.write())
    [(row_id, stamp)] = store.connection.execute("SELECT id, updated_at FROM decisions").fetchall()

    load(store, second.write())

    refreshed = store.require(RecordKind.DECISION, row_id)
    assert count(store, "SELECT count(*) FROM decisions") == 1
    assert len(refreshed["sources"]) == 2 and refreshed["updated_at"] > stamp.replace("+00:00", "Z")


def test_each_switch_supersedes_the_decision_it_names(store: Store, tmp_path: Path) -> None:
    start = datetime.now(UTC) - timedelta(days=3)
    sayings = [
        "Let's use Postgres for the job queue.",
        "Switch from Postgres to Redis for the job queue.",
        "Switch from Redis to SQLite for the job queue.",
    ]
    for day, text in enumerate(sayings):
        session = ClaudeSession(tmp_path, start=start + timedelta(days=day)).user(text)
        session.assistant("OK.")
        load(store, session.write())

    rows = store.connection.execute(
        "SELECT id, content, status, superseded_by FROM decisions ORDER BY id"
    ).fetchall()

    assert [(r["content"], r["status"]) for r in rows] == [
        (sayings[0], "superseded"),
        (sayings[1], "superseded"),
        (sayings[2], "active"),
    ]
    assert [r["superseded_by"] for r in rows] == [rows[1]["id"], rows[2]["id"], None]


def test_a_switch_away_from_a_users_own_decision_is_flagged_not_applied(store: Store, tmp_path: Path) -> None:
    user_id = store.add(
        NewRecord(kind=RecordKind.DECISION, content="Use Postgres for the job queue", project="shop")
    )
    session = ClaudeSession(tmp_path).user("Switch from Postgres to Redis for the job queue.")
    session.assistant("OK.")

    load(store, session.write())

    assert store.require(RecordKind.DECISION, user_id)["status"] == "active"
    new_id = find(store, "decisions", "Switch from Postgres")
    assert store.require(RecordKind.DECISION, new_id)["extraction"]["conflicts_with"] == [user_id]


def test_rejecting_a_superseding_decision_restores_the_one_it_replaced(
    memory: Memory, store: Store, tmp_path: Path
) -> None:
    start = datetime.now(UTC) - timedelta(days=2)
    for day, text in enumerate(
        ["Let's use Postgres for the job queue.", "Switch from Postgres to Redis for the job queue."]
    ):
        session = ClaudeSession(tmp_path, start=start + timedelta(days=day)).user(text)
        session.assistant("OK.")
        load(store, session.write())
    old, new = (find(store, "decisions", "Let's use Postgres"), find(store, "decisions", "Switch from"))

    memory.reject([f"decision#{new}"])

    assert store.require(RecordKind.DECISION, old)["status"] == "active"


# -- backfill and failure isolation -----------------------------------------------------------------


def test_backfill_extracts_sessions_stored_before_extraction_and_resumes(
    memory: Memory, store: Store
) -> None:
    adapter = get_adapter("claude")
    transcripts = [
        t
        for path in sorted(SPOTTER.glob("*.jsonl"))
        for t in adapter.read(path, ReadOptions(), ParseReport())
    ]
    store.import_transcripts(transcripts)  # what an older recall stored: messages, no extraction
    calls: list[tuple[int, int]] = []

    _, report = memory.extract(progress=lambda done, total: calls.append((done, total)))
    _, again = memory.extract()

    assert report.sessions == len(transcripts) and sum(report.outcome.added.values()) > 0
    assert calls[0] == (0, len(transcripts)) and calls[-1] == (len(transcripts), len(transcripts))
    assert again.sessions == 0
    assert count(store, "SELECT count(*) FROM extraction_progress") == len(transcripts)


def test_the_extract_command_reports_what_it_did(store: Store, db_path: Path) -> None:
    adapter = get_adapter("claude")
    store.import_transcripts(adapter.read(SPOTTER / "short.jsonl", ReadOptions(), ParseReport()))

    result = CliRunner().invoke(cli, ["--db", str(db_path), "extract", "--json"])

    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] == {"breadcrumb": 1}


def test_a_failing_rule_is_reported_and_the_import_keeps_its_messages(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(view: Any) -> list[Any]:
        raise RuntimeError("rule bug")

    monkeypatch.setattr(stage, "RULES", (broken,))

    summary = load(store, SPOTTER / "short.jsonl")

    assert summary.messages_added > 0 and summary.files_failed == 0
    (session_id,) = store.connection.execute("SELECT id FROM sessions").fetchone()
    assert summary.extraction.errors == [f"session {session_id}: RuntimeError: rule bug"]
    assert count(store, "SELECT count(*) FROM extraction_progress") == 0  # tried again next time


class _NoModel:
    """An embedder that fails the test as soon as anything touches it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"extraction touched the embedding model ({name})")


def test_extraction_loads_no_model_when_the_import_embeds_nothing(db_path: Path) -> None:
    with Store(db_path) as store:
        summary = load(store, SPOTTER / "subagent.jsonl")
    assert summary.extraction.errors == [] and sum(summary.extraction.outcome.added.values()) > 0


def test_a_dump_extracts_too(store: Store) -> None:
    from recall.dump import dump_session

    messages = [
        {"role": "user", "content": "From now on, run the formatter before every commit."},
        {"role": "assistant", "content": "Will do."},
    ]
    dump_session(store, title="formatting", source="mcp", project="p", messages=messages, cwd="/x/p")

    assert extracted(store) == [("decision", "From now on, run the formatter before every commit.")]


def test_one_session_saying_the_same_thing_twice_gives_one_record(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Always run make check before pushing to main.")
    session.assistant("OK.")
    session.user("Always run `make check` before you push!")
    session.assistant("Will do.")

    load(store, session.write())

    assert len(extracted(store)) == 1
