"""Rows are read as plain data, without SQLModel (adr/0030); the SQLModel classes must still agree
with what a read returns, for every kind, on real imported transcripts and records."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from recall.memory import Memory
from recall.models import TABLE_NAMES, TABLES, Session
from recall.store import plain_row
from recall.store.writer import to_db_time

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"


def validated(model: Any, row: sqlite3.Row, kind: str) -> dict[str, Any]:
    """What reads returned before adr/0030: the row checked by its SQLModel class and dumped."""
    data = dict(row)
    for column in ("tags", "meta"):
        if isinstance(data.get(column), str):
            data[column] = json.loads(data[column])
    out = model.model_validate(data).model_dump()
    for key, value in out.items():
        if isinstance(value, datetime):
            out[key] = to_db_time(value)
        elif isinstance(value, Enum):
            out[key] = value.value
    out["kind"] = kind
    return out


def test_every_stored_row_reads_as_its_sqlmodel_class_describes_it(memory: Memory) -> None:
    memory.import_transcripts(["claude"], paths=[SPOTTER], include_thinking=True, embed_budget_seconds=0)
    memory.add("decision", "Use WAL", project="p", detail="readers", tags="db, ops", confidence="high")
    memory.add("learning", "FTS5 hyphens", project="p", importance=9)
    memory.add("breadcrumb", "halfway", project="p", valid_until="2099-01-01")
    memory.note_write(
        "notes/architecture.md", "---\ntitle: Architecture\n---\n# Store\nOne SQLite file.", project="p"
    )
    tables = [("session", "sessions", Session)] + [
        (kind.value, TABLE_NAMES[kind], model) for kind, model in TABLES.items()
    ]
    compared = 0
    with memory.store.reading() as conn:
        for kind, table, model in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert rows, f"no {table} to compare"
            for row in rows:
                assert plain_row(row, kind) == validated(model, row, kind), (table, row["id"])
                compared += 1
    assert compared > 400


def test_add_search_and_context_import_neither_sqlmodel_nor_numpy(db_path: Path) -> None:
    """The short commands' start-up: SQLModel/SQLAlchemy, numpy and onnxruntime stay unloaded."""
    code = f"""
import sys
from click.testing import CliRunner
from recall.cli import cli
db = {str(db_path)!r}
for args in (["add", "learning", "WAL readers never block", "--project", "p"],
             ["search", "--mode", "keyword", "WAL", "--project", "p"], ["context", "--project", "p"]):
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
heavy = sorted(m for m in ("sqlmodel", "sqlalchemy", "numpy", "onnxruntime", "mcp") if m in sys.modules)
print(",".join(heavy))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_search_and_context_leave_the_scrub_rules_and_the_entity_readers_unloaded(db_path: Path) -> None:
    """Reading commands neither write nor connect: the scrubber's rule layers and the entity readers
    (a third of their instructions, adr/0035) stay unimported, and `recall add` loads them to write."""
    code = f"""
import sys
from click.testing import CliRunner
from recall.cli import cli
db = {str(db_path)!r}
loaded = []
for args in (["search", "--mode", "keyword", "WAL", "--project", "p"], ["context", "--project", "p"],
             ["add", "learning", "WAL readers never block", "--project", "p"]):
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    loaded.append(",".join(m for m in ("recall.scrub.tokens", "recall.store.entities") if m in sys.modules))
print("|".join(loaded))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "||recall.scrub.tokens,recall.store.entities"
