"""OpenCode, every storage era: the JSON tree, ``opencode.db`` (1.2+, 2.x) and the Go version's database.

Ground truth (shared/ref/more-hosts.md §1):

- The data dir is ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode`` on every platform
  (OpenCode uses xdg-basedir, so macOS and Windows too). ``OPENCODE_DB`` names another database
  (absolute, or relative to the data dir; ``:memory:`` keeps none); release channels other than
  the default write ``opencode-<channel>.db``, so every ``opencode*.db`` there is read.
- Up to 1.1.x sessions are JSON files (``adapters._opencode_json``); 1.2.0 moved them into SQLite
  (``adapters._opencode_db``) with a one-time migration that is known to drop sessions. Both are
  read: a JSON session whose id a database beside it also holds is left to the database, the others
  are read from their files. The Go OpenCode kept one database per project in
  ``<project>/.opencode/opencode.db`` (``adapters._opencode_go``); the folder recall runs in and its
  parents are searched for one, and ``--path`` reads any other.
- A JSON session is one source spread over many files; ``signature`` covers them all.
- A file ``opencode export`` wrote is read when it is named (``--path``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from adapters._draft import SessionDraft
from adapters._files import walk_files
from adapters._jsonl import home_dir
from adapters._opencode_db import SESSION_TABLES, read_database, session_ids
from adapters._opencode_go import GO_TABLES, read_go_database
from adapters._opencode_json import (
    data_dir_of,
    is_export,
    is_session_file,
    read_export,
    read_session_file,
    session_id_of,
    signature,
)
from adapters._opencode_parts import HOST
from adapters._sqlite import Unreadable, failure_reason, open_readonly, table_names
from adapters.base import ReadOptions
from recall.transcript import ParseReport, Transcript

DB_ENV = "OPENCODE_DB"
GO_DATABASE = Path(".opencode") / "opencode.db"
_PRUNED = frozenset(
    {"message", "part", "snapshot", "session_diff", "todo", "session_share", "tool-output", "log", "bin",
     "node_modules", ".git"}
)  # fmt: skip


class OpenCodeAdapter:
    name = HOST
    env_vars = ("XDG_DATA_HOME", DB_ENV)

    def locations(self) -> list[Path]:
        """The data dir, and the Go version's folder in the project recall runs in."""
        data = data_dir()
        return [*([data] if data is not None else []), Path.cwd() / GO_DATABASE.parent]

    def default_roots(self) -> list[Path]:
        roots: list[Path] = []
        data = data_dir()
        if data is not None and data.is_dir():
            roots.append(data)
        configured = configured_database(data)
        if configured is not None and configured.is_file():
            roots.append(configured)  # whatever its name, and wherever it is
        cwd = Path.cwd()
        roots += [folder / GO_DATABASE for folder in (cwd, *cwd.parents) if (folder / GO_DATABASE).is_file()]
        return roots

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[Path]:
        """Databases first, then the JSON sessions that no database in the same data dir holds."""
        found = sorted(
            {path for root in (self.default_roots() if roots is None else roots) for path in _walk(root)}
        )
        databases = [path for path in found if _is_database(path)]
        configured = configured_database(data_dir())
        stored: dict[Path, set[str]] = {}
        for database in databases:  # OPENCODE_DB stands in for the data dir's opencode.db
            folder = data_dir() if database == configured else database.parent
            stored.setdefault(folder or database.parent, set()).update(_stored_sessions(database))
        yield from databases
        for path in found:
            if not _is_database(path) and session_id_of(path) not in stored.get(data_dir_of(path), ()):
                yield path

    def claims(self, path: Path) -> bool:
        """``opencode*.db``, the database ``OPENCODE_DB`` names, a JSON-era session file or an export."""
        if is_session_file(path) or is_export(path):
            return True
        if path.name.startswith("opencode") and path.name.endswith(".db"):
            return True
        return path == configured_database(data_dir())

    def signature(self, path: Path) -> tuple[int, int] | None:
        """A JSON session's signature over all its files; None (the file alone) for a database."""
        return signature(path) if is_session_file(path) else None

    def read(self, path: Path, options: ReadOptions, report: ParseReport) -> Iterator[Transcript]:
        for session in self._sessions(path, options, report, None):
            transcript = session.freeze()
            if transcript is not None:
                yield transcript

    def read_session(self, session_id: str, options: ReadOptions, report: ParseReport) -> list[Transcript]:
        """One session and its subagents, wherever they are stored: a hook names only the session id."""
        found: dict[str, Transcript] = {}
        for path in self.discover():
            if not _is_database(path) and not (path.parent / f"{session_id}.json").is_file():
                continue  # a JSON session that is neither this one nor one beside it (a subagent's)
            for session in self._sessions(path, options, report, session_id):
                transcript = session.freeze()
                if transcript is None or session_id not in (
                    transcript.external_id,
                    transcript.parent_external_id,
                ):
                    continue
                if transcript.external_id not in found:
                    found[transcript.external_id] = transcript
        return list(found.values())

    def _sessions(
        self, path: Path, options: ReadOptions, report: ParseReport, only: str | None
    ) -> Iterator[SessionDraft]:
        if is_session_file(path) or is_export(path):
            read = read_session_file if is_session_file(path) else read_export
            session = read(path, options, report)
            if session is not None:
                yield session
            return
        try:
            with open_readonly(path) as conn:
                tables = table_names(conn)
                if GO_TABLES <= tables:
                    yield from read_go_database(conn, path, options, report, only)
                elif tables & set(SESSION_TABLES):
                    yield from read_database(conn, tables, str(path), options, report, only)
                else:
                    report.skip("unknown_shape", f"{path}: no OpenCode tables in {sorted(tables)}")
        except Unreadable as exc:
            report.skip(exc.reason, str(exc))
        except sqlite3.Error as exc:
            report.skip(failure_reason(exc), f"{path}: {exc}")


def data_dir() -> Path | None:
    """``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``; None when no home resolves."""
    configured = os.environ.get("XDG_DATA_HOME", "").strip()
    if configured:
        return Path(configured).expanduser() / "opencode"
    home = home_dir()
    return home / ".local" / "share" / "opencode" if home is not None else None


def configured_database(data: Path | None) -> Path | None:
    """``$OPENCODE_DB``: absolute, or relative to the data dir; None when unset or in memory."""
    value = os.environ.get(DB_ENV, "").strip()
    if not value or value == ":memory:":
        return None
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    return data / path if data is not None else None


def _walk(root: Path) -> Iterator[Path]:
    if root.is_file():
        return iter([root])
    return walk_files(root, _is_source, _PRUNED)


def _is_source(path: Path) -> bool:
    name = path.name
    return (name.startswith("opencode") and name.endswith(".db")) or is_session_file(path)


def _is_database(path: Path) -> bool:
    """Every source but a JSON session or an export is a database (``OPENCODE_DB`` may name it anything)."""
    return not is_session_file(path) and not is_export(path)


def _stored_sessions(database: Path) -> set[str]:
    """Session ids a 1.2+ database holds; one that cannot be read now claims none."""
    try:
        with open_readonly(database) as conn:
            tables = table_names(conn)
            return session_ids(conn, tables) if not GO_TABLES <= tables else set()
    except (Unreadable, sqlite3.Error):
        return set()


ADAPTER = OpenCodeAdapter()
