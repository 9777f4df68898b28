"""What the read-ahead worker makes of a session new to the store, beside its cleaned rows (adr/0045).

For such a session the worker holds every row the import will write (``preclean``), so it can do
ahead of the write what the importing process would do after it: read the messages for what they
touched (the connect stage), run the extraction rules, and draft the summary. Each result records
what it rested on; the importing process takes it only when its own reading would rest on the
same (recall.store.entities, recall.extract.ahead, recall.summary_queue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from recall.entities.paths import ProjectPaths
from recall.extract.ahead import extraction_ahead
from recall.project import resolve_project
from recall.store.entities import MentionsAhead, PartMentions, is_local_name, project_roots, read_mentions
from recall.store.forgotten import forgotten_keys
from recall.store.transcripts import (
    ROWS_PER_TRANSACTION,
    Ready,
    first_of_each_key,
    session_row,
    session_values,
)
from recall.store.writer import CleanRow, clean_row
from recall.summary import DraftAhead, build_summary

if TYPE_CHECKING:
    import sqlite3

    from recall.extract.candidate import Analysis
    from recall.extract.session import SessionView
    from recall.transcript import Transcript


def ahead_of_new_session(
    conn: sqlite3.Connection, transcript: Transcript, ready: Ready, analyse: Callable[[SessionView], Analysis]
) -> None:
    """In the read-ahead worker, for a session new to the store: what its messages touched, read as
    the connect stage will read them, what the extraction rules (``analyse``) find in it, and its
    summary; left None when the store holds the session or the user forgot some of it (the
    importing process then does all three itself)."""
    if session_row(conn, transcript) is not None:
        return
    forgotten = forgotten_keys(conn, transcript)
    if forgotten.session or forgotten.messages:
        return
    rows = _new_session_rows(transcript, ready)
    if rows is None:
        return
    project = resolve_project(transcript.cwd)
    session = clean_row("sessions", {"project": project, **session_values(transcript)}).values
    ready.mentions = _mentions_ahead(conn, transcript, [row.values for row in rows], project, session["cwd"])
    ready.extraction = extraction_ahead(session, rows, analyse)
    if transcript.parent_external_id is None and rows:
        ready.summary = DraftAhead(
            session["title"], build_summary(session["title"], [row.values for row in rows])
        )


def _mentions_ahead(
    conn: sqlite3.Connection,
    transcript: Transcript,
    rows: list[Mapping[str, Any]],
    project: str,
    cwd: str | None,
) -> MentionsAhead:
    """The connect stage's reading of a new session, one part per transaction (``connect_written``).

    The parts are the plan's: a new session writes its messages (first of each key) in chunks of
    ``ROWS_PER_TRANSACTION``, and each transaction reads its own chunk with a fresh reader, finding a
    call stored by an earlier chunk, or by its own, in the store.
    """
    paths = ProjectPaths(cwd, project_roots(conn, project))
    local: dict[str, bool] = {}

    def is_local(name: str) -> bool:
        if name not in local:
            local[name] = is_local_name(conn, project, name)
        return local[name]

    calls: dict[str, Mapping[str, Any]] = {}
    messages = {m.key: m for m in transcript.messages}  # the last of a key, as ``_written`` hands them
    parts: dict[tuple[str, ...], PartMentions] = {}
    for start in range(0, len(rows), ROWS_PER_TRANSACTION):
        chunk = rows[start : start + ROWS_PER_TRANSACTION]
        calls.update((row["external_id"], row) for row in chunk if row["external_id"].startswith("call:"))
        keys = tuple(row["external_id"] for row in chunk)
        parts[keys] = read_mentions(chunk, messages, paths, is_local, lambda call: calls.get(f"call:{call}"))
    return MentionsAhead(project, paths.basis(), local, parts)


def _new_session_rows(transcript: Transcript, ready: Ready) -> list[CleanRow] | None:
    """The rows a new session's plan writes, in order (the first message of each key)."""
    rows: list[CleanRow] = []
    for message in first_of_each_key(transcript):
        made = ready.rows.get(message.key)
        if made is None:
            return None
        rows.append(made[1])
    return rows
