"""One line per hook run in ``log_path()``: what `recall doctor` reads to say whether capture works.

A hook's stdout belongs to the agent and its failures must not reach the user's screen, so the log
is the only place a hook can report. Lines are tab-separated (time, hook, status, milliseconds,
message) and appended with one write each, so hooks running at the same time do not interleave.
The file is rotated to ``recall.log.1`` past 1 MB, and like every file recall writes it is 0600.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from recall.config import log_path
from recall.private_files import open_private

MAX_BYTES = 1_000_000
STATUSES = ("ok", "skipped", "error")


@dataclass(frozen=True, slots=True)
class LogEntry:
    at: datetime
    hook: str  # "dump" | "context"
    status: str  # "ok" | "skipped" | "error"
    millis: int
    message: str


def write(hook: str, status: str, message: str, millis: int) -> None:
    """Append one line; a log that cannot be written is not worth failing a hook over."""
    path = log_path()
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    flat = " ".join(message.split())
    try:
        if path.exists() and path.stat().st_size > MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
        with open_private(path, append=True) as handle:
            handle.write(f"{stamp}\t{hook}\t{status}\t{millis}\t{flat}\n".encode("utf-8", "replace"))
    except OSError:
        pass


def read(since: datetime, path: Path | None = None) -> Iterator[LogEntry]:
    """Hook runs logged at or after ``since``, oldest first; lines of another shape are passed over."""
    try:
        lines = (path or log_path()).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split("\t", 4)
        if len(parts) != 5 or parts[2] not in STATUSES or not parts[3].isdigit():
            continue
        try:
            at = datetime.fromisoformat(parts[0])
        except ValueError:
            continue
        if at >= since:
            yield LogEntry(at, parts[1], parts[2], int(parts[3]), parts[4])
