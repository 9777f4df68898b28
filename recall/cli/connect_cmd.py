"""`recall connect` and `recall disconnect`: wire recall into coding agents' config files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app

if TYPE_CHECKING:
    from recall.connect import Report, Setup

AGENT_NAMES = ("claude", "cursor", "vscode", "codex", "opencode", "pi", "gemini")
_ACTION_WORDS = {"refused": "left untouched", "unchanged": "unchanged"}

agent_option = click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(AGENT_NAMES),
    help="Which agent (repeatable). Default: those found on this machine (connect), all (disconnect).",
)
global_option = click.option(
    "--global",
    "global_scope",
    is_flag=True,
    help="Use the user-level config files instead of this project's.",
)
dry_run_option = click.option("--dry-run", is_flag=True, help="Show the changes as a diff; write nothing.")


@click.command()
@agent_option
@click.option("--hooks", is_flag=True, help="Also capture sessions as they end and brief new ones at start.")
@click.option(
    "--instructions", is_flag=True, help="Also write a short block telling agents when to use recall."
)
@global_option
@click.option("--project", help="The project name to pin (default: from this git repository).")
@click.option(
    "--remote",
    envvar="RECALL_REMOTE",
    help="A team server (`recall serve`): agents use its MCP over HTTP with the token in RECALL_TOKEN.",
)
@dry_run_option
@json_option
@pass_app
def connect(
    app: AppContext,
    agents: tuple[str, ...],
    hooks: bool,
    instructions: bool,
    global_scope: bool,
    project: str | None,
    remote: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Register recall's MCP server with your coding agents, one database for all of them.

    Claude Code (.mcp.json), Cursor (.cursor/mcp.json), VS Code (.vscode/mcp.json), Codex
    (~/.codex/config.toml), OpenCode (opencode.json), Pi (.pi/mcp.json), Gemini CLI
    (.gemini/settings.json). Running it again changes nothing; `recall disconnect` undoes it.
    """
    from recall.connect import connect as run_connect
    from recall.connect import detected_agents

    setup = _setup(app, global_scope, project, remote)
    chosen = list(agents) or detected_agents(setup.home)
    report = run_connect(setup, chosen, hooks=hooks, instructions=instructions, dry_run=dry_run)
    if remote:
        report.notes.append(
            (
                "recall",
                f"agents reach {remote.rstrip('/')}/mcp with the token in RECALL_TOKEN: set it in their environment",
            )
        )
    if not hooks and not as_json:
        report.notes.append(("recall", "sessions are not captured by themselves yet: add --hooks"))
    _show(report, setup, dry_run=dry_run, as_json=as_json)


@click.command()
@agent_option
@global_option
@dry_run_option
@json_option
@pass_app
def disconnect(
    app: AppContext, agents: tuple[str, ...], global_scope: bool, dry_run: bool, as_json: bool
) -> None:
    """Remove exactly what `recall connect` added: the MCP server, hooks and instruction blocks."""
    from recall.connect import connect as run_connect

    setup = _setup(app, global_scope, None)
    report = run_connect(setup, list(agents) or list(AGENT_NAMES), remove=True, dry_run=dry_run)
    _show(report, setup, dry_run=dry_run, as_json=as_json)


def _setup(app: AppContext, global_scope: bool, project: str | None, remote: str | None = None) -> Setup:
    from recall.connect import make_setup

    if remote is not None and not remote.startswith(("http://", "https://")):
        raise click.BadParameter("a team server's URL starts with http:// or https://", param_hint="--remote")
    return make_setup(app.memory.path, Path.cwd(), global_scope=global_scope, project=project, remote=remote)


def _show(report: Report, setup: Setup, *, dry_run: bool, as_json: bool) -> None:
    if as_json:
        emit_json(_as_dict(report, setup, dry_run))
    else:
        pinned = f"database {setup.db_path}" + (f", project {setup.project}" if setup.project else "")
        click.echo(("dry run, nothing written: " if dry_run else "") + pinned)
        for result in report.files:
            shown = _shown(result.path, setup)
            for step in result.steps:
                action = _ACTION_WORDS.get(step.action, step.action)
                note = f": {step.note}" if step.note and step.action in ("refused", "skipped") else ""
                detail = f" ({step.note})" if step.note and not note else ""
                click.echo(f"  {step.agent:<8} {step.part:<13} {action:<15} {shown}{detail}{note}")
        for agent, note in report.notes:
            click.echo(f"  {agent:<8} note: {note}")
        if dry_run:
            for result in report.files:
                if result.changed:
                    click.echo(result.diff(_shown(result.path, setup)), nl=False)
    if report.refused:
        raise click.exceptions.Exit(1)


def _as_dict(report: Report, setup: Setup, dry_run: bool) -> dict[str, Any]:
    return {
        "database": str(setup.db_path),
        "project": setup.project,
        "scope": "user" if setup.global_scope else "project",
        "dry_run": dry_run,
        "files": [
            {
                "path": str(result.path),
                "changed": result.changed,
                "written": result.written,
                "steps": [
                    {"agent": s.agent, "part": s.part, "action": s.action, "note": s.note}
                    for s in result.steps
                ],
                **({"diff": result.diff(str(result.path))} if dry_run and result.changed else {}),
            }
            for result in report.files
        ],
        "notes": [{"agent": agent, "note": note} for agent, note in report.notes],
    }


def _shown(path: Path, setup: Setup) -> str:
    """Project files relative to the project, user files under ``~``."""
    for base, prefix in ((setup.root, ""), (setup.home, "~/")):
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)


COMMANDS = [connect, disconnect]
