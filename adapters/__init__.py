"""Host adapters: Claude Code, Cursor, Codex, OpenCode, Pi and Gemini CLI readers, looked up by name.

Each module exposes one ``ADAPTER`` object (see ``adapters.base.HostAdapter``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.base import HostAdapter

HOSTS: dict[str, str] = {
    "claude": "adapters.claude_code",
    "cursor": "adapters.cursor",
    "codex": "adapters.codex",
    "opencode": "adapters.opencode",
    "pi": "adapters.pi",
    "gemini": "adapters.gemini",
}


def where_searched(adapter: HostAdapter) -> str:
    """The folders a host's transcripts are looked for in, and the variables that move them."""
    folders = ", ".join(str(path) for path in adapter.locations()) or "no home folder"
    return f"{adapter.name}: {folders} (set {' or '.join(adapter.env_vars)} to look elsewhere)"


def get_adapter(name: str) -> HostAdapter:
    """The adapter for ``name``; a ValueError names the supported hosts."""
    try:
        module_name = HOSTS[name]
    except KeyError:
        raise ValueError(f"unknown host {name!r}; choose one of: {', '.join(HOSTS)}") from None
    adapter: HostAdapter = import_module(module_name).ADAPTER
    return adapter
