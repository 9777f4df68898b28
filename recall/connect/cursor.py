"""Cursor: MCP server in ``.cursor/mcp.json``, hooks in ``.cursor/hooks.json``, a rule file.

Cursor's hooks file is ``{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}``. Two events:

- ``sessionStart`` runs ``recall context --hook``: it receives ``conversation_id`` and
  ``workspace_roots`` on stdin, and the ``additional_context`` of the one JSON object it prints is kept
  on the conversation and sent with each request, so the agent starts with the brief. Cloud agents
  do not run it.
- ``stop`` runs ``recall dump --from-hook``: it fires when an agent run ends and passes the same two
  fields (newer versions also ``transcript_path``); the conversation's agent transcript is imported.

Chats that exist only inside Cursor's own database have no file to hand over, so they arrive with
``recall import`` (or ``recall import --watch``). Cursor keeps user-level rules in its settings, not
in a file, so the instruction rule is written for projects only.
"""

from __future__ import annotations

from pathlib import Path

from recall.connect import hooklists, instructions, mcp_json
from recall.connect.launcher import CONTEXT_HOOK, CURSOR_TOKEN_HEADER, DUMP_HOOK, Setup, describe_server
from recall.connect.plan import Change, Connection, Refused, Step, read_text

NAME = "cursor"
HOOKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sessionStart", CONTEXT_HOOK),
    ("stop", DUMP_HOOK),
)
NEW_FILE = '{\n  "version": 1\n}\n'


def folder(setup: Setup) -> Path:
    return (setup.home if setup.global_scope else setup.root) / ".cursor"


def detected(home: Path) -> bool:
    return (home / ".cursor").is_dir()


def steps(setup: Setup, *, hooks: bool, guidance: bool, remove: bool) -> list[Step]:
    entry = setup.mcp_entry(with_type=False, token_header=CURSOR_TOKEN_HEADER)
    base = folder(setup)
    found = [
        mcp_json.server_step(
            NAME, base / "mcp.json", container="mcpServers", entry=entry, remove=remove, prune_dirs=1
        )
    ]
    if hooks or remove:
        found.append(
            Step(
                NAME,
                "hooks",
                base / "hooks.json",
                remove_hooks if remove else lambda t: add_hooks(t, setup),
                1,
            )
        )
    if (guidance or remove) and not setup.global_scope:
        head = instructions.CURSOR_RULE_HEAD
        apply = (
            (lambda t: instructions.remove_block(t, head=head))
            if remove
            else (lambda t: instructions.add_block(t, head=head))
        )
        found.append(Step(NAME, "instructions", base / "rules" / "recall.mdc", apply, 2))
    return found


def notes(setup: Setup, *, hooks: bool) -> list[str]:
    found = []
    if hooks:
        found.append(
            "Cursor's sessionStart hook hands each new agent conversation the brief (cloud agents do not "
            "run it); its stop hook imports agent transcripts, and chats kept only in Cursor's database "
            "arrive with `recall import` (run `recall import --watch` to keep them current)."
        )
    return found


def add_hooks(text: str | None, setup: Setup) -> Change:
    wanted = [
        (
            event,
            verb,
            {"command": setup.hook_command(verb, *(("--source", NAME) if verb == DUMP_HOOK else ()))},
        )
        for event, verb in HOOKS
    ]
    return hooklists.add(text, NEW_FILE, wanted, grouped=False)


def remove_hooks(text: str | None) -> Change:
    return hooklists.remove(text, HOOKS, grouped=False, empty=({}, {"version": 1}))


def wired_events(text: str | None) -> list[str]:
    """The hook events that run recall, for doctor."""
    return hooklists.wired(text, HOOKS, grouped=False)


def connections(setup: Setup) -> list[Connection]:
    base = folder(setup)
    try:
        server = describe_server(
            mcp_json.server_entry(read_text(base / "mcp.json"), "mcpServers"), setup.db_path
        )
    except Refused as exc:
        server = f"unreadable: {exc}"
    try:
        wired = wired_events(read_text(base / "hooks.json"))
    except Refused:
        wired = []
    scope = "user" if setup.global_scope else "project"
    return [Connection(NAME, scope, base / "mcp.json", server, base / "hooks.json", wired)]
