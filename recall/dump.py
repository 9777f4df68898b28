"""`recall dump`: store the session that just ended, and a summary of it.

With a host recall reads (``recall.sources.READ_HOSTS``) the host's own transcript is read natively:
the file a hook names, the session a hook names by id (OpenCode keeps no file per session), or the
newest session of the current project. With ``mcp``, or a host recall has no reader for (``grok``,
``jcode``, ``omp``), the caller's explicit ``{role, content, timestamp?}`` messages are stored, under
that host. Both go through the same import path, so dumping a session that an import already holds
adds only what is missing, and a session held under another host is refused.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput, NotFound
from recall.ingest import ImportSummary, import_transcripts_now, source_key, source_signature
from recall.pathnames import printable
from recall.project import resolve_project
from recall.sources import DUMP_SOURCES, READ_HOSTS
from recall.store.transcripts import SourceStamp
from recall.summary_queue import summarise_session
from recall.transcript import Origin, ParseReport, Role, Transcript, TranscriptMessage

if TYPE_CHECKING:
    from recall.store import Store

MAX_EXPLICIT_MESSAGES = 5_000
NEWEST_FILES_TO_TRY = 40


@dataclass(slots=True)
class DumpResult:
    session_id: int
    external_id: str
    project: str
    summary_id: int
    messages_added: int
    sessions: int
    redactions: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "external_id": self.external_id,
            "project": self.project,
            "summary_id": self.summary_id,
            "messages_added": self.messages_added,
            "sessions": self.sessions,
            "redactions": self.redactions,
            "skipped": self.skipped,
        }


def dump_session(
    store: Store,
    *,
    title: str | None,
    source: str = "mcp",
    project: str | None = None,
    session_id: str | None = None,
    path: Path | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    cwd: str | None = None,
) -> DumpResult:
    if source not in DUMP_SOURCES:
        raise InvalidInput(f"unknown source {source!r}; use one of: {', '.join(DUMP_SOURCES)}")
    cwd = cwd or os.getcwd()
    report = ParseReport()
    stamp: SourceStamp | None = None
    if source not in READ_HOSTS:
        if not messages:
            reader = "" if source == "mcp" else f"recall has no {source} reader: "
            raise InvalidInput(
                f"{reader}give the session's messages: a JSON list of {{role, content, timestamp?}}"
            )
        host = "mcp" if source == "mcp" else source
        transcripts = [explicit_transcript(messages, session_id=session_id, cwd=cwd, title=title, host=host)]
    else:
        if messages:
            raise InvalidInput(
                f"--source {source} reads the host's transcript; explicit messages need --source mcp"
            )
        if path is not None and path.exists():
            stamp = _stamp(source, path)  # taken before reading: a growing file stays "changed"
        wanted, found = _host_transcripts(source, path, session_id, project or resolve_project(cwd), report)
        transcripts = _with_children(_main_transcript(wanted, session_id), found)
    main = transcripts[0]
    summary = ImportSummary()
    import_transcripts_now(
        store, transcripts, project=project, expect_host=main.host, summary=summary, source=stamp
    )
    with store.reading() as conn:
        row = conn.execute(
            "SELECT id, project, title FROM sessions WHERE host = ? AND external_id = ?",
            (main.host, printable(main.external_id)),
        ).fetchone()
    if row is None:
        raise NotFound(
            f"{main.host} session {main.external_id} was forgotten (recall forget), so it is not stored again"
        )
    summary_id = summarise_session(store, row["id"], title=title)
    if summary_id is None:
        raise NotFound(f"session {main.external_id} holds no messages to summarise")
    return DumpResult(
        session_id=row["id"],
        external_id=main.external_id,
        project=row["project"],
        summary_id=summary_id,
        messages_added=summary.messages_added,
        sessions=len(transcripts),
        redactions=dict(summary.redactions),
        skipped=dict(report.skipped),
    )


def explicit_transcript(
    messages: Sequence[dict[str, Any]],
    *,
    session_id: str | None,
    cwd: str,
    title: str | None,
    host: str = "mcp",
) -> Transcript:
    """Turn caller-supplied messages into a transcript whose keys survive a re-dump with more messages."""
    if len(messages) > MAX_EXPLICIT_MESSAGES:
        raise InvalidInput(
            f"{len(messages):,} messages is more than one dump takes ({MAX_EXPLICIT_MESSAGES:,})"
        )
    parsed: list[TranscriptMessage] = []
    occurrences: dict[str, int] = {}
    for index, raw in enumerate(messages):
        if not isinstance(raw, dict):
            raise InvalidInput(f"message {index} is not an object with role and content")
        role_text = str(raw.get("role", "")).strip().lower()
        try:
            role = Role(role_text)
        except ValueError:
            raise InvalidInput(
                f"message {index}: role must be user, assistant, system or tool, not {role_text!r}"
            ) from None
        content = raw.get("content")
        if not isinstance(content, str) or not content.strip():
            raise InvalidInput(f"message {index}: content must be non-empty text")
        timestamp = _parse_time(raw.get("timestamp"), index)
        digest = hashlib.blake2b(
            f"{role}\x1f{timestamp}\x1f{content}".encode(errors="replace"), digest_size=12
        )
        origin = {Role.USER: Origin.HUMAN, Role.ASSISTANT: Origin.AGENT, Role.TOOL: Origin.TOOL}.get(
            role, Origin.INJECTED
        )
        # The same words said twice are two messages; counting repeats keeps keys stable on re-dumps.
        key = digest.hexdigest()
        occurrences[key] = occurrences.get(key, 0) + 1
        if occurrences[key] > 1:
            key = f"{key}-{occurrences[key]}"
        parsed.append(TranscriptMessage(key, role, content, timestamp, origin))
    times = [m.timestamp for m in parsed if m.timestamp]
    return Transcript(
        host=host,
        external_id=session_id or f"dump-{uuid.uuid4()}",
        messages=tuple(parsed),
        cwd=cwd,
        title=title,
        started_at=min(times) if times else datetime.now(UTC),
        ended_at=max(times) if times else datetime.now(UTC),
    )


def _host_transcripts(
    host: str, path: Path | None, session_id: str | None, project: str, report: ParseReport
) -> tuple[list[Transcript], list[Transcript]]:
    """(the sessions that could be the one dumped, every session read from the same source)."""
    from adapters import get_adapter
    from adapters.base import ReadOptions, SessionLookup

    adapter = get_adapter(host)
    options = ReadOptions()
    if path is None and session_id and isinstance(adapter, SessionLookup):
        transcripts = adapter.read_session(session_id, options, report)
        if not transcripts:
            raise NotFound(f"no {host} session {session_id} was found; check `recall doctor`")
        return transcripts, transcripts
    if path is not None:
        if not path.exists():
            raise InvalidInput(f"no transcript at {path}")
        transcripts = list(adapter.read(path, options, report))
        if not transcripts:
            raise NotFound(f"{path} holds no {host} session (skipped: {dict(report.skipped) or 'nothing'})")
        return transcripts, transcripts
    candidates = sorted(adapter.discover(None), key=_mtime, reverse=True)[:NEWEST_FILES_TO_TRY]
    for candidate in candidates:
        transcripts = list(adapter.read(candidate, options, ParseReport()))
        wanted = [
            t for t in transcripts
            if (session_id and t.external_id == session_id)
            or (not session_id and resolve_project(t.cwd) == project)
        ]  # fmt: skip
        if wanted:
            return wanted, transcripts
    target = f"session {session_id}" if session_id else f"project {project!r}"
    raise NotFound(
        f"no recent {host} transcript for {target}; pass the transcript file with --path "
        f"(a hook's transcript_path) or check `recall doctor`"
    )


def _main_transcript(transcripts: Sequence[Transcript], session_id: str | None) -> Transcript:
    """The session being dumped: the one named, else the candidate root that was active last."""
    if session_id:
        for transcript in transcripts:
            if transcript.external_id == session_id:
                return transcript
        raise NotFound(f"no session {session_id} in that transcript")
    roots = [t for t in transcripts if t.parent_external_id is None] or list(transcripts)
    return max(roots, key=_last_activity)


def _last_activity(transcript: Transcript) -> datetime:
    return transcript.ended_at or transcript.started_at or datetime.min.replace(tzinfo=UTC)


def _with_children(main: Transcript, transcripts: Sequence[Transcript]) -> list[Transcript]:
    """The main session and its subagents; other sessions in the same file (Cursor) are not dumped."""
    children = [t for t in transcripts if t.parent_external_id == main.external_id and t is not main]
    return [main, *children]


def _parse_time(value: Any, index: int) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInput(
            f"message {index}: timestamp must be ISO 8601 text or epoch seconds, not {value!r}"
        )
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"message {index}: timestamp {value!r} is not a usable time") from None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"message {index}: cannot read timestamp {value!r}; use ISO 8601") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _stamp(host: str, path: Path) -> SourceStamp:
    """The source the dumped file is remembered as, so the next import skips it while unchanged."""
    from adapters import get_adapter

    size, mtime_ns = source_signature(get_adapter(host), path)
    return SourceStamp(host, source_key(path), size, mtime_ns)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
