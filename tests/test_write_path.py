"""The write path: every text passes the scrubber, and provenance is never the caller's choice."""

from __future__ import annotations

import ast
import dataclasses
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from recall.models import RecordKind
from recall.search.keyword import keyword_search
from recall.store import NewRecord, RecordChanges, Store
from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

# Built at run time so the repository holds no literal key.
SECRET = "AKIA" + "Q3HZ7KWM4ZZP2XRT"
REPO = Path(__file__).resolve().parents[1]


def _raw_text(db_path: Path) -> str:
    """Every value of every ordinary table, as one string."""
    conn = sqlite3.connect(db_path)
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if not r[0].startswith("search_index")
    ]
    dump = [repr(row) for table in tables for row in conn.execute(f"SELECT * FROM {table}")]
    conn.close()
    return "\n".join(dump)


def _transcript(text: str, key: str = "m1") -> Transcript:
    message = TranscriptMessage(
        key=key,
        role=Role.TOOL,
        text=text,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        origin=Origin.TOOL,
        kind=MessageKind.TOOL_RESULT,
        tool_name=f"Bash {SECRET}",
        meta={"raw": {"env": f"KEY={SECRET}"}},
    )
    return Transcript("claude", "s-1", (message,), cwd="/nowhere/proj", title=f"debug {SECRET}")


def test_every_write_path_scrubs(store: Store, db_path: Path) -> None:
    record = store.add(
        NewRecord(RecordKind.LEARNING, f"key {SECRET}", "p", detail=f"detail {SECRET}", tags=(SECRET,))
    )
    crumb = store.add(NewRecord(RecordKind.BREADCRUMB, "clean", "p"))
    store.update(RecordKind.BREADCRUMB, crumb, RecordChanges(content=f"now {SECRET}", detail=SECRET))
    outcome = store.import_transcripts([_transcript(f"output {SECRET}")])
    store.import_transcripts([_transcript(f"output grew {SECRET}")])  # the update path
    assert outcome.redactions["aws-access-key-id"] >= 4
    raw = _raw_text(db_path)
    assert SECRET not in raw
    assert "[REDACTED:aws-access-key-id]" in raw
    with store.reading() as conn:
        assert keyword_search(conn, "AKIAQ3HZ7KWM4ZZP2XRT") == []
    assert store.require(RecordKind.LEARNING, record)["tags"] == ["[REDACTED:aws-access-key-id]"]


def test_only_the_writer_issues_insert_or_update() -> None:
    """A static check: no module outside the writer writes text rows with its own SQL."""
    allowed = {
        REPO / "recall" / "store" / "writer.py",
        # Stems one word through a private in-memory FTS5 table: it never touches the store's file.
        REPO / "recall" / "search" / "project_bm25.py",
        # Copies a new session's rows, cleaned by the writer's clean_row, into a private in-memory
        # database, so the extraction rules read them ahead with the store's own query (adr/0045).
        REPO / "recall" / "extract" / "ahead.py",
        # Translates the store's own SQL for PostgreSQL (adr/0024): it rewrites statements, issues none.
        REPO / "recall" / "pg" / "compat.py",
        # The PostgreSQL schema, derived from the migrations: DDL and its index backfill, like them.
        REPO / "recall" / "pg" / "schema.py",
    }
    # Bookkeeping that holds no text anyone wrote: the schema digest, token hashes, sync marks.
    bookkeeping = ("RECALL_SCHEMA", "TEAM_TOKENS", "SYNC_STATE", "SYNC_LINKS", "SYNC_ORIGINS")
    offenders = []
    for path in sorted((REPO / "recall").rglob("*.py")) + sorted((REPO / "adapters").rglob("*.py")):
        if path in allowed or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = " ".join(node.value.upper().split())
                target = text.removeprefix("INSERT INTO ").removeprefix("UPDATE ").split(" ")[0]
                if target in bookkeeping:
                    continue
                if text.startswith(("INSERT INTO", "INSERT OR", "REPLACE INTO")) or (
                    text.startswith("UPDATE ") and " SET " in text and "PARENT_ID" not in text
                ):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_new_record_has_no_provenance_field() -> None:
    assert "provenance" not in {f.name for f in dataclasses.fields(NewRecord)}
    with pytest.raises(TypeError):
        NewRecord(RecordKind.DECISION, "x", "p", provenance="derived")  # type: ignore[call-arg]


def test_provenance_is_stamped_by_the_path_not_the_values(store: Store) -> None:
    decision = store.add(NewRecord(RecordKind.DECISION, "x", "p"))
    assert store.require(RecordKind.DECISION, decision)["provenance"] == "user_authored"
    # Even a caller reaching for the writer cannot smuggle provenance through the values.
    with store.transaction() as writer:
        writer.update("decisions", decision, {"provenance": "derived", "content": "y"})
    assert store.require(RecordKind.DECISION, decision)["content"] == "y"
    assert store.require(RecordKind.DECISION, decision)["provenance"] == "user_authored"
    store.import_transcripts([_transcript("hello")])
    conn = store.connection
    assert {r[0] for r in conn.execute("SELECT provenance FROM messages")} == {"verbatim"}
    assert {r[0] for r in conn.execute("SELECT provenance FROM sessions")} == {"verbatim"}


def test_transcript_with_provenance_in_meta_is_still_verbatim(store: Store) -> None:
    message = TranscriptMessage("k", Role.USER, "hi", meta={"provenance": "user_authored"})
    store.import_transcripts([Transcript("codex", "t-1", (message,), meta={"provenance": "derived"})])
    assert store.connection.execute("SELECT provenance FROM messages").fetchone()[0] == "verbatim"


def test_an_entity_named_again_is_the_same_redacted_row(store: Store, db_path: Path) -> None:
    """Entity names are cleaned once per writer: a name met again, in this transaction or a later
    one, is the same row, redacted."""
    name = f"deploy --key {SECRET}"
    ids = []
    for _ in range(2):
        with store.transaction() as writer:
            ids += [writer.entity("p", "command", name), writer.entity("p", "command", name)]
    assert len(set(ids)) == 1
    with store.reading() as conn:
        [(stored,)] = conn.execute("SELECT name FROM entities").fetchall()
    assert SECRET not in stored and SECRET not in _raw_text(db_path)
