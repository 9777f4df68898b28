"""Embedding deferred to the next meaning search (m0010's ``vectors_due``) and the import's budget (adr/0029)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.memory import Memory
from recall.search import semantic
from recall.search.embedder import FakeEmbedder

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
DISTRACTORS = [
    "Fixed the alignment of the login button on the settings page",
    "The user prefers tabs in Python files",
    "CI now caches downloaded packages between runs",
]
TARGET = "The database migration failed because the disk was full"
PARAPHRASE = "Storage ran out of space during a schema upgrade"


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    return invoke


def queued(db_path: Path) -> list[tuple[int, int]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT kind_code, row_id FROM vectors_due ORDER BY seq").fetchall()


def vectors(db_path: Path) -> int:
    with sqlite3.connect(db_path) as conn:
        return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_record_added_by_recall_add_is_found_by_meaning_by_the_next_search(
    run, db_path: Path, minilm, mode: str
) -> None:
    for text in DISTRACTORS:
        assert run("add", "learning", text, "--project", "p").exit_code == 0
    assert run("add", "learning", TARGET, "--project", "p").output.strip() == "learning#4"
    assert vectors(db_path) == 0 and len(queued(db_path)) == 4  # `recall add` loaded no model

    found = json.loads(run("search", PARAPHRASE, "--mode", mode, "--project", "p", "--json").output)

    assert found["results"][0]["ref"] == "learning#4"
    assert queued(db_path) == [] and vectors(db_path) == 4


@pytest.mark.slow
def test_an_edited_record_is_queued_again_and_found_by_its_new_meaning(db_path: Path, minilm, run) -> None:
    with Memory(db_path, embedder=minilm) as memory:
        first = memory.add("learning", DISTRACTORS[0], project="p")
        memory.add("learning", DISTRACTORS[1], project="p")
    assert queued(db_path) == []  # embedded on write: nothing waits
    with Memory(db_path, embed_on_write=False) as memory:  # as the CLI and hooks write
        memory.update(first.ref, content=TARGET)
    assert queued(db_path) == [(2, first.id)]
    hits = json.loads(run("search", PARAPHRASE, "--mode", "semantic", "--project", "p", "--json").output)
    assert hits["results"][0]["ref"] == str(first.ref)


def test_a_forgotten_record_leaves_the_queue(db_path: Path) -> None:
    with Memory(db_path, embedder=FakeEmbedder(), embed_on_write=False) as memory:
        kept = memory.add("decision", "Use WAL", project="p")
        gone = memory.add("learning", "hyphens are column filters", project="p")
        memory.forget(gone.ref)
    assert queued(db_path) == [(1, kept.id)]


def test_a_search_embeds_the_newest_queued_records_first_a_batch_at_a_time(db_path: Path) -> None:
    with Memory(db_path, embedder=FakeEmbedder(), embed_on_write=False) as memory:
        ids = [memory.add("learning", f"fact number {n}", project="p").id for n in range(5)]
        assert semantic.embed_due(memory.store, memory.embedder, limit=2) == 2
        assert queued(db_path) == [(2, row_id) for row_id in ids[:3]]
        memory.search("fact", mode="semantic", project="p")
    assert queued(db_path) == [] and vectors(db_path) == 5


def test_a_queued_row_that_vanished_is_dropped_without_a_vector(db_path: Path) -> None:
    with Memory(db_path, embedder=FakeEmbedder(), embed_on_write=False) as memory:
        memory.add("decision", "Use WAL", project="p")
        with sqlite3.connect(db_path) as conn:  # a row the queue names that is not there, as after a bug
            conn.execute("INSERT INTO vectors_due (kind_code, row_id) VALUES (2, 99)")
        assert semantic.embed_due(memory.store, memory.embedder) == 1
    assert queued(db_path) == [] and vectors(db_path) == 1


def test_import_embed_budget_zero_embeds_nothing_and_the_next_import_does(run, db_path: Path) -> None:
    data = json.loads(run("import", "--path", str(SPOTTER), "--embed-budget", "0", "--json").output)
    assert data["messages"]["added"] > 0
    assert not data.get("embedding") and vectors(db_path) == 0
    assert queued(db_path)  # the session summaries wait for the next meaning search


def test_the_embed_budget_comes_from_config_and_the_flag_wins(
    run, db_path: Path, isolated_home: Path, tmp_path: Path
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text("[import]\nembed_budget = 0\n", encoding="utf-8")
    data = json.loads(run("import", "--path", str(SPOTTER), "--json").output)
    assert data["messages"]["added"] > 0 and not data.get("embedding")
    (isolated_home / "config.toml").write_text("[import]\nembed_budget = 'soon'\n", encoding="utf-8")
    failed = run("import", "--path", str(SPOTTER), "--json")
    assert failed.exit_code == 1
    assert "embed_budget must be a number of seconds" in failed.output
    (tmp_path / "empty").mkdir()
    assert run("import", "--path", str(tmp_path / "empty"), "--embed-budget", "0").exit_code == 0


def test_a_negative_budget_is_refused_with_the_fix(run, tmp_path: Path) -> None:
    result = run("import", "--path", str(tmp_path), "--embed-budget", "-1")
    assert result.exit_code == 2 and "--embed-budget" in result.output
