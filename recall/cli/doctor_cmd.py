"""`recall doctor`: check every link between the agents and the memory, and say what to fix."""

from __future__ import annotations

from pathlib import Path

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app

MARKS = {"ok": "✓", "info": "·", "warn": "!", "fail": "✗"}


@click.command()
@json_option
@pass_app
def doctor(app: AppContext, as_json: bool) -> None:
    """Check the database, embedding model, agent connections, hooks, transcripts and retention.

    Exits 1 when a check fails (a warning does not).
    """
    from recall.doctor import to_dict

    sections = app.memory.doctor(Path.cwd())
    report = to_dict(sections)
    if as_json:
        emit_json(report)
    else:
        for section in sections:
            click.echo(section.title)
            for finding in section.findings:
                click.echo(f"  {MARKS[finding.level]} {finding.text}")
    if not report["ok"]:
        raise click.exceptions.Exit(1)


COMMANDS = [doctor]
