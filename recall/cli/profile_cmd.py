"""`recall profile`: the project's profile page (stack, conventions, build/test/lint, people, notes)."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option
from recall.profile import KNOWN_KEYS, Profile

_KEYS_HELP = "; ".join(f"{key}: {what}" for key, what in KNOWN_KEYS.items())


@click.group(invoke_without_command=True)
@project_option
@json_option
@pass_app
@click.pass_context
def profile(ctx: click.Context, app: AppContext, project: str | None, as_json: bool) -> None:
    """Show the project's profile, the page every brief starts with (or: set KEY VALUE, unset KEY)."""
    if ctx.invoked_subcommand is None:
        _emit(app.memory.profile(project), as_json)


@profile.command()
@project_option
@json_option
@pass_app
def show(app: AppContext, project: str | None, as_json: bool) -> None:
    """Show the project's profile."""
    _emit(app.memory.profile(project), as_json)


@profile.command(name="set", help=f"Set KEY to VALUE (scrubbed). Keys: {_KEYS_HELP}; or a word of your own.")
@click.argument("key")
@click.argument("value")
@project_option
@json_option
@pass_app
def set_(app: AppContext, key: str, value: str, project: str | None, as_json: bool) -> None:
    done = app.memory.set_profile(key, value, project=project)
    _emit(done, as_json)
    if done.redacted and not as_json:
        found = ", ".join(f"{count} {kind}" for kind, count in done.redacted.items())
        click.echo(f"redacted before storing: {found}", err=True)


@profile.command()
@click.argument("key")
@project_option
@json_option
@pass_app
def unset(app: AppContext, key: str, project: str | None, as_json: bool) -> None:
    """Remove KEY from the profile; its old value leaves the file."""
    _emit(app.memory.unset_profile(key, project=project), as_json)


def _emit(page: Profile, as_json: bool) -> None:
    if as_json:
        emit_json(page.to_dict())
    else:
        click.echo(page.text)


COMMANDS = [profile]
