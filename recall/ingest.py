"""`recall import`: find every host's transcripts, read the changed ones, store them.

The importer is incremental and idempotent at two levels. A file whose size and mtime match the
last import is not opened at all; a file that changed is read again and the store upserts on
per-message natural keys, so only new messages are written, in short transactions with the file's
stamp in the last (adr/0016). A reader that fails on one file is counted and reported; the rest
still import. Summaries and vectors that an interrupted run left undone are finished here too.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.heap import roomy_heap
from recall.pathnames import path_text, printable
from recall.summary_queue import write_due_summaries
from recall.transcript import ParseReport, Transcript

if TYPE_CHECKING:
    from adapters.base import HostAdapter, ReadOptions
    from recall.extract.stage import ExtractionReport
    from recall.read_ahead import ReadAhead, ReadSource
    from recall.search.embedder import Embedder
    from recall.store import Store
    from recall.store.transcripts import BatchOutcome, Ready, SourceStamp
    from recall.summary import DraftAhead

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
    non_utf8_names: int = 0
    redactions: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    summaries: int = 0
    links: int = 0  # entity links added: what messages and records touched (recall.connections)
    dry_run: bool = False
    embedding: dict[str, Any] = field(default_factory=dict)
    searched: list[str] = field(default_factory=list)  # where transcripts were looked for, when none were
    extraction: ExtractionReport | None = None
    read_ahead: dict[str, Any] = field(default_factory=dict)  # files a worker read, its CPU seconds
    # Working state, not reported: summaries the worker drafted, for ``write_due_summaries``.
    summaries_ahead: dict[int, DraftAhead] = field(default_factory=dict, repr=False, compare=False)

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
            "non_utf8_names": self.non_utf8_names,
            "redactions": dict(self.redactions.most_common()),
            "errors": [printable(error) for error in self.errors[:20]],
            "dry_run": self.dry_run,
            "embedding": self.embedding,
            "searched": self.searched,
            "extraction": self.extraction.to_dict() if self.extraction else {},
            "read_ahead": self.read_ahead,
        }


def collect_sources(
    adapters: Sequence[HostAdapter],
    paths: Sequence[Path] | None,
    since: datetime | None,
    summary: ImportSummary | None = None,
    *,
    sniff: bool = False,
) -> list[tuple[HostAdapter, Path]]:
    """Every (adapter, file) pair to consider, newest-changed last so partial runs keep order.

    What discovery passes over (FIFOs, sockets, devices, symlink loops, unreadable folders) and the
    names that are not UTF-8 are counted in ``summary``. With ``sniff`` (files someone named, host
    not given) a file goes only to an adapter that recognises its format, so one file is one source,
    read by the right host.
    """
    from adapters._files import discovery_report

    with discovery_report() as found:
        sources = _discover(adapters, paths, since, sniff)
    if summary is not None:
        summary.skipped.update(found.skipped)
        summary.non_utf8_names += found.non_utf8_names
        summary.errors.extend(found.details[:5])
    return sources


def _discover(
    adapters: Sequence[HostAdapter], paths: Sequence[Path] | None, since: datetime | None, sniff: bool
) -> list[tuple[HostAdapter, Path]]:
    sources: list[tuple[HostAdapter, Path]] = []
    for adapter in adapters:
        for path in adapter.discover(list(paths) if paths else None):
            if sniff and not adapter.claims(path):
                continue
            if since is not None:
                try:
                    if path.stat().st_mtime < since.timestamp():
                        continue
                except OSError:
                    pass
            sources.append((adapter, path))
    return sources


@roomy_heap()
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
    sniff: bool = False,
    embedder: Embedder | None = None,
    embed_budget_seconds: float = 5.0,
    read_ahead: bool | None = None,
) -> ImportSummary:
    """Import every changed source, write the summaries due, then embed what is pending for at most
    ``embed_budget_seconds``.

    Summaries and vectors that an earlier run left undone (it was killed) are finished here too;
    whatever the budget leaves (everything, without an ``embedder``) is embedded later by
    `recall embed` (or the next import). With many files to read, a worker process reads the next
    ones while this one writes (recall.read_ahead; ``read_ahead`` forces it on or off).
    """
    from adapters.base import ReadOptions
    from recall.store.entities import connect_pending

    if paths:
        missing = [path_text(p) for p in paths if not p.exists()]
        if missing:
            raise InvalidInput(f"no such file or folder: {', '.join(missing)}")
    read_options = options or ReadOptions()
    summary = ImportSummary(dry_run=dry_run)
    sources = collect_sources(adapters, paths, since, summary, sniff=sniff)
    if not sources and not paths:
        from adapters import where_searched

        summary.searched = [where_searched(adapter) for adapter in adapters]
    with _reader(store, sources, read_options, force, read_ahead) as ahead, store.commit_group():
        for done, (adapter, path) in enumerate(sources):
            if progress:
                progress(done, len(sources), path_text(path))
            read = ahead.take(adapter, path) if ahead is not None else None
            if read is not None:
                _count_read_ahead(summary, read)
            _import_file(
                store,
                adapter,
                path,
                summary,
                read_options,
                since=since,
                project=project,
                force=force,
                read=read,
                ahead=ahead,
            )
    if progress:
        progress(len(sources), len(sources), "")
    if not dry_run:
        summary.summaries = write_due_summaries(store, summary.summaries_ahead)
        summary.links += connect_pending(store)
    if (
        embedder is not None
        and embed_budget_seconds > 0
        and not dry_run
        and (summary.messages_added or _anything_pending(store, embedder))
    ):
        summary.embedding = _embed_within(store, embedder, embed_budget_seconds)
    return summary


@contextmanager
def _reader(
    store: Store,
    sources: Sequence[tuple[HostAdapter, Path]],
    options: ReadOptions,
    force: bool,
    wanted: bool | None,
) -> Iterator[ReadAhead | None]:
    """A read-ahead worker for the sources to read, when they are many and a core is idle (or
    ``wanted`` says so)."""
    from recall.read_ahead import MIN_FILES, ReadAhead, eligible, has_spare_core, read_in_parts

    if wanted is False:
        yield None
        return
    to_read = [(a, p) for a, p in eligible(sources) if force or not _unchanged(store, a, p)]
    few = len(to_read) < 2 or (wanted is None and len(to_read) < MIN_FILES)
    if not to_read or (few and not any(read_in_parts(path) for _, path in to_read)):
        yield None
        return
    if wanted is None and not has_spare_core():  # measured last: it takes 50 ms
        yield None
        return
    in_parts = read_in_parts(to_read[0][1])
    # The first file is read here while the worker starts, unless it is read in parts: then the
    # worker reads it from its start, and this process stores each part as it comes.
    with ReadAhead(to_read if in_parts else to_read[1:], options, store.path) as ahead:
        yield ahead


def _count_read_ahead(summary: ImportSummary, read: ReadSource) -> None:
    from recall.read_ahead import SHARE_NAMES

    counts = summary.read_ahead
    counts["files"] = counts.get("files", 0) + 1
    shares, name = counts.setdefault("files_by_share", {}), SHARE_NAMES[read.share]
    shares[name] = shares.get(name, 0) + 1
    counts["worker_cpu_seconds"] = round(counts.get("worker_cpu_seconds", 0.0) + read.cpu_seconds, 3)


def _unchanged(store: Store, adapter: HostAdapter, path: Path) -> bool:
    try:
        return store.known_source(adapter.name, source_key(path)) == source_signature(adapter, path)
    except OSError:
        return False


def _import_file(
    store: Store,
    adapter: HostAdapter,
    path: Path,
    summary: ImportSummary,
    options: ReadOptions,
    *,
    since: datetime | None,
    project: str | None,
    force: bool,
    read: ReadSource | None = None,
    ahead: ReadAhead | None = None,
) -> None:
    """Read one source unless it is unchanged, and store it; every failure is counted in ``summary``.

    ``read`` is the source as a read-ahead worker read it (its signature taken before its read), or
    its first part, the next ones coming from ``ahead``.
    """
    from recall.store.transcripts import SourceStamp

    summary.files_seen += 1
    try:
        size, mtime_ns = read.signature if read is not None else source_signature(adapter, path)
    except OSError as exc:
        summary.files_failed += 1
        summary.errors.append(f"{path}: {exc.strerror or exc}")
        return
    key = read.key if read is not None else source_key(path)
    if not force and store.known_source(adapter.name, key) == (size, mtime_ns):
        summary.files_unchanged += 1
        return
    stamp = SourceStamp(adapter.name, key, size, mtime_ns)
    if read is not None and not read.last and ahead is not None:
        _store_parts(store, adapter, path, stamp, summary, read, ahead, options, since=since, project=project)
        return
    if read is not None:
        _count_report(summary, path, read.report)
        _store(store, stamp, path, summary, *_kept(read, since), project=project)
        return
    here = _read_here(adapter, path, summary, options, since)
    if here is not None:
        _store(store, stamp, path, summary, here, None, project=project)


def _store_parts(
    store: Store,
    adapter: HostAdapter,
    path: Path,
    stamp: SourceStamp,
    summary: ImportSummary,
    read: ReadSource,
    ahead: ReadAhead,
    options: ReadOptions,
    *,
    since: datetime | None,
    project: str | None,
) -> None:
    """A source the worker reads in parts: each part is stored as it comes, and the source is stamped
    after the last. Should the worker fail partway, the source is read here whole: the plan finds
    the sessions stored so far and writes only the rest."""
    sessions = added = 0
    part: ReadSource | None = read
    while part is not None:
        transcripts, ready = _kept(part, since)
        outcome = _store(store, None, path, summary, transcripts, ready, project=project)
        if outcome is None:
            return
        sessions, added = sessions + len(transcripts), added + outcome.added
        if part.last:
            _count_report(summary, path, part.report)
            break
        part = ahead.take(adapter, path)
        if part is not None:
            _count_read_ahead(summary, part)
    else:  # the worker failed partway
        here = _read_here(adapter, path, summary, options, since)
        outcome = None if here is None else _store(store, None, path, summary, here, None, project=project)
        if here is None or outcome is None:
            return
        sessions, added = len(here), added + outcome.added
    if not summary.dry_run:
        store.stamp_source(stamp, sessions=sessions, messages=added)


def _kept(read: ReadSource, since: datetime | None) -> tuple[list[Transcript], list[Ready]]:
    kept = [(t, r) for t, r in zip(read.transcripts, read.ready, strict=True) if _after(t, since)]
    return [t for t, _ in kept], [r for _, r in kept]


def _read_here(
    adapter: HostAdapter, path: Path, summary: ImportSummary, options: ReadOptions, since: datetime | None
) -> list[Transcript] | None:
    """The source read in this process; None (counted as failed) when its reader raised."""
    report = ParseReport()
    try:
        transcripts = [t for t in adapter.read(path, options, report) if _after(t, since)]
    except Exception as exc:  # a reader bug must not stop the other files
        log.exception("reading %s failed", path)
        summary.files_failed += 1
        summary.errors.append(f"{path}: {type(exc).__name__}: {exc}")
        return None
    _count_report(summary, path, report)
    return transcripts


def _count_report(summary: ImportSummary, path: Path, report: ParseReport) -> None:
    summary.files_read += 1
    summary.lines_read += report.lines_read
    summary.skipped.update(report.skipped)
    summary.errors.extend(e if e.startswith(str(path)) else f"{path}: {e}" for e in report.errors[:5])


def _store(
    store: Store,
    stamp: SourceStamp | None,
    path: Path,
    summary: ImportSummary,
    transcripts: list[Transcript],
    ready: list[Ready] | None,
    *,
    project: str | None,
) -> BatchOutcome | None:
    """Store transcripts (stamping ``stamp`` after them); None, counted as failed, when that failed."""
    try:
        outcome = store_transcripts(
            store, transcripts, summary, project=project, source=stamp, dry_run=summary.dry_run, ready=ready
        )
    except (sqlite3.IntegrityError, ValueError, UnicodeError) as exc:
        # The failing transaction rolled back and the file stays unstamped: the next import tries it
        # again, and the next files still import.
        log.exception("storing %s failed", path)
        summary.files_failed += 1
        summary.errors.append(f"{path}: could not store: {type(exc).__name__}: {exc}")
        return None
    _add(summary, outcome)
    return outcome


def source_key(path: Path) -> str:
    """How ``source_files`` names a source: its resolved path, as storable text (recall.pathnames)."""
    return path_text(path.resolve())


def _anything_pending(store: Store, embedder: Embedder) -> bool:
    """Whether rows wait for vectors (a killed `recall embed` or import); False without a model."""
    from recall.errors import ModelUnavailable
    from recall.search.semantic import has_pending

    try:
        return has_pending(store, embedder)
    except ModelUnavailable:
        return False


def _embed_within(store: Store, embedder: Embedder, budget: float) -> dict[str, Any]:
    from recall.errors import ModelUnavailable
    from recall.search.semantic import embed_pending

    try:
        return embed_pending(store, embedder, budget_seconds=budget).to_dict()
    except ModelUnavailable as exc:
        return {"embedded": 0, "error": str(exc)}


def source_signature(adapter: HostAdapter, path: Path) -> tuple[int, int]:
    """(size, mtime) of everything the source is read from: the adapter's own signature when its
    source spans several files (``adapters.base.SpreadSource``), else the file's."""
    from adapters.base import SpreadSource

    spread = adapter.signature(path) if isinstance(adapter, SpreadSource) else None
    return spread if spread is not None else file_signature(path)


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
    outcome = store_transcripts(
        store, transcripts, summary, project=project, expect_host=expect_host, source=source
    )
    _add(summary, outcome)
    return summary


@roomy_heap()
def store_transcripts(
    store: Store,
    transcripts: Iterable[Transcript],
    summary: ImportSummary,
    *,
    project: str | None = None,
    expect_host: str | None = None,
    source: SourceStamp | None = None,
    dry_run: bool = False,
    ready: Sequence[Ready] | None = None,
) -> BatchOutcome:
    """Store one batch of transcripts, run extraction over its sessions that hold messages extraction
    has not read, then stamp the source. A kill before the stamp leaves the file to be read again,
    and the sessions its messages went to are extracted then.

    Every import and dump stores messages through here, so this is the one place the post-import
    stage runs: it reads the messages back from the store, already scrubbed (recall.extract).
    """
    from recall.extract.backfill import unread_sessions
    from recall.extract.stage import ExtractionReport, extract_sessions

    items = list(transcripts)
    # A small batch commits once, with its neighbours in a group: messages, extraction, stamp (adr/0046).
    rows = sum(len(t.messages) for t in items)
    with store.one_commit(rows) if not dry_run else nullcontext():
        outcome = store.import_transcripts(
            items, project=project, expect_host=expect_host, dry_run=dry_run, ready=ready
        )
        ids = [s.session_id for s in outcome.sessions if s.session_id is not None]
        changed = unread_sessions(store, ids) if ids and not dry_run else []
        if changed:
            summary.extraction = summary.extraction or ExtractionReport()
            summary.extraction.merge(extract_sessions(store, changed, ahead=outcome.extraction_ahead))
        summary.summaries_ahead.update(outcome.summary_ahead)
        if source is not None and not dry_run:
            # Stamped last: a file is "imported" only once what is derived from it is written too.
            store.stamp_source(source, sessions=len(items), messages=outcome.added)
    return outcome


def _add(summary: ImportSummary, outcome: Any) -> None:
    for session in outcome.sessions:
        if session.new_session:
            summary.sessions_new += 1
        elif session.added or session.updated:
            summary.sessions_updated += 1
    summary.messages_added += outcome.added
    summary.messages_updated += outcome.updated
    summary.links += outcome.links
    summary.redactions.update(outcome.redactions)
    summary.skipped.update(outcome.forgotten)


def _after(transcript: Transcript, since: datetime | None) -> bool:
    if since is None:
        return True
    last = transcript.ended_at or transcript.started_at
    return last is None or last >= since
