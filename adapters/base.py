"""What a host adapter is: a reader of one host's files that yields plain transcripts.

Adding a host means one module with an object satisfying ``HostAdapter`` plus its recorded fixtures
under ``tests/fixtures/transcripts/<host>/``; nothing else changes. Adapters never write: the store
does, so scrubbing and provenance cannot be skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from recall.transcript import ParseReport, Transcript

DEFAULT_TOOL_TEXT_CAP = 2000


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How much of a transcript to keep; the defaults favour a small, searchable store."""

    tool_text_cap: int = DEFAULT_TOOL_TEXT_CAP  # tool calls and results are cut to this many characters
    include_thinking: bool = False  # model "thinking" is kept only when the user asks for it


class HostAdapter(Protocol):
    name: str  # "claude" | "cursor" | "codex"

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
