"""CHECK constraints spelled out as comparisons (m0018, adr/0046): the same values accepted, the same
refused, rows already stored untouched, and no temporary b-tree built per row written."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from adapters import get_adapter
from recall.ingest import run_import
from recall.migrations import migrate
from recall.migrations.m0018_checks_without_in_lists import comparisons
from recall.store import Store

SESSION = Path(__file__).parent / "fixtures/transcripts/claude-code/real/spotter/subagent.jsonl"
_LONG_IN_LIST = re.compile(r"\bIN\s*\((?:[^(),]*,){2,}[^(),]*\)")
_MESSAGE = (
    "INSERT INTO messages (project, created_at, updated_at, provenance, session_id, external_id, ordinal, "
    "role, origin, kind, content, content_hash) VALUES ('p', 't', 't', ?, ?, ?, 0, ?, ?, ?, 'x', 'h')"
)


def _definitions(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(
        conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%CHECK%'")
    )


def _refuses(conn: sqlite3.Connection, session: int, **values: str) -> None:
    row = {"provenance": "verbatim", "role": "user", "origin": "human", "kind": "text", **values}
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        conn.execute(_MESSAGE, (row["provenance"], session, "bad", row["role"], row["origin"], row["kind"]))


def test_an_upgraded_store_imports_and_refuses_what_it_refused(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    old = sqlite3.connect(db)
    migrate(old, target=17)
    old.close()
    # Rows written under the old definitions: a real session, through the store at version 17.
    store = Store(db)  # upgrades to the latest version, then imports
    run_import(store, [get_adapter("claude")], paths=[SESSION], embed_budget_seconds=0, read_ahead=False)
    store.close()
    fresh = sqlite3.connect(db)
    assert fresh.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert fresh.execute("SELECT count(*) FROM messages").fetchone()[0] == 43
    assert not any(_LONG_IN_LIST.search(sql) for sql in _definitions(fresh).values())
    session = fresh.execute("SELECT id FROM sessions").fetchone()[0]
    for column in ("provenance", "role", "origin", "kind"):
        _refuses(fresh, session, **{column: "bogus"})
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        fresh.execute("INSERT INTO entities (project, type, name, key, created_at, updated_at, provenance) "
                      "VALUES ('p', 'planet', 'x', 'x', 't', 't', 'extracted')")  # fmt: skip
    fresh.execute(
        _MESSAGE, ("derived", session, "good", "tool", "compaction", "thinking")
    )  # every last value


def test_upgrading_rows_written_under_the_old_definitions(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    old = sqlite3.connect(db)
    migrate(old, target=17)
    old.execute("INSERT INTO sessions (project, created_at, updated_at, provenance, host, external_id) "
                "VALUES ('p', 't', 't', 'verbatim', 'claude', 's')")  # fmt: skip
    old.execute(_MESSAGE, ("verbatim", 1, "m", "assistant", "agent", "tool_call"))
    old.commit()
    before = _definitions(old)
    old.close()
    with Store(db) as store:
        after = _definitions(store.connection)
        assert [tuple(r) for r in store.connection.execute("SELECT external_id FROM messages")] == [("m",)]
        _refuses(store.connection, 1, role="robot")  # on the connection that migrated
    assert before.keys() == after.keys() and before != after
    assert {name: comparisons(sql) for name, sql in before.items()} == after


def test_a_message_insert_builds_no_temporary_tree_for_its_checks(tmp_path: Path) -> None:
    with Store(tmp_path / "recall.db") as store:
        plan = [row[1] for row in store.connection.execute("EXPLAIN " + _MESSAGE, (None,) * 6)]
    # One is left: the partial index of embeddable messages (origin IN three values), m0007's.
    assert plan.count("OpenEphemeral") == 1


def test_comparisons_spell_out_lists_of_three_or_more_constants_only() -> None:
    assert comparisons("CHECK (k IN (1, 2, 3))") == "CHECK ((k = 1 OR k = 2 OR k = 3))"
    assert comparisons("CHECK (r IN ('a','b', 'c d'))") == "CHECK ((r = 'a' OR r = 'b' OR r = 'c d'))"
    assert comparisons("CHECK (r IN ('a', 'b'))") == "CHECK (r IN ('a', 'b'))"
    assert comparisons("CHECK (r IN (SELECT x FROM t))") == "CHECK (r IN (SELECT x FROM t))"
