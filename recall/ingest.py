"""`recall import`: find every host's transcripts, read the changed ones, store them.

The importer is incremental and idempotent at two levels. A file whose size and mtime match the
last import is not opened at all; a file that changed is read again and the store upserts on
per-message natural keys, so only new messages are written. Each file is one transaction. A reader
that fails on one file is counted and reported; the rest still import.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.transcript import ParseReport, Transcript

if TYPE_CHECKING:
    from adapters.base import HostAdapter, ReadOptions
    from recall.store import Store
    from recall.store.transcripts import SourceStamp

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]  # (files done, files total, current path)


@dataclass(slots=True)
class ImportSummary:
    """What an import did, for people (`recall import`) and scripts (`--json`)."""

    files_seen: int = 0
    files_unchanged: int = 0
    files_read: int = 0
    files_failed: int = 0
    sessions_new: int = 0
    sessions_updated: int = 0
    messages_added: int = 0
    messages_updated: int = 0
    lines_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    redactions: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    session_ids: list[int] = field(default_factory=list)
    changed_sessions: list[int] = field(default_factory=list)
    summaries: int = 0
    links: int = 0  # entity links added: what messages and records touched (recall.connections)
    dry_run: bool = False
    embedding: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": {
                "seen": self.files_seen,
                "unchanged": self.files_unchanged,
                "read": self.files_read,
                "failed": self.files_failed,
            },
            "sessions": {"new": self.sessions_new, "updated": self.sessions_updated},
            "messages": {"added": self.messages_added, "updated": self.messages_updated},
            "summaries": self.summaries,
            "links": self.links,
            "lines_read": self.lines_read,
            "skipped": dict(self.skipped.most_common()),
            "redactions": dict(self.redactions.most_common()),
            "errors": self.errors[:20],
            "dry_run": self.dry_run,
            "embedding": self.embedding,
        }


def collect_sources(
    adapters: Sequence[HostAdapter], paths: Sequence[Path] | None, since: datetime | None
) -> list[tuple[HostAdapter, Path]]:
    """Every (adapter, file) pair to consider, newest-changed last so partial runs keep order."""
    sources: list[tuple[HostAdapter, Path]] = []
    for adapter in adapters:
        for path in adapter.discover(list(paths) if paths else None):
            if since is not None:
                try:
                    if path.stat().st_mtime < since.timestamp():
                        continue
                except OSError:
                    pass
            sources.append((adapter, path))
    return sources


def run_import(
    store: Store,
    adapters: Sequence[HostAdapter],
    *,
    paths: Sequence[Path] | None = None,
    since: datetime | None = None,
    project: str | None = None,
    dry_run: bool = False,
    force: bool = False,
    options: ReadOptions | None = None,
    progress: Progress | None = None,
    embed_budget_seconds: float = 5.0,
) -> ImportSummary:
    """Import every changed source, then embed new messages for at most ``embed_budget_seconds``.

    Whatever the budget leaves is embedded later by `recall embed` (or the next import).
    """
    from adapters.base import ReadOptions
    from recall.store.entities import connect_pending
    from recall.store.transcripts import SourceStamp

    if paths:
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise InvalidInput(f"no such file or folder: {', '.join(missing)}")
    options = options or ReadOptions()
    summary = ImportSummary(dry_run=dry_run)
    sources = collect_sources(adapters, paths, since)
    for done, (adapter, path) in enumerate(sources):
        if progress:
            progress(done, len(sources), str(path))
        summary.files_seen += 1
        try:
            size, mtime_ns = file_signature(path)
        except OSError as exc:
            summary.files_failed += 1
            summary.errors.append(f"{path}: {exc.strerror or exc}")
            continue
        key = str(path.resolve())
        if not force and store.known_source(adapter.name, key) == (size, mtime_ns):
            summary.files_unchanged += 1
            continue
        report = ParseReport()
        try:
            transcripts = [t for t in adapter.read(path, options, report) if _after(t, since)]
        except Exception as exc:  # a reader bug must not stop the other files
            log.exception("reading %s failed", path)
            summary.files_failed += 1
            summary.errors.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        summary.files_read += 1
        summary.lines_read += report.lines_read
        summary.skipped.update(report.skipped)
        summary.errors.extend(f"{path}: {e}" for e in report.errors[:5])
        try:
            outcome = store.import_transcripts(
                transcripts,
                project=project,
                source=SourceStamp(adapter.name, key, size, mtime_ns),
                dry_run=dry_run,
            )
        except (sqlite3.IntegrityError, ValueError, UnicodeError) as exc:
            # The file's transaction rolled back whole; the next files still import.
            log.exception("storing %s failed", path)
            summary.files_failed += 1
            summary.errors.append(f"{path}: could not store: {type(exc).__name__}: {exc}")
            continue
        _add(summary, outcome)
    if progress:
        progress(len(sources), len(sources), "")
    if not dry_run:
        summary.summaries = summarise_sessions(store, summary.changed_sessions)
        summary.links += connect_pending(store)
    if embed_budget_seconds > 0 and not dry_run and summary.messages_added:
        summary.embedding = _embed_within(store, embed_budget_seconds)
    return summary


def summarise_sessions(store: Store, session_ids: Iterable[int]) -> int:
    """Write or refresh the derived summary of each top-level session that gained messages."""
    from recall.summary import build_summary

    written = 0
    for session_id in dict.fromkeys(session_ids):
        with store.reading() as conn:
            row = conn.execute(
                "SELECT title, parent_external_id FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None or row["parent_external_id"]:
            continue  # subagents and forks are summarised through their parent's messages
        messages = store.session_messages(session_id)
        if not messages:
            continue
        store.write_summary(session_id, build_summary(row["title"], messages), embed=False)
        written += 1
    return written


def _embed_within(store: Store, budget: float) -> dict[str, Any]:
    from recall.errors import ModelUnavailable
    from recall.search.semantic import embed_pending

    try:
        return embed_pending(store, store.embedder, budget_seconds=budget).to_dict()
    except ModelUnavailable as exc:
        return {"embedded": 0, "error": str(exc)}


def file_signature(path: Path) -> tuple[int, int]:
    """(size, mtime) of a source, counting its SQLite write-ahead log: a live Cursor database keeps
    new chats in ``-wal`` until a checkpoint, with the main file unchanged."""
    stat = path.stat()
    size, mtime_ns = stat.st_size, stat.st_mtime_ns
    wal = path.with_name(path.name + "-wal")
    try:
        wal_stat = wal.stat()
    except OSError:
        return size, mtime_ns
    return size + wal_stat.st_size, max(mtime_ns, wal_stat.st_mtime_ns)


def import_transcripts_now(
    store: Store,
    transcripts: Iterable[Transcript],
    *,
    project: str | None = None,
    expect_host: str | None = None,
    summary: ImportSummary | None = None,
    source: SourceStamp | None = None,
) -> ImportSummary:
    """Store transcripts that are already in hand (dumps, benchmarks), counted like an import.

    ``source`` records the file they were read from, so the next `recall import` skips it unchanged.
    """
    summary = summary or ImportSummary()
    outcome = store.import_transcripts(transcripts, project=project, expect_host=expect_host, source=source)
    _add(summary, outcome)
    return summary


def _add(summary: ImportSummary, outcome: Any) -> None:
    for session in outcome.sessions:
        if session.new_session:
            summary.sessions_new += 1
        elif session.added or session.updated:
            summary.sessions_updated += 1
        summary.session_ids.append(session.session_id)
        if session.added or session.updated:
            summary.changed_sessions.append(session.session_id)
    summary.messages_added += outcome.added
    summary.messages_updated += outcome.updated
    summary.links += outcome.links
    summary.redactions.update(outcome.redactions)


def _after(transcript: Transcript, since: datetime | None) -> bool:
    if since is None:
        return True
    last = transcript.ended_at or transcript.started_at
    return last is None or last >= since
