"""A damaged database gives one line that says what is wrong and what to do, from every command,
and `recall doctor` names the damaged table. The damage is real: pages of a real database
overwritten, or the file cut short."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from recall.cli import cli

PAGE = 4096


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real database: the demo sessions imported and embedded, plus typed records."""
    folder = tmp_path_factory.mktemp("pristine")
    db = folder / "recall.db"
    env = {"RECALL_HOME": str(folder / "home")}
    runner = CliRunner()
    for args in (
        ["import", "--demo"],
        ["add", "decision", "Use SQLite with WAL for the store", "--project", "p"],
        ["add", "learning", "WAL needs a checkpoint to shrink", "--project", "p"],
    ):
        result = runner.invoke(cli, ["--db", str(db), *args], env=env)
        assert result.exit_code == 0, result.output
    assert not Path(f"{db}-wal").exists()  # checkpointed on close: every page is in the file
    return db


def root_page(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]


def damaged_copy(pristine: Path, folder: Path, damage: str) -> Path:
    """A copy of the pristine database with one kind of damage."""
    db = folder / "recall.db"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pristine, db)
    noise = random.Random(damage).randbytes(PAGE)
    if damage == "truncated":
        os.truncate(db, db.stat().st_size // 2)
    elif damage == "header only":
        os.truncate(db, 50)
    else:
        page = 1 if damage == "schema" else root_page(pristine, damage)
        start = (page - 1) * PAGE + (100 if page == 1 else 0)  # page 1 keeps the file header
        with db.open("r+b") as handle:
            handle.seek(start)
            handle.write(noise[: PAGE * page - start])
    return db


DAMAGE = ["messages", "decisions", "search_index_data", "schema", "truncated", "header only"]
COMMANDS = [
    ["stats"],
    ["stats", "--json"],
    ["search", "sqlite", "--all-projects"],
    ["search", "sqlite", "--all-projects", "--mode", "keyword", "--json"],
    ["context", "--project", "p"],
    ["add", "learning", "a new finding", "--project", "p"],
    ["show", "decision", "1"],
    ["forget", "learning", "2"],
    ["embed"],
]


@pytest.mark.parametrize("damage", DAMAGE)
def test_every_command_says_one_line_about_a_damaged_database(
    pristine: Path, tmp_path: Path, isolated_home: Path, damage: str
) -> None:
    db = damaged_copy(pristine, tmp_path / "copy", damage)
    failed = 0
    for args in COMMANDS:
        result = CliRunner().invoke(cli, ["--db", str(db), *args])
        if result.exit_code == 0:
            continue  # this command did not touch the damaged part
        failed += 1
        assert isinstance(result.exception, SystemExit), (args, result.exception)
        assert result.exit_code == 1, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, (args, result.output)
        assert "recall doctor" in lines[0] or "move it aside" in lines[0], (args, lines[0])
    assert failed >= 2  # the damage was real enough to stop some commands


def test_stats_on_a_corrupted_page_in_a_real_process(
    pristine: Path, tmp_path: Path, isolated_home: Path
) -> None:
    db = damaged_copy(pristine, tmp_path / "copy", "messages")
    done = subprocess.run(
        [sys.executable, "-m", "recall", "--db", str(db), "stats"],
        env={**os.environ, "RECALL_HOME": str(isolated_home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"the database {db} is damaged" in done.stderr and "recall doctor" in done.stderr


def findings(db: Path) -> list[tuple[str, str]]:
    result = CliRunner().invoke(cli, ["--db", str(db), "doctor", "--json"])
    report = json.loads(result.output)
    assert report["ok"] is False
    database = next(s for s in report["sections"] if s["title"] == "Database")
    return [(f["level"], f["text"]) for f in database["findings"]]


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        ("messages", "damaged table: messages"),
        ("decisions", "damaged table: decisions"),
        ("search_index_data", "damaged table: search_index (the keyword index)"),
        ("messages_session_order", "damaged table: messages"),  # an index: its table is named
        ("schema", "it cannot be read as a database"),
        ("truncated", "the file is cut short: it holds"),
        ("header only", "the file is cut short: it holds 50 bytes"),
    ],
)
def test_doctor_names_what_is_damaged_and_what_to_do(
    pristine: Path, tmp_path: Path, isolated_home: Path, user_home: Path, damage: str, named: str
) -> None:
    db = damaged_copy(pristine, tmp_path / "copy", damage)
    found = findings(db)
    assert any(level == "fail" and text.startswith(named) for level, text in found), found
    assert any("recall import" in text and ".recover" in text for _, text in found), found
    if damage in ("messages", "decisions", "search_index_data"):
        assert (
            len([text for _, text in found if text.startswith("damaged table")]) == 1
        )  # nothing else blamed


def test_doctor_passes_a_sound_database(pristine: Path, isolated_home: Path, user_home: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(pristine), "doctor", "--json"])
    database = next(s for s in json.loads(result.output)["sections"] if s["title"] == "Database")
    assert [f["level"] for f in database["findings"]].count("fail") == 0
    assert any(f["text"] == "integrity check passed" for f in database["findings"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def spawned(db: Path, home: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "recall", "--db", str(db), "mcp"], env={"RECALL_HOME": str(home)}
    )
    async with Client(params) as client:
        yield client


@pytest.mark.anyio
async def test_mcp_tools_answer_a_damaged_database_with_one_line(
    pristine: Path, tmp_path: Path, isolated_home: Path
) -> None:
    db = damaged_copy(pristine, tmp_path / "copy", "decisions")
    with anyio.fail_after(120):
        async with spawned(db, isolated_home) as client:
            for tool, arguments in (
                ("memory_stats", {}),
                ("memory_search", {"query": "sqlite", "project": "*"}),
                ("memory_recall", {"project": "p"}),
            ):
                result = await client.call_tool(tool, arguments)
                text = "\n".join(block.text for block in result.content if block.type == "text")
                assert result.is_error, tool
                assert "\n" not in text and "is damaged" in text and "recall doctor" in text, (tool, text)
