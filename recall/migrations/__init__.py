"""Numbered, append-only schema migrations, applied when a store is opened (adr/0003).

Each step is a module ``mNNNN_<name>.py`` holding ``SQL``; the database's ``PRAGMA user_version``
records the last step applied. A step that has shipped is never edited: changes are new steps.
Steps run inside one ``BEGIN IMMEDIATE`` transaction each, so a crash mid-step leaves the old schema.
"""

from __future__ import annotations

import pkgutil
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from recall.errors import StoreUnavailable

_NAME = re.compile(r"^m(\d{4})_\w+$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str
    # A step SQL alone cannot express (m0018 rewrites stored table definitions), run after ``sql``
    # in the same transaction.
    apply: Callable[[sqlite3.Connection], None] | None = None


def load_migrations() -> list[Migration]:
    steps: list[Migration] = []
    for info in pkgutil.iter_modules(__path__):
        match = _NAME.match(info.name)
        if not match:
            continue
        module = import_module(f"{__name__}.{info.name}")
        steps.append(Migration(int(match.group(1)), info.name, module.SQL, getattr(module, "apply", None)))
    steps.sort(key=lambda m: m.version)
    for expected, step in enumerate(steps, start=1):
        if step.version != expected:
            raise RuntimeError(f"migration numbering has a gap or duplicate at {step.name}")
    return steps


def latest_version() -> int:
    return len(load_migrations())


def split_statements(sql: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies (which contain ``;``) whole."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def migrate(conn: sqlite3.Connection, target: int | None = None) -> int:
    """Bring the database up to ``target`` (default: latest); returns the version reached."""
    steps = load_migrations()
    target = len(steps) if target is None else target
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > len(steps):
        raise StoreUnavailable(
            f"the database schema is version {current}, newer than this recall understands "
            f"(version {len(steps)}); upgrade recall (pip install -U recall-memory)"
        )
    for step in steps[current:target]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied this step while we waited for the write lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= step.version:
                conn.execute("COMMIT")
                continue
            for statement in split_statements(step.sql):
                conn.execute(statement)
            if step.apply is not None:
                step.apply(conn)
            conn.execute(f"PRAGMA user_version = {step.version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return max(current, target)
