"""`recall context`: the start-of-session brief, for people and for agents' SessionStart hooks."""

from __future__ import annotations

import sys

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option
from recall.hooks import DEFAULT_BRIEF_TOKENS


@click.command()
@click.option(
    "--hook",
    is_flag=True,
    help="Run as a SessionStart hook: read the agent's JSON on stdin and print the brief in the form "
    "it injects. Never fails the session.",
)
@project_option
@click.option(
    "--max-tokens",
    type=click.IntRange(min=100),
    default=DEFAULT_BRIEF_TOKENS,
    show_default=True,
    help="Token budget for the brief.",
)
@json_option
@pass_app
def context(app: AppContext, hook: bool, project: str | None, max_tokens: int, as_json: bool) -> None:
    """Print what a new session should know: decisions in force, where work was left, recent sessions."""
    if hook:
        from recall.hooks import hook_input, run_context_hook

        output = run_context_hook(
            app.db_path, hook_input(None, sys.stdin), project=project, max_tokens=max_tokens
        )
        if output:
            click.echo(output)
        return
    from recall.brief import estimate_tokens

    name = app.memory.project(project)
    brief = app.memory.session_brief(name, max_tokens=max_tokens)
    if as_json:
        emit_json(
            {"project": name, "max_tokens": max_tokens, "tokens": estimate_tokens(brief), "brief": brief}
        )
        return
    click.echo(brief or f"recall holds no decisions, breadcrumbs or sessions for {name} yet")


COMMANDS = [context]
