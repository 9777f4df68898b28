"""Cursor: every place Cursor keeps chats, read without ever writing, as plain transcripts.

Ground truth (``shared/ref/transcript-formats.md`` §3). Cursor has two storage stacks:

- the IDE's SQLite ``state.vscdb`` files in ``<User>/globalStorage/`` and
  ``<User>/workspaceStorage/<id>/`` (chat panel, inline and split composers:
  ``adapters._cursor_vscdb``), where ``<User>`` is ``~/.config/Cursor/User`` on Linux
  (``$XDG_CONFIG_HOME`` honoured; ``~/.cursor-server/data/User`` on a Remote-SSH host),
  ``~/Library/Application Support/Cursor/User`` on macOS and ``%APPDATA%/Cursor/User`` on Windows;
- ``~/.cursor`` (``%USERPROFILE%/.cursor``): agent transcripts under ``projects/*/agent-transcripts/``
  (``adapters._cursor_transcripts``) and Store chats ``chats/<md5(cwd)>/<id>/store.db`` or
  ``acp-sessions/<id>/store.db`` with ``meta.json`` (``adapters._cursor_store``).

``RECALL_CURSOR_ROOTS`` (paths joined with ``os.pathsep``) replaces the default roots.

One session can be stored more than once: an IDE composer also writes an agent transcript, and the
Store keeps a transcript beside its ``store.db``. Their message keys cannot agree, so ``discover``
yields one source per session id: a composer in a database wins over ``~/.cursor`` files with its id;
then a ``.jsonl`` transcript, then a ``.txt`` one, then ``store.db``. Transcripts win over the Store
because their format is known from many parsers while the Store's blob graph is not yet confirmed on
real data (§3.3); the transcript reader still takes title, model, times and cwd from the Store.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from adapters._cursor_messages import HOST
from adapters._cursor_store import STORE_TABLES, read_store_db
from adapters._cursor_transcripts import TRANSCRIPTS_DIR, read_jsonl, read_txt, session_ids
from adapters._cursor_vscdb import composer_ids, read_state_db
from adapters._files import walk_files
from adapters._jsonl import home_dir
from adapters._sqlite import Unreadable, failure_reason, open_readonly, table_names
from adapters.base import ReadOptions
from recall.transcript import ParseReport, Transcript

ROOTS_ENV = "RECALL_CURSOR_ROOTS"

_DATABASE_NAMES = frozenset({"state.vscdb", "store.db"})
_TRANSCRIPT_SUFFIXES = (".jsonl", ".txt")  # in order of preference for one session
_VSCDB_TABLES = frozenset({"ItemTable", "cursorDiskKV"})
_SKIPPED_DIRS = frozenset({"extensions", "History", "logs", "CachedData", "node_modules", ".git"})


class CursorAdapter:
    name = HOST

    env_vars = (ROOTS_ENV, "XDG_CONFIG_HOME", "APPDATA")

    def locations(self) -> list[Path]:
        return self.default_roots()

    def default_roots(self) -> list[Path]:
        override = os.environ.get(ROOTS_ENV)
        if override:
            return [Path(p).expanduser() for p in override.split(os.pathsep) if p]
        home = home_dir()
        if home is None:
            return []
        if sys.platform == "darwin":
            user_dirs = [home / "Library" / "Application Support" / "Cursor" / "User"]
        elif sys.platform == "win32":
            user_dirs = [Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Cursor" / "User"]
        else:
            config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
            user_dirs = [config / "Cursor" / "User", home / ".cursor-server" / "data" / "User"]
        return [*user_dirs, home / ".cursor"]

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        found = sorted(
            {
                path
                for root in (self.default_roots() if roots is None else roots)
                for path in walk_files(Path(root), _is_source, _SKIPPED_DIRS)
            }
        )
        vscdbs = [path for path in found if path.suffix == ".vscdb"]
        composers = {cid for db in vscdbs for cid in _composer_ids(db)}
        chosen: dict[str, Path] = {}
        for path in found:
            if path.suffix == ".vscdb":
                continue
            session = session_ids(path)[0] if path.suffix in _TRANSCRIPT_SUFFIXES else path.parent.name
            if session not in composers and (session not in chosen or _rank(path) < _rank(chosen[session])):
                chosen[session] = path
        yield from sorted([*vscdbs, *chosen.values()])

    def claims(self, path: Path) -> bool:
        """Cursor's databases, and the agent transcripts under an ``agent-transcripts`` folder."""
        return _claims(path)

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        if path.suffix == ".jsonl":
            yield from read_jsonl(path, options, report)
        elif path.suffix == ".txt":
            yield from read_txt(path, options, report)
        else:
            yield from _read_database(path, options, report)


def _read_database(path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
    """A ``state.vscdb`` or ``store.db``, told apart by their tables rather than their names."""
    try:
        with open_readonly(path) as conn:
            tables = table_names(conn)
            if STORE_TABLES <= tables:
                yield from read_store_db(conn, path, options, report)
            elif tables & _VSCDB_TABLES:
                yield from read_state_db(conn, tables, path, options, report)
            else:
                report.skip("unknown_shape", f"{path}: no Cursor tables in {sorted(tables)}")
    except Unreadable as exc:
        report.skip(exc.reason, str(exc))
    except sqlite3.Error as exc:
        report.skip(failure_reason(exc), f"{path}: {exc}")


def _claims(path: Path) -> bool:
    return path.suffix == ".vscdb" or _is_source(path)


def _is_source(path: Path) -> bool:
    if path.name in _DATABASE_NAMES:
        return True
    return path.suffix in _TRANSCRIPT_SUFFIXES and TRANSCRIPTS_DIR in path.parts


def _composer_ids(database: Path) -> list[str]:
    """Composer ids a database holds; one that cannot be read now claims none (``read`` reports it)."""
    try:
        with open_readonly(database) as conn:
            return composer_ids(conn) if "cursorDiskKV" in table_names(conn) else []
    except (Unreadable, sqlite3.Error):
        return []


def _rank(path: Path) -> int:
    suffix = path.suffix
    return _TRANSCRIPT_SUFFIXES.index(suffix) if suffix in _TRANSCRIPT_SUFFIXES else len(_TRANSCRIPT_SUFFIXES)


ADAPTER = CursorAdapter()
