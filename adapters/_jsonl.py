"""Robust reading of append-only JSONL transcripts (Claude Code sessions, Codex rollouts).

Ground truth this reader is built for (shared/ref/transcript-formats.md §2.10, §4.9, §5):

- Both hosts append one JSON object per line and end every complete line with ``\\n``. A file that a
  host is still writing can end in a torn line; it is skipped (``torn_line``) and read on the next
  pass, once the host has finished it.
- Lines can be huge: a Claude ``toolUseResult`` embeds whole files, a Codex ``input_image`` data URL
  can be several MB. Lines up to ``MAX_LINE_BYTES`` are parsed (the adapters cap what they keep);
  longer ones are skipped without being held in memory.
- Text can be invalid UTF-8 (CESU-8 surrogate bytes included) or carry lone surrogates as
  ``\\ud800`` escapes, which SQLite cannot store. Both become U+FFFD and are counted; the rest of
  the line is kept. A byte-order mark on the first line is dropped.
- Codex compresses idle rollouts to ``.jsonl.zst`` (zstd magic ``28 B5 2F FD``). Python 3.11 has no
  zstd, so the optional ``zstandard`` package is imported only when such a file is met.
- A host that crashed between two appends can leave two JSON objects on one line with no newline
  between them (Pi v1 files, seen in real sessions). Readers that ask for it (``split_glued``) get
  both objects, each under that line's number; other readers count the line as ``bad_json``.
- Nothing here raises on bad input: every skipped line or file goes to ``ParseReport.skip``.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from adapters._files import NotRegularFile, open_regular
from recall.transcript import ParseReport

MAX_LINE_BYTES = 64 * 1024 * 1024  # longer lines are skipped unread (agentsview uses the same limit)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_READ_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, EOFError)
_NOT_JSON = object()
_T = TypeVar("_T")


def iter_records(
    path: Path, report: ParseReport, *, split_glued: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every complete, well-formed JSON object line of ``path``."""
    with ExitStack() as stack:
        opened = _open(path, report, stack)
        if opened is not None:
            yield from _records(*opened, path, report, split_glued)


def feed_records(
    path: Path,
    report: ParseReport,
    handle: Callable[[int, dict[str, Any]], None],
    *,
    split_glued: bool = False,
) -> None:
    """Give every record of ``path`` to ``handle``; a record of a shape no host version was seen to
    write is counted as ``bad_record`` and the rest of the file still reads."""
    for line_no, record in iter_records(path, report, split_glued=split_glued):
        try:
            handle(line_no, record)
        except (AttributeError, TypeError, ValueError) as exc:
            report.skip("bad_record", f"{path}:{line_no}: {exc!r}")


def _open(
    path: Path, report: ParseReport, stack: ExitStack
) -> tuple[IO[bytes], tuple[type[BaseException], ...]] | None:
    """The file as a byte stream (decompressed if it is zstd), and the errors reading it may raise."""
    try:
        raw = stack.enter_context(open_regular(path))
        magic = raw.read(4)
        raw.seek(0)
    except NotRegularFile as exc:
        report.skip(exc.kind, f"{path}: {exc.strerror}")
        return None
    except OSError as exc:
        report.skip("unreadable", f"{path}: {exc}")
        return None
    if magic != _ZSTD_MAGIC:
        return raw, _READ_ERRORS
    try:
        import zstandard
    except ImportError:
        report.skip("zstd_unavailable", f"{path}: install the 'zstandard' package to read .zst rollouts")
        return None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    stream = stack.enter_context(io.BufferedReader(reader, buffer_size=1 << 20))
    return stream, (*_READ_ERRORS, zstandard.ZstdError)


def _records(
    stream: IO[bytes],
    errors: tuple[type[BaseException], ...],
    path: Path,
    report: ParseReport,
    split_glued: bool,
) -> Iterator[tuple[int, dict[str, Any]]]:
    line_no = 0
    readline = stream.readline
    limit = MAX_LINE_BYTES
    loads = json.loads
    while True:
        try:
            raw = readline(limit + 1)
        except errors as exc:
            report.skip("read_error", f"{path}:{line_no + 1}: {exc}")
            return
        if not raw:
            if line_no == 0:
                report.skip("empty_file", str(path))
            return
        line_no += 1
        report.lines_read += 1
        if raw[-1:] != b"\n":
            if len(raw) > limit:
                _drain_line(readline, limit)
                report.skip("oversized_line", f"{path}:{line_no}: over {limit} bytes")
                continue
            report.skip("torn_line", f"{path}:{line_no}: no trailing newline (still being written?)")
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            report.skip("invalid_utf8", f"{path}:{line_no}")
        if line_no == 1 and text.startswith("\ufeff"):
            text = text[1:]
        try:
            obj = loads(text)
        except (ValueError, RecursionError):
            obj = _NOT_JSON
        if obj is _NOT_JSON and split_glued and (glued := glued_objects(text)) is not None:
            for part in glued:
                if (b"\\ud" in raw or b"\\uD" in raw) and scrub_object_surrogates(part):
                    report.skip("lone_surrogate", f"{path}:{line_no}")
                yield line_no, part
            continue
        if obj is _NOT_JSON:
            if raw.strip():
                report.skip("bad_json", f"{path}:{line_no}")
            else:
                report.skip("blank_line")
            continue
        if not isinstance(obj, dict):
            report.skip("not_object", f"{path}:{line_no}")
            continue
        if (b"\\ud" in raw or b"\\uD" in raw) and scrub_object_surrogates(obj):
            report.skip("lone_surrogate", f"{path}:{line_no}")
        yield line_no, obj


def glued_objects(text: str) -> list[dict[str, Any]] | None:
    """The JSON objects written back to back on one line, or None unless it is two or more objects
    and nothing else (a split at a literal ``}{`` would cut strings that contain one)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index, end = 0, len(text.rstrip())
    while index < end:
        while text[index] in " \t":
            index += 1
        try:
            obj, index = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        found.append(obj)
    return found if len(found) > 1 else None


def _drain_line(readline: Callable[[int], bytes], limit: int) -> None:
    while True:
        chunk = readline(limit + 1)
        if not chunk or chunk[-1:] == b"\n":
            return


def scrub_object_surrogates(obj: Any) -> bool:
    """Replace lone surrogates in every string (and key) of ``obj`` in place; True if any was found."""
    found = False
    items: list[tuple[Any, Any]] = []
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list):
        items = list(enumerate(obj))
    for key, value in items:
        if isinstance(value, str):
            fixed = scrub_surrogates(value)
            if fixed != value:
                obj[key] = fixed
                found = True
        elif isinstance(value, dict | list):
            found = scrub_object_surrogates(value) or found
        if isinstance(obj, dict) and isinstance(key, str) and _SURROGATE_RE.search(key):
            obj[scrub_surrogates(key)] = obj.pop(key)
            found = True
    return found


def text_or_none(value: object) -> str | None:
    """A non-empty string field, or None for anything else a newer or broken writer put there."""
    return value if isinstance(value, str) and value else None


def type_label(kind: object) -> str:
    """A record's ``type`` as it appears in skip reasons (``unknown_type:<label>``)."""
    if isinstance(kind, str):
        return kind
    return "<missing>" if kind is None else "<not a string>"


def line_timestamp(value: object, report: ParseReport, where: str) -> datetime | None:
    """A transcript line's timestamp; one that is present but unusable is counted as ``bad_timestamp``."""
    if value is None:
        return None
    when = parse_timestamp(value)
    if when is None:
        report.skip("bad_timestamp", f"{where}: {str(value)[:40]!r}")
    return when


def parse_timestamp(value: object) -> datetime | None:
    """An ISO-8601 string or epoch number as an aware UTC datetime; None if it is not one."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value  # hosts mix epoch seconds and milliseconds
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def existing_dirs(candidates: list[Path]) -> list[Path]:
    """The candidates that are directories, each once, in the given order."""
    seen: set[str] = set()
    found: list[Path] = []
    for candidate in candidates:
        ident = os.path.normcase(os.path.abspath(candidate))
        if ident not in seen and candidate.is_dir():
            seen.add(ident)
            found.append(candidate)
    return found


def home_dir() -> Path | None:
    """The user's home (``%USERPROFILE%`` on Windows), or None when it cannot be resolved."""
    try:
        return Path.home()
    except RuntimeError:
        return None


def scrub_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: SQLite cannot store them."""
    return _SURROGATE_RE.sub("\ufffd", text)


class FileCache(Generic[_T]):
    """Side files (session-title indexes) parsed once and kept until their size or mtime changes.

    Why: one import reads every transcript in a folder, and each would otherwise parse the same index
    again. Keying on ``(size, mtime_ns)``, the signature ``recall import`` itself uses to skip
    unchanged sources, means an append or a rewrite is picked up on the next look. ``load`` must not
    raise on bad content: it is the host's optional metadata and must never cost a transcript.
    """

    def __init__(self, load: Callable[[Path], _T]) -> None:
        self._load = load
        self._entries: dict[str, tuple[tuple[int, int], _T]] = {}

    def get(self, path: Path) -> _T | None:
        """The parsed file, or None when it is missing, unreadable or not a regular file."""
        key = os.path.normcase(os.path.abspath(path))
        try:
            info = path.stat()
        except (OSError, ValueError):  # ValueError: a path with a NUL byte
            self._entries.pop(key, None)
            return None
        if not stat.S_ISREG(info.st_mode):
            self._entries.pop(key, None)
            return None
        signature = (info.st_size, info.st_mtime_ns)
        cached = self._entries.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
        value = self._load(path)
        self._entries[key] = (signature, value)
        return value


def as_object(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: hosts leave fields out or change their shape."""
    return value if isinstance(value, dict) else {}
