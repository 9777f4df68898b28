"""OpenCode's JSON storage (to 1.1.x), and the file ``opencode export`` writes.

Ground truth (anomalyco/opencode ``storage/storage.ts``; shared/ref/more-hosts.md §1):

- Era B (mid-2025 – 1.1.x): ``storage/session/<projectID>/<ses>.json``, ``storage/message/<ses>/
  <msg>.json``, ``storage/part/<msg>/<prt>.json``. Era A (earlier builds): ``project/<slug>/storage/
  session/info/<ses>.json``, ``.../session/message/<ses>/<msg>.json``, ``.../session/part/<ses>/<msg>/
  <prt>.json``. File names are the record ids, which sort in creation order. Some third-party copies
  keep parts loose in ``storage/part/*.json``, naming their message in ``messageID``.
- A session is one source made of many files. Parts are rewritten in place while the model streams
  (some builds write a temporary file and rename it), so what changed is told by a signature over
  every file of the session (``signature``): the total size and the newest modification time.
- ``opencode export [session]`` (every era) prints one session as ``{info, messages: [{info, parts}],
  todos}``: the same records with the same ids, so an exported session already imported from the
  host's own storage adds nothing. Such a file is read when it is named (``--path``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters._draft import SessionDraft
from adapters._files import SIDE_FILE_MAX_BYTES, open_regular
from adapters._jsonl import scrub_object_surrogates
from adapters._opencode_parts import add_message, session_draft
from adapters.base import ReadOptions
from recall.transcript import ParseReport

_EXPORT_HEAD = re.compile(rb'\s*\{\s*"info"\s*:\s*\{[^{]*?"id"\s*:\s*"ses_')


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where one session's message and part files are."""

    message_dir: Path
    part_root: Path  # part files are in <part_root>/<message id>/
    loose_parts: Path | None  # era B also tolerates parts lying loose in storage/part/


def is_session_file(path: Path) -> bool:
    """``storage/session/<projectID>/<ses>.json`` (era B) or ``.../session/info/<ses>.json`` (era A)."""
    if not path.name.endswith(".json"):
        return False
    if path.parent.name == "info" and path.parent.parent.name == "session":
        return True
    return path.parent.parent.name == "session" and path.parent.parent.parent.name == "storage"


def data_dir_of(path: Path) -> Path:
    """The OpenCode data dir a session file belongs to (``<data>/storage/...`` or ``<data>/project/...``)."""
    if path.parent.name == "info":  # <data>/project/<slug>/storage/session/info/<ses>.json
        return path.parents[5]
    return path.parents[3]  # <data>/storage/session/<projectID>/<ses>.json


def session_id_of(path: Path) -> str:
    """The session id a session file's name gives (``ses_….json``); its ``id`` field can differ."""
    return path.name.removesuffix(".json")


def _layout(path: Path, session_id: str) -> _Layout:
    if path.parent.name == "info":  # era A: .../storage/session/info/<ses>.json
        base = path.parent.parent
        return _Layout(base / "message" / session_id, base / "part" / session_id, None)
    storage = path.parent.parent.parent
    return _Layout(storage / "message" / session_id, storage / "part", storage / "part")


def signature(path: Path) -> tuple[int, int]:
    """(total size, newest mtime) of the session file and every message and part file of it."""
    info = path.stat()
    size, newest = info.st_size, info.st_mtime_ns
    layout = _layout(path, _session_id(path) or session_id_of(path))
    for message in _files(layout.message_dir):
        for file in (message, *_files(layout.part_root / message.name.removesuffix(".json"))):
            stat = file.stat()
            size, newest = size + stat.st_size, max(newest, stat.st_mtime_ns)
    return size, newest


def read_session_file(path: Path, options: ReadOptions, report: ParseReport) -> SessionDraft | None:
    """The session a session file names, with every message and part found for it."""
    info = load(path, report)
    if info is None:
        return None
    session = session_draft(info, str(path))
    layout = _layout(path, session.external_id)
    loose = _LooseParts(layout.loose_parts, report)
    for message_file in _files(layout.message_dir):
        message = load(message_file, report)
        if message is None:
            continue
        raw_id = message.get("id")
        message_id = raw_id if isinstance(raw_id, str) else message_file.stem
        parts = [p for f in _files(layout.part_root / message_id) if (p := load(f, report)) is not None]
        try:
            add_message(session, message_id, message, parts or loose.of(message_id), options, report)
        except (AttributeError, TypeError, ValueError) as exc:
            report.skip("bad_record", f"{message_file}: {exc!r}")
    return session


def is_export(path: Path) -> bool:
    """A ``.json`` outside the storage layout that starts as ``opencode export`` output does:
    ``{"info": {... "id": "ses_…``."""
    if not path.name.endswith(".json") or is_session_file(path):
        return False
    try:
        with open_regular(path) as stream:
            head = stream.read(4096)
    except OSError:
        return False
    return _EXPORT_HEAD.match(head) is not None


def read_export(path: Path, options: ReadOptions, report: ParseReport) -> SessionDraft | None:
    """The session an ``opencode export`` file holds."""
    exported = load(path, report)
    if exported is None:
        return None
    info, messages = exported.get("info"), exported.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        report.skip("not_an_export", str(path))
        return None
    session = session_draft(info, str(path))
    for index, item in enumerate(messages):
        message = item.get("info") if isinstance(item, dict) else None
        parts = item.get("parts") if isinstance(item, dict) else None
        message_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(message_id, str) or not isinstance(parts, list):
            report.skip("bad_record", f"{path}: message {index}")
            continue
        try:
            add_message(
                session, message_id, message, [p for p in parts if isinstance(p, dict)], options, report
            )
        except (AttributeError, TypeError, ValueError) as exc:
            report.skip("bad_record", f"{path}: message {index}: {exc!r}")
    return session


def load(path: Path, report: ParseReport) -> dict[str, Any] | None:
    """One record file as an object; None (counted) when unreadable, torn or not an object."""
    try:
        with open_regular(path) as stream:
            data = stream.read(SIDE_FILE_MAX_BYTES + 1)
    except OSError as exc:
        report.skip("unreadable", f"{path}: {exc}")
        return None
    report.lines_read += 1
    if len(data) > SIDE_FILE_MAX_BYTES:
        report.skip("oversized_file", str(path))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        report.skip("invalid_utf8", str(path))
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        report.skip("bad_json" if text.strip() else "empty_file", str(path))  # mid-rewrite: read again later
        return None
    if not isinstance(record, dict):
        report.skip("not_object", str(path))
        return None
    if "\\ud" in text.lower() and scrub_object_surrogates(record):
        report.skip("lone_surrogate", str(path))
    return record


def _session_id(path: Path) -> str | None:
    try:
        with open_regular(path) as stream:
            record = json.loads(stream.read(SIDE_FILE_MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    session_id = record.get("id") if isinstance(record, dict) else None
    return session_id if isinstance(session_id, str) and session_id else None


def _files(folder: Path) -> list[Path]:
    """The ``*.json`` files directly in ``folder``, by name (= by id = by creation); [] if none."""
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".json") and e.is_file())
    except OSError:
        return []


class _LooseParts:
    """Parts lying loose in ``storage/part/`` (third-party copies), indexed on first need."""

    def __init__(self, folder: Path | None, report: ParseReport) -> None:
        self.folder = folder
        self.report = report
        self.by_message: dict[str, list[dict[str, Any]]] | None = None

    def of(self, message_id: str) -> list[dict[str, Any]]:
        if self.folder is None:
            return []
        if self.by_message is None:
            self.by_message = {}
            for path in _files(self.folder):
                part = load(path, self.report)
                owner = part.get("messageID") if part is not None else None
                if isinstance(owner, str):
                    self.by_message.setdefault(owner, []).append(part)  # type: ignore[arg-type]
        return self.by_message.get(message_id, [])
