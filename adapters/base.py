"""What a host adapter is: a reader of one host's files that yields plain transcripts.

Adding a host means one module with an object satisfying ``HostAdapter`` plus its recorded fixtures
under ``tests/fixtures/transcripts/<host>/``; nothing else changes. Adapters never write: the store
does, so scrubbing and provenance cannot be skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from recall.transcript import ParseReport, Transcript

DEFAULT_TOOL_TEXT_CAP = 2000


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How much of a transcript to keep; the defaults favour a small, searchable store."""

    tool_text_cap: int = DEFAULT_TOOL_TEXT_CAP  # tool calls and results are cut to this many characters
    include_thinking: bool = False  # model "thinking" is kept only when the user asks for it


class HostAdapter(Protocol):
    name: str  # "claude" | "cursor" | "codex" | "opencode" | "pi" | "gemini"
    env_vars: tuple[str, ...]  # the environment variables that move this host's data

    def locations(self) -> list[Path]:
        """Every folder where this host may keep transcripts here, existing or not (for hints)."""
        ...

    def default_roots(self) -> list[Path]:
        """Where this host keeps transcripts on this machine (Linux, macOS, Windows; env overrides)."""
        ...

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        """Every readable source (a JSONL file, a state.vscdb, ...) under ``roots`` or the defaults.

        A root may itself be a single file. Sources are yielded in a stable order. Walk folders with
        ``adapters._files.walk_files`` and open files with ``open_regular``: they never open a FIFO,
        socket or device, end symlink loops, and count what they pass over (adr/0016).
        """
        ...

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        """Parse one source into transcripts; bad lines are counted in ``report``, never raised."""
        ...

    def claims(self, path: Path) -> bool:
        """Whether a file someone named is in this host's format (a cheap look at its name and first
        lines), so ``recall import --path FILE`` reads it with the right adapter and no other."""
        ...


SNIFF_BYTES = 65_536


def first_objects(path: Path, count: int = 8) -> list[dict[str, Any]]:
    """The first JSON objects of a JSONL file, for telling formats apart; unreadable lines are skipped."""
    from adapters._files import open_regular

    try:
        with open_regular(path) as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return []
    found: list[dict[str, Any]] = []
    for line in head.splitlines()[:count]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


@runtime_checkable
class SpreadSource(Protocol):
    """An adapter whose one source spans several files: an OpenCode JSON-era session is a session file
    plus one file per message and per part, rewritten in place while the model streams.

    ``signature`` is ``(size, mtime_ns)`` over all of them, so the importer's unchanged-file skip sees
    a grown or rewritten part though the session file itself did not change; None when ``path`` is a
    source of one file. Such files, and every source of adapters without ``signature``, are signed by
    the file alone (plus a SQLite ``-wal``).
    """

    def signature(self, path: Path) -> tuple[int, int] | None: ...


@runtime_checkable
class SessionLookup(Protocol):
    """An adapter that can read one session by its id: OpenCode keeps no file per session, so its
    hook names only the session, and reading the whole database for it would read every session."""

    def read_session(
        self, session_id: str, options: ReadOptions, report: ParseReport
    ) -> list[Transcript]: ...
