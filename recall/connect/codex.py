"""Codex CLI: ``[mcp_servers.recall]`` and ``notify`` in ``$CODEX_HOME/config.toml`` (``~/.codex``),
a ``SessionStart`` hook in ``hooks.json``.

Codex reads MCP servers from its user config for every project, so this entry is user-level in both
scopes and pins no project (the server names it from the folder Codex runs in).

Capture uses ``notify``: after every finished turn Codex runs that program with one JSON argument
(``{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd", ...}``), and
``recall dump --from-hook`` imports the rollout of that thread; only new lines are written, so a
session is captured turn by turn. ``notify`` holds one program; when another is already there it is
left alone and ``recall import --watch`` is the way to capture Codex sessions.

The brief uses Codex's lifecycle hooks, which take Claude Code's format and payloads: ``hooks.json``
beside a config layer (``<repo>/.codex/hooks.json`` for a project, ``$CODEX_HOME/hooks.json`` with
``--global``) gets a ``SessionStart`` group running ``recall context --hook``. Codex sends ``cwd`` and
``session_id`` on stdin and adds the ``hookSpecificOutput.additionalContext`` that command prints, as
Claude Code does. Codex runs a hook only once the user has reviewed and trusted it, and a project's
``.codex/`` only for a trusted project; older versions also need ``[features] codex_hooks = true``,
which is theirs to set.

The TOML is edited as text so that comments, order and formatting survive byte for byte; every edit
is checked by parsing the file before and after and comparing everything that is not ours.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

from recall.connect import hooklists, instructions, mcp_json, tomltext
from recall.connect.launcher import (
    CONTEXT_HOOK,
    DUMP_HOOK,
    TOKEN_ENV,
    Setup,
    describe_server,
    is_recall_hook,
    is_recall_server,
    remote_mcp_url,
    shell_join,
)
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "codex"
NOTIFY_COMMENT = "# recall: import each finished Codex turn (written by `recall connect --hooks`)"
SESSION_START = "SessionStart"
SESSION_START_TIMEOUT = 10  # seconds, as for Claude Code: the brief is read from the local database

_TABLE = re.compile(
    r'^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:recall|"recall")[ \t]*\][ \t]*(?:#.*)?$', re.MULTILINE
)
_NOTIFY = re.compile(r"^notify[ \t]*=[^\n]*(?:\n|\Z)", re.MULTILINE)


def home(setup_home: Path) -> Path:
    configured = os.environ.get("CODEX_HOME", "").strip()
    return Path(configured).expanduser() if configured else setup_home / ".codex"


def config_file(setup: Setup) -> Path:
    return home(setup.home) / "config.toml"


def hooks_files(setup: Setup) -> tuple[Path, Path]:
    """The project's and the user's ``hooks.json``: Codex runs the hooks of both in this project."""
    return setup.root / ".codex" / "hooks.json", home(setup.home) / "hooks.json"


def hooks_file(setup: Setup) -> Path:
    project, user = hooks_files(setup)
    return user if setup.global_scope else project


def detected(user_home: Path) -> bool:
    return home(user_home).is_dir()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    path = config_file(setup)
    found = [Step(NAME, "MCP server", path, remove_server if remove else lambda t: add_server(t, setup))]
    if hooks or remove:
        found.append(Step(NAME, "hooks", path, remove_notify if remove else lambda t: add_notify(t, setup)))
        found.append(
            Step(
                NAME,
                "hooks",
                hooks_file(setup),
                remove_session_start if remove else lambda t: add_session_start(t, setup),
                0 if setup.global_scope else 1,  # a project's .codex/ goes if recall made it
            )
        )
    if guidance or remove:
        target = home(setup.home) / "AGENTS.md" if setup.global_scope else setup.root / "AGENTS.md"
        found.append(
            Step(
                NAME, "instructions", target, instructions.remove_block if remove else instructions.add_block
            )
        )
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    found = [f"Codex reads MCP servers from {config_file(setup)} for every project."]
    if hooks:
        where = (
            "" if setup.global_scope else ", and reads a project's .codex/ only once you trust the project"
        )
        found.append(
            f"Codex runs the SessionStart hook in {hooks_file(setup)} (the brief) only after you review "
            f"and trust it in Codex{where}. Hooks are on by default in current Codex; older versions need "
            "`codex_hooks = true` under [features] in config.toml, which recall leaves to you."
        )
    return found


def add_server(text: str | None, setup: Setup) -> Change:
    current = text or ""
    data = tomltext.parse(current)
    existing = _server(data)
    wanted = _wanted(setup)
    if existing is None:
        lines = "".join(f"{key} = {value}\n" for key, value in wanted.items())
        return _checked(tomltext.append(current, f"[mcp_servers.recall]\n{lines}"), data, "added")
    if not is_recall_server(existing):
        raise Refused("it already has a different [mcp_servers.recall]; rename or remove it first")
    values = {key: tomltext.parse(f"v = {value}")["v"] for key, value in wanted.items()}
    stale = [key for key in _SERVER_KEYS if key in existing and key not in wanted]
    if not stale and all(existing.get(key) == value for key, value in values.items()):
        return Change(text, "unchanged")
    span = _table_span(current)
    if span is None:
        raise Refused("its mcp_servers.recall is not a [mcp_servers.recall] table that recall can edit")
    start, end = span
    body = current[start:end]
    for key in stale:
        body = tomltext.drop_line(body, key)
    for key, value in reversed(wanted.items()):  # a new line goes under the header: keep their order
        body = tomltext.set_line(body, key, value)
    return _checked(current[:start] + body + current[end:], data, "updated")


_SERVER_KEYS = ("command", "args", "url", "bearer_token_env_var")


def _wanted(setup: Setup) -> dict[str, str]:
    """recall's table, as TOML values: the local server, or with ``--remote`` the team server over
    streamable HTTP with the token Codex reads from ``RECALL_TOKEN`` (``bearer_token_env_var``)."""
    if setup.remote:
        return {
            "url": tomltext.string(remote_mcp_url(setup.remote)),
            "bearer_token_env_var": tomltext.string(TOKEN_ENV),
        }
    command, *args = setup.argv("mcp")
    return {"command": tomltext.string(command), "args": tomltext.array(args)}


def remove_server(text: str | None) -> Change:
    if text is None:
        return Change(text, "unchanged")
    data = tomltext.parse(text)
    span = _table_span(text)
    if not is_recall_server(_server(data)) or span is None:
        return Change(text, "unchanged")
    rest = tomltext.cut(text, *span)
    return _checked(rest, data, "removed") if rest.strip() else Change(None, "removed")


def add_notify(text: str | None, setup: Setup) -> Change:
    current = text or ""
    data = tomltext.parse(current)
    wanted = setup.argv(*DUMP_HOOK, "--source", NAME)
    existing = data.get("notify")
    line = f"notify = {tomltext.array(wanted)}"
    if existing is None:
        newline = "\r\n" if "\r\n" in current else "\n"
        head = NOTIFY_COMMENT + newline + line + newline + (newline if current else "")
        return _checked(head + current, data, "added", "notify")
    if not is_recall_hook(existing, DUMP_HOOK):
        listed = isinstance(existing, list) and all(isinstance(part, str) for part in existing)
        shown = shell_join(existing) if listed else str(existing)
        return Change(
            text,
            "skipped",
            f"Codex already runs `{shown}` after each turn (notify) and takes only one program; "
            "run `recall import --watch` to capture Codex sessions.",
        )
    if existing == wanted:
        return Change(text, "unchanged")
    match = _notify_line(current)
    if match is None:
        raise Refused("its notify is written over several lines; put it on one line or remove it")
    ending = match.group()[len(match.group().rstrip("\r\n")) :]
    return _checked(
        current[: match.start()] + line + ending + current[match.end() :], data, "updated", "notify"
    )


def remove_notify(text: str | None) -> Change:
    if text is None:
        return Change(text, "unchanged")
    data = tomltext.parse(text)
    match = _notify_line(text)
    if not is_recall_hook(data.get("notify"), DUMP_HOOK) or match is None:
        return Change(text, "unchanged")
    start, end = match.start(), match.end()
    above = text.rfind("\n", 0, max(start - 1, 0)) + 1
    if text[above:start].rstrip("\r\n") == NOTIFY_COMMENT:
        start = above
    if start == 0 and text[end:].startswith(("\n", "\r\n")):
        end += 2 if text[end:].startswith("\r\n") else 1
    rest = text[:start] + text[end:]
    return _checked(rest, data, "removed") if rest.strip() else Change(None, "removed")


def add_session_start(text: str | None, setup: Setup) -> Change:
    # No matcher, as in Claude Code's settings: the group runs for every source (startup, resume,
    # clear, compact and newer ones), so a session whose context was cleared or compacted away, or
    # that was resumed days later, gets the brief as it stands now.
    handler = {
        "type": "command",
        "command": setup.hook_command(CONTEXT_HOOK),
        "timeout": SESSION_START_TIMEOUT,
    }
    return hooklists.add(text, mcp_json.NEW_FILE, [(SESSION_START, CONTEXT_HOOK, handler)], grouped=True)


def remove_session_start(text: str | None) -> Change:
    """Take out recall's SessionStart hook, and its group when it holds nothing else."""
    return hooklists.remove(text, [(SESSION_START, CONTEXT_HOOK)], grouped=True)


def connections(setup: Setup) -> list[Connection]:
    path = config_file(setup)
    try:
        data = tomltext.parse(read_text(path) or "")
    except Refused as exc:
        return [Connection(NAME, "user", path, f"unreadable: {exc}", path)]
    wired = ["notify"] if is_recall_hook(data.get("notify"), DUMP_HOOK) else []
    # One row whatever the scope (the server is user-level): a session here runs both files' hooks.
    wired += [f"{SESSION_START} ({found})" for found in dict.fromkeys(hooks_files(setup)) if _starts(found)]
    return [Connection(NAME, "user", path, describe_server(_server(data), setup.db_path), path, wired)]


def _starts(path: Path) -> bool:
    """Does this hooks.json run recall's brief at session start? (Unreadable counts as no.)"""
    try:
        text = read_text(path)
        return bool(hooklists.wired(text, [(SESSION_START, CONTEXT_HOOK)], grouped=True))
    except Refused:
        return False


def _server(data: dict[str, Any]) -> Any:
    servers = data.get("mcp_servers")
    return servers.get("recall") if isinstance(servers, dict) else None


def _table_span(text: str) -> tuple[int, int] | None:
    found = list(_TABLE.finditer(text))
    return tomltext.table_span(text, found[0].start()) if len(found) == 1 else None


def _notify_line(text: str) -> re.Match[str] | None:
    """The top-level ``notify = ...`` line: the first one before any table header."""
    match = _NOTIFY.search(text)
    first_table = tomltext.first_header(text)
    return match if match and (first_table is None or match.start() < first_table) else None


def _checked(text: str, before: dict[str, Any], action: str, note: str = "") -> Change:
    """Refuse an edit that would change anything but recall's own entries (or break the file)."""
    try:
        after = tomltext.parse(text)
    except Refused:
        raise Refused(
            "recall's entry there is written in a form recall cannot update; remove it and run again"
        ) from None
    if _others(after) != _others(before):
        raise Refused("editing it as text would change other settings; add recall by hand")
    return Change(text, action, note)


def _others(data: dict[str, Any]) -> dict[str, Any]:
    rest = copy.deepcopy(data)
    servers = rest.get("mcp_servers")
    if isinstance(servers, dict) and is_recall_server(servers.get("recall")):
        del servers["recall"]
        if not servers:
            del rest["mcp_servers"]
    if is_recall_hook(rest.get("notify"), DUMP_HOOK):
        del rest["notify"]
    return rest
