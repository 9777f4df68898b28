"""`recall embed`: embed what is still pending (resumable), or everything again after a model change."""

from __future__ import annotations

import sys
from typing import Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app


@click.command()
@click.option("--project", help="Only this project.")
@click.option(
    "--rebuild", is_flag=True, help="Drop every stored vector and embed everything with the current model."
)
@json_option
@pass_app
def embed(app: AppContext, project: str | None, rebuild: bool, as_json: bool) -> None:
    """Embed records and messages that have no vector yet; safe to stop and run again."""
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if as_json or not sys.stderr.isatty():
            return
        if bar is None:
            bar = click.progressbar(
                length=total, label="embedding", file=sys.stderr, show_pos=True, show_eta=True
            )
            bar.__enter__()
        bar.update(done - bar.pos)

    try:
        report = app.memory.embed(project=project, rebuild=rebuild, progress=progress)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        emit_json(report.to_dict())
        return
    rate = report.embedded / report.seconds if report.seconds else 0.0
    click.echo(
        f"embedded {report.embedded:,} rows with {report.model_id} in {report.seconds:.1f} s ({rate:.0f}/s)"
    )


COMMANDS = [embed]
