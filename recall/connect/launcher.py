"""How agents start recall, and how recall recognises its own entries in their config files.

Every entry names recall by absolute path and pins the database with ``--db``, so Claude Code, Cursor,
VS Code and Codex all read and write the same file whatever their PATH or working directory. In a
project's own config files the MCP server also gets ``RECALL_PROJECT=<project>``: an MCP server may
be started from the user's home folder, where the project cannot be told from the working directory.
User-level (``--global``) entries serve every project, so they pin no project and the server names
it from its working directory like every other recall command.

Recognition is by shape, not by a marker we would have to add to other tools' schemas: an MCP server
whose command is recall and whose arguments end in ``mcp``; a hook command that runs recall's
``dump --from-hook`` or ``context --hook``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall.config import PROJECT_ENV

DUMP_HOOK = ("dump", "--from-hook")
CONTEXT_HOOK = ("context", "--hook")

_RECALL_TOKEN = re.compile(r"""(?:^|[\s/\\"'])recall(?:\.exe)?["']?(?:\s|$)|-m\s+recall\b""")


@dataclass(frozen=True, slots=True)
class Setup:
    """What one `recall connect` run pins for every agent it touches."""

    db_path: Path  # absolute
    root: Path  # the project's root folder (git root, else the working directory)
    home: Path
    project: str | None  # pinned in project-scoped MCP entries; None for user-level ones
    launcher: tuple[str, ...]  # argv prefix that runs recall
    global_scope: bool = False
    remote: str | None = None  # a team server (`recall serve`): agents talk to it over HTTP instead

    def argv(self, *args: str) -> list[str]:
        return [*self.launcher, "--db", str(self.db_path), *args]

    def mcp_entry(self, *, with_type: bool, token_header: str = "", url_key: str = "url") -> dict[str, Any]:
        """The JSON MCP server entry (``type: stdio`` for hosts whose schema carries it); with a
        remote, the team server's URL (under ``url_key``) and a bearer header the host fills from
        ``RECALL_TOKEN`` in its own syntax (``token_header``), so the token itself never lands in
        a project file."""
        if self.remote:
            remote: dict[str, Any] = {"type": "http"} if with_type else {}
            remote[url_key] = remote_mcp_url(self.remote)
            remote["headers"] = {"Authorization": token_header or TOKEN_HEADER}
            return remote
        command, *args = self.argv("mcp")
        entry: dict[str, Any] = {"type": "stdio"} if with_type else {}
        entry.update(command=command, args=args)
        if self.project:
            entry["env"] = {PROJECT_ENV: self.project}
        return entry

    def hook_command(self, verb: tuple[str, ...], *extra: str) -> str:
        return shell_join(self.argv(*verb, *extra))


def default_launcher() -> tuple[str, ...]:
    """The ``recall`` script beside this interpreter, else the one on PATH, else ``python -m recall``."""
    name = "recall.exe" if os.name == "nt" else "recall"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return (str(beside),)
    found = shutil.which("recall")
    if found:
        return (str(Path(found).absolute()),)
    return (sys.executable, "-m", "recall")


def shell_join(argv: Sequence[str]) -> str:
    """A command line for hosts that run hooks through a shell."""
    return subprocess.list2cmdline(argv) if os.name == "nt" else shlex.join(argv)


TOKEN_ENV = "RECALL_TOKEN"
TOKEN_HEADER = "Bearer ${RECALL_TOKEN}"  # Claude Code, VS Code, Gemini CLI, Pi expand ${VAR}
# The same header in the other hosts' syntax: Cursor ``${env:VAR}``, OpenCode ``{env:VAR}``.
CURSOR_TOKEN_HEADER = "Bearer ${env:RECALL_TOKEN}"
OPENCODE_TOKEN_HEADER = "Bearer {env:RECALL_TOKEN}"
TOKEN_HEADERS = frozenset({TOKEN_HEADER, CURSOR_TOKEN_HEADER, OPENCODE_TOKEN_HEADER})


def remote_mcp_url(remote: str) -> str:
    return remote.rstrip("/") + "/mcp"


def is_recall_server(entry: Any) -> bool:
    """An MCP server entry (JSON object or TOML table) that starts recall's own server, or that
    points at a team server with recall's token header (`recall connect --remote`)."""
    url = entry.get("url", entry.get("httpUrl")) if isinstance(entry, dict) else None
    if isinstance(entry, dict) and isinstance(url, str):
        if entry.get("bearer_token_env_var") == TOKEN_ENV:  # Codex's TOML table
            return True
        headers = entry.get("headers")
        return isinstance(headers, dict) and headers.get("Authorization") in TOKEN_HEADERS
    argv = server_argv(entry)
    return len(argv) > 1 and argv[-1] == "mcp" and _runs_recall(argv)


def server_argv(entry: Any) -> list[str]:
    """The command line of an MCP server entry: ``command`` + ``args``, or OpenCode's ``command``
    list; [] for an entry of any other shape."""
    if not isinstance(entry, dict):
        return []
    command = entry.get("command")
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        return list(command)
    if not isinstance(command, str):
        return []
    args = entry.get("args")
    return [command, *(str(arg) for arg in (args if isinstance(args, list) else []))]


def is_recall_hook(command: Any, verb: tuple[str, ...]) -> bool:
    """A hook command line (a string, or Codex's argv list) that runs ``recall <verb>``."""
    if isinstance(command, list):
        if not all(isinstance(part, str) for part in command):
            return False
        argv = command
    elif isinstance(command, str):
        argv = command.split()
    else:
        return False
    joined = " ".join(argv)
    return _runs_recall(argv) and f" {' '.join(verb)}" in f" {joined}"


def _runs_recall(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    return bool(_RECALL_TOKEN.search(" ".join(argv))) or Path(argv[0].strip("\"'")).stem == "recall"


def describe_server(entry: Any, db_path: Path) -> str:
    """In plain words: is this entry recall, and does it use this database?"""
    if entry is None:
        return "not connected"
    if not is_recall_server(entry):
        return 'not connected (another server is named "recall")'
    url = entry.get("url", entry.get("httpUrl")) if isinstance(entry, dict) else None
    if isinstance(url, str):
        return f"connected to the team server {url}"
    args = server_argv(entry)[1:]
    pinned = args[args.index("--db") + 1] if "--db" in args[:-1] else None
    if pinned is None or Path(pinned) == db_path:
        return "connected"
    return f"connected to another database ({pinned})"
