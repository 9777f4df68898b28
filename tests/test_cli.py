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


def test_add_prints_the_new_ref_and_show_reads_it_either_way(run) -> None:
    result = run(
        "add", "decision", "Use WAL", "--detail", "readers", "--project", "p", "--tags", "DB, db ,Ops"
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "decision#1"
    shown = json.loads(run("show", "decision#1", "--json").output)
    assert shown["ref"] == "decision#1"
    assert shown["tags"] == ["db", "ops"]
    assert shown["provenance"] == "user_authored"
    assert json.loads(run("show", "decision", "1", "--json").output) == shown
    assert json.loads(run("show", "decisions#1", "--json").output) == shown


def test_every_ref_a_search_prints_is_accepted_by_show_and_forget(run) -> None:
    run("add", "learning", "FTS5 treats a hyphen as a column filter", "--project", "p")
    line = run("search", "hyphen", "--project", "p", "--mode", "keyword").output.splitlines()[0]
    ref = line.split()[0]
    assert ref == "learning#1"
    assert run("show", ref).exit_code == 0
    assert run("forget", ref).output.startswith("learning#1 forgotten")
    assert run("show", ref).exit_code == 1


@pytest.mark.slow
def test_add_leaves_its_vector_to_the_next_import(run, db_path: Path, tmp_path: Path, minilm) -> None:
    """`recall add` returns without loading the model (adr/0016); an import with nothing new embeds it."""
    import sqlite3

    assert run("add", "learning", "WAL readers never block the writer", "--project", "p").exit_code == 0
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
    (tmp_path / "empty").mkdir()
    data = json.loads(run("import", "--path", str(tmp_path / "empty"), "--json").output)
    assert data["messages"]["added"] == 0 and data["embedding"]["embedded"] == 1
    assert conn.execute("SELECT count(*) FROM embeddings WHERE kind_code = 2").fetchone()[0] == 1
    conn.close()


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
    assert run("decision", "supersede", "decision#1", "--by", "2").output.strip() == (
        "decision#1 superseded by decision#2"
    )
    result = run("decision", "revert", "1")
    assert result.exit_code == 1
    assert result.output.strip() == (
        "recall: decision 1 is superseded; only active decisions can be changed (revert refused)"
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
    headings = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert headings == [
        "Database",
        "Stored",
        "Keyword index",
        "Connections (entities)",
        "Embeddings",
        "Projects",
    ]
    assert "schema 5 of 5".replace("5", str(data["schema_latest"])) in text and "alpha" in text


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
    (line,) = result.output.splitlines()
    assert line.startswith("recall: Invalid value for '--importance'") and "recall add --help" in line
    result = run("add", "breadcrumb", "x", "--valid-until", "someday", "--project", "p")
    assert result.exit_code == 1 and "ISO date" in result.output


@pytest.mark.parametrize(
    "args",
    [["search"], ["add", "decision"], ["list", "--limit", "0"], ["nosuchcommand"], ["show", "bogus#1"]],
    ids=["missing-argument", "missing-content", "bad-limit", "unknown-command", "unknown-kind"],
)
def test_every_error_is_one_line_that_names_the_fix(run, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code in (1, 2)
    (line,) = result.output.splitlines()
    assert line.startswith("recall: ")
    assert "--help" in line or "use one of" in line


def test_the_cli_honours_recall_project_like_the_mcp_server(run, monkeypatch) -> None:
    monkeypatch.setenv("RECALL_PROJECT", "pinned")
    run("add", "decision", "Use WAL")
    assert json.loads(run("show", "decision#1", "--json").output)["project"] == "pinned"
    assert run("list").output.startswith("decision#1  pinned")
    assert json.loads(run("show", "decision#1", "--json").output)["project"] == "pinned"
    run("add", "decision", "Use Postgres", "--project", "flag-wins")
    assert json.loads(run("show", "decision#2", "--json").output)["project"] == "flag-wins"


def test_list_filters_by_kind_status_tags_provenance_and_pages(run) -> None:
    for n in range(5):
        run("add", "learning", f"note {n}", "--project", "p", "--tags", "ci" if n % 2 else "ci,flaky")
    run("add", "decision", "A", "--project", "p")
    run("add", "decision", "B", "--project", "p")
    run("decision", "supersede", "decision#1", "--by", "decision#2")
    page = json.loads(
        run("list", "learning", "--project", "p", "--tag", "ci", "--tag", "flaky", "--json").output
    )
    assert [r["ref"] for r in page["records"]] == ["learning#5", "learning#3", "learning#1"]
    assert page["records"][0]["tags"] == ["ci", "flaky"]
    superseded = json.loads(run("list", "--status", "superseded", "--project", "p", "--json").output)
    assert [r["ref"] for r in superseded["records"]] == ["decision#1"]
    assert (
        json.loads(run("list", "--provenance", "extracted", "--project", "p", "--json").output)["records"]
        == []
    )
    seen: list[str] = []
    cursor: list[str] = []
    while True:
        page = json.loads(run("list", "--project", "p", "--limit", "3", *cursor, "--json").output)
        seen += [r["ref"] for r in page["records"]]
        if not page["next_cursor"]:
            break
        cursor = ["--cursor", page["next_cursor"]]
    assert len(seen) == 7 and len(set(seen)) == 7
    assert seen[:2] == ["decision#2", "decision#1"]
    assert run("list", "--project", "elsewhere").stdout == ""
    bad = run("list", "--cursor", "not-a-cursor")
    assert bad.exit_code == 1 and "cursor" in bad.output


def test_search_json_gives_tags_as_a_list_and_never_pads_with_zero_scores(run) -> None:
    run(
        "add",
        "learning",
        "pytest needs the -p no:cacheprovider flag in CI",
        "--project",
        "p",
        "--tags",
        "ci,pytest",
    )
    data = json.loads(run("search", "cacheprovider", "--project", "p", "--mode", "keyword", "--json").output)
    (hit,) = data["results"]
    assert hit["ref"] == "learning#1" and hit["extra"]["tags"] == ["ci", "pytest"]
    hybrid = json.loads(run("search", "zebra crossing", "--project", "p", "--limit", "50", "--json").output)
    assert all(hit["score"] > 0 for hit in hybrid["results"])


FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


@pytest.mark.parametrize(
    ("path", "host"),
    [
        (FIXTURES / "claude-code" / "real" / "spotter" / "short.jsonl", "claude"),
        (FIXTURES / "codex" / "real" / "agent-history" / "session-01.jsonl", "codex"),
    ],
    ids=["claude", "codex"],
)
def test_import_of_one_named_file_reads_it_once_with_its_own_host(run, path: Path, host: str) -> None:
    result = run("import", "--path", str(path), "--json")
    data = json.loads(result.stdout)
    assert data["files"]["seen"] == 1 and data["files"]["read"] == 1 and data["errors"] == []
    sessions = json.loads(run("list", "session", "--all-projects", "--json").stdout)["records"]
    assert [row["host"] for row in sessions] == [host]
    assert "1 found" in run("import", "--path", str(path), "--force").stdout


def test_routine_claude_code_lines_are_counted_quietly_and_warnings_say_why(run) -> None:
    folder = FIXTURES / "claude-code"
    data = json.loads(run("import", "--path", str(folder), "--json").stdout)
    assert data["skipped"]["orphan_summary"] >= 1 and data["skipped"]["duplicate_uuid"] >= 1
    assert not any("leafUuid" in error or "duplicate" in error for error in data["errors"])
    for error in data["errors"]:
        path, _, why = error.rpartition(": ")
        assert path.count(".jsonl") == 1 and len(why.split()) >= 3, error


def test_finding_nothing_names_the_folders_searched_and_the_variables_that_move_them(
    run, user_home: Path
) -> None:
    result = run("import")
    assert result.exit_code == 0
    assert str(user_home / ".claude" / "projects") in result.output
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "RECALL_CURSOR_ROOTS"):
        assert variable in result.output
    assert "recall doctor" in result.output


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
    assert "file 1, symbol 0" in stats.output
    assert "entities:\n  mentions file src/billing/invoice.py (1)" in run("show", "learning", "1").output
