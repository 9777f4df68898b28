"""OpenCode's SQLite database (1.2+): ``opencode.db`` (``opencode-<channel>.db``) in the data dir.

Ground truth (anomalyco/opencode ``session/session.sql.ts``, ``storage/json-migration.ts``; shared/ref/
more-hosts.md §1): tables ``session`` (one row per session, ``time_*`` in ms), ``message`` and
``part`` (``data`` = the JSON-era record minus its ids; parts in id order). 2.x adds
``session_message`` (``adapters._opencode_v2``), and some builds keep sessions in ``session_v2``;
both are read when present. The database is opened read-only through ``adapters._sqlite`` (OpenCode
keeps it in WAL mode while it runs); each statement is fetched whole, one session at a time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from adapters._draft import SessionDraft
from adapters._jsonl import scrub_object_surrogates
from adapters._opencode_parts import add_message, session_draft
from adapters._opencode_v2 import add_v2_message
from adapters.base import ReadOptions
from recall.transcript import ParseReport

SESSION_TABLES = ("session", "session_v2")


def session_ids(conn: sqlite3.Connection, tables: frozenset[str]) -> set[str]:
    return {
        row[0]
        for table in SESSION_TABLES
        if table in tables
        for row in conn.execute(f"SELECT id FROM {table}")
    }


def read_database(
    conn: sqlite3.Connection,
    tables: frozenset[str],
    source: str,
    options: ReadOptions,
    report: ParseReport,
    only: str | None = None,
) -> Iterator[SessionDraft]:
    """Every session (or only the session ``only`` and its subagents) with its messages."""
    conn.row_factory = sqlite3.Row
    seen: set[str] = set()
    for table in SESSION_TABLES:
        if table not in tables:
            continue
        where, args = ("WHERE id = ? OR parent_id = ?", (only, only)) if only else ("", ())
        for row in _rows(conn, f"SELECT * FROM {table} {where} ORDER BY id", args):
            info = _session_info(row)
            if info["id"] in seen:
                continue
            seen.add(info["id"])
            try:
                session = session_draft(info, source)
            except ValueError as exc:
                report.skip("bad_record", f"{source}: {table}: {exc}")
                continue
            if "message" in tables and "part" in tables:
                _v1_messages(conn, session, options, report)
            if "session_message" in tables:
                _v2_messages(conn, session, options, report)
            yield session


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    """A whole statement's rows; a table whose shape differs from the one read is treated as empty."""
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such column" in str(exc):
            return []
        raise


def _session_info(row: sqlite3.Row) -> dict[str, Any]:
    """A session row in the JSON era's shape (``parentID``, ``time.created``...)."""
    values = dict(row)
    return {
        "id": values.get("id"),
        "parentID": values.get("parent_id"),
        "directory": values.get("directory"),
        "title": values.get("title"),
        "slug": values.get("slug"),
        "version": values.get("version"),
        "projectID": values.get("project_id"),
        "time": {"created": values.get("time_created"), "updated": values.get("time_updated")},
    }


def _v1_messages(
    conn: sqlite3.Connection, session: SessionDraft, options: ReadOptions, report: ParseReport
) -> None:
    parts: dict[str, list[dict[str, Any]]] = {}
    for row in _rows(conn, "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id",
                     (session.external_id,)):  # fmt: skip
        part = _data(row, session, report)
        if part is not None:
            part.setdefault("id", row["id"])
            parts.setdefault(row["message_id"], []).append(part)
    for row in _rows(
        conn, "SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (session.external_id,)
    ):
        info = _data(row, session, report)
        if info is None:
            continue
        try:
            add_message(session, row["id"], info, parts.get(row["id"], []), options, report)
        except (AttributeError, TypeError, ValueError) as exc:
            report.skip("bad_record", f"{session.source_path}: message {row['id']}: {exc!r}")


def _v2_messages(
    conn: sqlite3.Connection, session: SessionDraft, options: ReadOptions, report: ParseReport
) -> None:
    sql = "SELECT id, type, data FROM session_message WHERE session_id = ? ORDER BY seq"
    for row in _rows(conn, sql, (session.external_id,)):
        data = _data(row, session, report)
        if data is None:
            continue
        try:
            add_v2_message(session, row["id"], str(row["type"]), data, options, report)
        except (AttributeError, TypeError, ValueError) as exc:
            report.skip("bad_record", f"{session.source_path}: session_message {row['id']}: {exc!r}")


def _data(row: sqlite3.Row, session: SessionDraft, report: ParseReport) -> dict[str, Any] | None:
    report.lines_read += 1
    raw = row["data"]
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        data = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        report.skip("bad_json", f"{session.source_path}: row {row['id']}")
        return None
    if "\\ud" in raw.lower() and scrub_object_surrogates(data):
        report.skip("lone_surrogate", f"{session.source_path}: row {row['id']}")
    return data
