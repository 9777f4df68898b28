"""The `recall` command, driven through click's runner against a real database file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, ["--db", str(db_path), *args], input=input, catch_exceptions=False)

    return invoke


def test_add_prints_the_new_id_and_show_reads_it(run) -> None:
    result = run(
        "add", "decision", "Use WAL", "--detail", "readers", "--project", "p", "--tags", "DB, db ,Ops"
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "1"
    shown = json.loads(run("show", "decision", "1", "--json").output)
    assert shown["tags"] == ["db", "ops"]
    assert shown["provenance"] == "user_authored"


def test_add_json_and_breadcrumb_expiry(run) -> None:
    result = run("add", "breadcrumb", "halfway", "--project", "p", "--valid-until", "2099-01-01", "--json")
    data = json.loads(result.output)
    assert data["kind"] == "breadcrumb" and data["valid_until"].startswith("2099-01-01")


def test_search_json_reports_kind_id_project_preview_provenance_score(run) -> None:
    run("add", "learning", "bun:sqlite needs the WAL pragma", "--project", "p")
    data = json.loads(run("search", "bun:sqlite", "--project", "p", "--json").output)
    (hit,) = data["results"]
    assert {"kind", "id", "project", "created_at", "preview", "provenance", "score"} <= set(hit)
    assert hit["kind"] == "learning" and hit["project"] == "p"


@pytest.mark.parametrize("query", ["C++", '"unbalanced', "AND", "*", "what did we decide?", "recall-mcp"])
def test_search_never_errors_on_user_text(run, query: str) -> None:
    run("add", "decision", "recall-mcp uses C++ nowhere", "--project", "p")
    result = run("search", query, "--project", "p")
    assert result.exit_code == 0


def test_search_says_when_nothing_matched(run) -> None:
    result = run("search", "zzz", "--all-projects")
    assert result.exit_code == 0
    assert "no results" in result.output


def test_decision_lifecycle_errors_are_one_line_and_exit_1(run) -> None:
    run("add", "decision", "A", "--project", "p")
    run("add", "decision", "B", "--project", "p")
    assert run("decision", "supersede", "1", "--by", "2").output.strip() == "decision 1 superseded by 2"
    result = run("decision", "revert", "1")
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: decision 1 is superseded; only active decisions can be changed (revert refused)"
    )
    missing = run("decision", "revert", "99")
    assert missing.exit_code == 1 and "no decision with id 99" in missing.output


def test_stats_counts_per_kind_and_project(run, db_path: Path) -> None:
    run("add", "decision", "A", "--project", "alpha")
    run("add", "learning", "B", "--project", "beta")
    data = json.loads(run("stats", "--json").output)
    assert data["database"] == str(db_path)
    assert data["counts"]["decision"] == 1 and data["counts"]["learning"] == 1
    assert data["projects"] == {"alpha": {"decision": 1}, "beta": {"learning": 1}}
    assert data["schema_version"] == data["schema_latest"] >= 1
    text = run("stats").output
    assert "schema:" in text and "alpha" in text


def test_scrub_reads_stdin_and_reports_kinds(run) -> None:
    key = "AKIA" + "Z7RQ2MVK9QQW4TLB"
    plain = run("scrub", input=f"aws {key}\n")
    assert plain.stdout == "aws [REDACTED:aws-access-key-id]\n"
    data = json.loads(run("scrub", "--json", input=f"aws {key}").output)
    assert data == {"text": "aws [REDACTED:aws-access-key-id]", "kinds": ["aws-access-key-id"]}


def test_project_defaults_to_the_current_repository(run, tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "my-repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:me/real-name.git\n')
    monkeypatch.chdir(repo)
    run("add", "learning", "remember this")
    data = json.loads(run("show", "learning", "1", "--json").output)
    assert data["project"] == "real-name"


def test_bad_values_get_usage_errors(run) -> None:
    result = run("add", "decision", "x", "--importance", "11")
    assert result.exit_code == 2
    result = run("add", "breadcrumb", "x", "--valid-until", "someday", "--project", "p")
    assert result.exit_code == 1 and "ISO date" in result.output


def test_connections_answers_in_text_and_json_and_names_what_it_did_not_find(run) -> None:
    run("add", "learning", "src/billing/invoice.py rounds per line, not per total", "--project", "shop")
    text = run("connections", "invoice.py", "--project", "shop")
    assert text.exit_code == 0 and "file src/billing/invoice.py (shop)" in text.output
    assert "learning#1" in text.output
    data = json.loads(run("connections", "src/billing/invoice.py", "--all-projects", "--json").output)
    assert [e["name"] for e in data["entities"]] == ["src/billing/invoice.py"]
    assert [r["id"] for r in data["learnings"]] == [1]
    missing = run("connections", "tax.py", "--project", "shop")
    assert (
        missing.exit_code == 1
        and "no file, symbol, package, command or error named 'tax.py'" in missing.output
    )
    both = run("connections", "x", "--project", "shop", "--all-projects")
    assert both.exit_code == 2 and "not both" in both.output
    stats = run("stats")
    assert "entities: file 1, symbol 0" in stats.output
    assert "entities:\n  mentions file src/billing/invoice.py (1)" in run("show", "learning", "1").output
