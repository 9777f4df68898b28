"""Where recall keeps its files, and the environment variables that move them.

Precedence for the database: an explicit path (``--db``) > ``RECALL_DB`` > ``RECALL_HOME/recall.db``
> ``~/.recall/recall.db``. Tests point ``RECALL_HOME`` at a temporary folder so nothing touches the
user's real store.
"""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "RECALL_DB"
HOME_ENV = "RECALL_HOME"
MODEL_DIR_ENV = "RECALL_MODEL_DIR"
PROJECT_ENV = "RECALL_PROJECT"  # set by `recall connect` in each agent's MCP server entry


def recall_home() -> Path:
    """The folder for recall's own files (database, logs, config)."""
    override = os.environ.get(HOME_ENV)
    return Path(override).expanduser() if override else Path.home() / ".recall"


def default_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    return recall_home() / "recall.db"


def log_path() -> Path:
    """Failures of hooks and background work land here; `recall doctor` reads it."""
    return recall_home() / "recall.log"
