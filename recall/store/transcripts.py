"""Writing transcripts: sessions and their messages, upserted on natural keys.

Re-importing is idempotent by construction: a message is identified by ``(session, key)``, so a
second run over the same transcript writes nothing, a session that grew gets only its new messages,
and a message that grew (Claude's split assistant lines arriving in a later read) is updated in
place. Everything here is stamped ``verbatim``: it is what was said, as it was said (minus secrets).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall.errors import ConflictingSource
from recall.models import Provenance
from recall.project import resolve_project
from recall.store.entities import Written, connect_written
from recall.store.writer import Writer, to_db_time
from recall.transcript import Transcript, TranscriptMessage

if TYPE_CHECKING:
    from recall.store import Store

_MESSAGE_COLUMNS = (
    "project", "session_id", "external_id", "ordinal", "role", "origin", "kind",
    "tool_name", "content", "timestamp", "content_hash", "meta",
)  # fmt: skip


@dataclass(slots=True)
class TranscriptOutcome:
    session_id: int
    external_id: str
    project: str
    new_session: bool
    added: int = 0
    updated: int = 0
    updated_keys: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BatchOutcome:
    """What one import transaction did (one source file's transcripts)."""

    sessions: list[TranscriptOutcome] = field(default_factory=list)
    redactions: Counter[str] = field(default_factory=Counter)
    links: int = 0  # entity links added (recall.store.entities)

    @property
    def added(self) -> int:
        return sum(s.added for s in self.sessions)

    @property
    def updated(self) -> int:
        return sum(s.updated for s in self.sessions)


def message_hash(message: TranscriptMessage) -> str:
    """Identity of a message's content, to notice when a stored message grew."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(
        f"{message.role}\x1f{message.origin}\x1f{message.kind}\x1f{message.tool_name or ''}\x1f".encode()
    )
    digest.update(message.text.encode("utf-8", errors="surrogatepass"))
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class SourceStamp:
    """The file a batch came from, remembered with the batch so a crash cannot desynchronise them."""

    host: str
    path: str
    size: int
    mtime_ns: int


class _DryRun(Exception):
    """Raised inside the transaction to roll back a dry run after counting."""


def import_transcripts(
    store: Store,
    transcripts: Iterable[Transcript],
    *,
    project: str | None = None,
    expect_host: str | None = None,
    source: SourceStamp | None = None,
    dry_run: bool = False,
) -> BatchOutcome:
    """Write transcripts in ONE transaction: a source file lands whole or not at all.

    A dry run does the same work and rolls it back, so its counts are exactly what a real run writes.
    """
    outcome = BatchOutcome()
    items = list(transcripts)
    try:
        with store.transaction() as writer:
            for transcript in items:
                outcome.sessions.append(_write_one(store, writer, transcript, project, expect_host))
            _link_parents(store)
            outcome.links = connect_written(store.connection, writer, _written(outcome, items))
            outcome.redactions.update(writer.redactions)
            if source is not None:
                writer.remember_source(
                    source.host, source.path, source.size, source.mtime_ns, len(items), outcome.added
                )
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return outcome


def _write_one(
    store: Store, writer: Writer, t: Transcript, project: str | None, expect_host: str | None
) -> TranscriptOutcome:
    conn = store.connection
    if expect_host is not None:
        other = conn.execute(
            "SELECT host FROM sessions WHERE external_id = ? AND host != ? LIMIT 1", (t.external_id, t.host)
        ).fetchone()
        if other is not None:
            raise ConflictingSource(
                f"session {t.external_id} is already stored from {other['host']}, not {t.host}; "
                f"dump it with --source {other['host']} or give another --session-id"
            )
    row = conn.execute(
        "SELECT id, project FROM sessions WHERE host = ? AND external_id = ?", (t.host, t.external_id)
    ).fetchone()
    session_values = _session_values(t)
    if row is None:
        name = project or resolve_project(t.cwd)
        session_id = writer.insert("sessions", {"project": name, **session_values}, Provenance.VERBATIM)
        result = TranscriptOutcome(session_id, t.external_id, name, new_session=True)
        existing: dict[str, tuple[str, int]] = {}
    else:
        session_id, name = row["id"], row["project"]
        result = TranscriptOutcome(session_id, t.external_id, name, new_session=False)
        _refresh_session(conn, writer, session_id, session_values)
        existing = {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT external_id, content_hash, ordinal FROM messages WHERE session_id = ?", (session_id,)
            )
        }
    next_ordinal = max((ordinal for _, ordinal in existing.values()), default=-1) + 1
    new_rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for message in t.messages:
        if message.key in seen:
            continue
        seen.add(message.key)
        digest = message_hash(message)
        stored = existing.get(message.key)
        if stored is None:
            new_rows.append(_message_values(name, session_id, next_ordinal, message, digest))
            next_ordinal += 1
        elif stored[0] != digest:
            values = _message_values(name, session_id, stored[1], message, digest)
            writer.update(
                "messages",
                _message_id(conn, session_id, message.key),
                {
                    k: values[k]
                    for k in ("content", "content_hash", "origin", "kind", "tool_name", "timestamp", "meta")
                },
            )
            result.updated += 1
            result.updated_keys.append(message.key)
    result.added = writer.insert_many("messages", new_rows, Provenance.VERBATIM, columns=_MESSAGE_COLUMNS)
    return result


def _written(outcome: BatchOutcome, items: list[Transcript]) -> list[Written]:
    """Every session of the batch, with its messages in hand: the connect stage reads what is new."""
    return [
        Written(session.session_id, {m.key: m for m in t.messages}, tuple(session.updated_keys))
        for session, t in zip(outcome.sessions, items, strict=True)
    ]


def _session_values(t: Transcript) -> dict[str, Any]:
    return {
        "host": t.host,
        "external_id": t.external_id,
        "parent_external_id": t.parent_external_id,
        "agent_id": t.agent_id,
        "title": t.title,
        "cwd": t.cwd,
        "git_branch": t.git_branch,
        "model": t.model,
        "started_at": t.started_at,
        "ended_at": t.ended_at,
        "source_path": t.source_path,
        "meta": t.meta,
    }


def _refresh_session(conn: Any, writer: Writer, session_id: int, values: dict[str, Any]) -> None:
    """Update what a later read knows better (end time, title, model); never blank a known field.

    A title is replaced by a later one: hosts rename sessions (Claude Code ``/rename``, Codex thread
    names), and the adapter hands over the best title the whole transcript states. The other fields
    only fill blanks: a session's folder or branch as first seen is what its messages were about.
    """
    current = dict(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone())
    changes: dict[str, Any] = {}
    if values["title"] and values["title"] != current["title"]:
        changes["title"] = values["title"]
    for column in ("cwd", "git_branch", "model", "parent_external_id", "agent_id", "source_path"):
        if values[column] and not current[column]:
            changes[column] = values[column]
    for column, later in (("started_at", False), ("ended_at", True)):
        new = to_db_time(values[column])
        old = current[column]
        if new and (not old or (new > old if later else new < old)):
            changes[column] = values[column]
    if changes:
        writer.update("sessions", session_id, changes)


def _message_values(
    project: str, session_id: int, ordinal: int, m: TranscriptMessage, digest: str
) -> dict[str, Any]:
    return {
        "project": project,
        "session_id": session_id,
        "external_id": m.key,
        "ordinal": ordinal,
        "role": m.role.value,
        "origin": m.origin.value,
        "kind": m.kind.value,
        "tool_name": m.tool_name,
        "content": m.text,
        "timestamp": m.timestamp,
        "content_hash": digest,
        "meta": m.meta,
    }


def _message_id(conn: Any, session_id: int, key: str) -> int:
    return int(
        conn.execute(
            "SELECT id FROM messages WHERE session_id = ? AND external_id = ?", (session_id, key)
        ).fetchone()[0]
    )


def _link_parents(store: Store) -> None:
    """Resolve parent links whose parent arrived in this or an earlier import."""
    store.connection.execute(
        """UPDATE sessions SET parent_id = (
               SELECT p.id FROM sessions p
               WHERE p.host = sessions.host AND p.external_id = sessions.parent_external_id)
           WHERE parent_id IS NULL AND parent_external_id IS NOT NULL"""
    )
