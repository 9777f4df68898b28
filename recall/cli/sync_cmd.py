"""`recall sync`: share this machine's sessions and records with a team server, and bring the team's back.

The server is `--remote` (or RECALL_REMOTE), the token RECALL_TOKEN (`recall serve token add`).
A sync killed halfway resumes where it stopped; a second one sends only what changed (adr/0025).
"""

from __future__ import annotations

import os

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app


@click.command()
@click.option("--remote", envvar="RECALL_REMOTE", help="The team server's URL (env RECALL_REMOTE).")
@json_option
@pass_app
def sync(app: AppContext, remote: str | None, as_json: bool) -> None:
    """Push what this machine imported, recorded and forgot since its last sync; pull the team's
    decisions, learnings, breadcrumbs and profiles, and erase here what the team forgot."""
    from recall.team.client import HttpTransport
    from recall.team.client import sync as run_sync

    if not remote:
        raise click.UsageError("name the team server: --remote https://... or RECALL_REMOTE")
    if not remote.startswith(("http://", "https://")):
        raise click.BadParameter("a team server's URL starts with http:// or https://", param_hint="--remote")
    token = os.environ.get("RECALL_TOKEN", "").strip()
    if not token:
        raise click.UsageError("set RECALL_TOKEN to your token (the team server's admin makes one)")
    report = run_sync(app.memory, remote.rstrip("/"), HttpTransport(remote.rstrip("/"), token))
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.message)


COMMANDS = [sync]
