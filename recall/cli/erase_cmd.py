"""`recall forget`, `recall purge`, `recall rescrub`: taking text out of the store for good (adr/0014)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from recall.cli.context import AppContext, LazyBar, emit_json, json_option, pass_app

if TYPE_CHECKING:
    from recall.memory import BulkForgetReport, ForgetReport


@click.command()
@click.argument("target", required=False)
@click.argument("row_id", required=False)
@click.option(
    "--older-than", type=click.FloatRange(min=1), metavar="DAYS", help="Many records: older than DAYS."
)
@click.option(
    "--tag", "tags", multiple=True, help="Many records: carrying this tag (repeat: all must match)."
)
@click.option("--project", help="Many records: this project (default: the current one).")
@click.option("--all-projects", is_flag=True, help="Many records: every project.")
@click.option("--confirm", type=int, metavar="N", help="Many records: delete them if exactly N match.")
@json_option
@pass_app
def forget(
    app: AppContext,
    target: str | None,
    row_id: str | None,
    older_than: float | None,
    tags: tuple[str, ...],
    project: str | None,
    all_projects: bool,
    confirm: int | None,
    as_json: bool,
) -> None:
    """Forget one row for good: KIND ID or KIND#ID, where KIND is decision, learning, breadcrumb,
    session_summary, message or session. Or many records: --older-than DAYS and/or --tag, which
    first only counts them; repeat with --confirm N to delete.

    No copy of the text stays in recall's files, and a forgotten session or message is never
    imported again. A session takes its messages, summary and subagent sessions with it.
    """
    many = older_than is not None or tags or project or all_projects or confirm is not None
    if (target is None) == (not many):
        raise click.UsageError("give KIND#ID (e.g. decision#3), or --older-than/--tag, not both")
    report: ForgetReport | BulkForgetReport
    if target is not None:
        report = app.memory.forget(row_id, target) if row_id is not None else app.memory.forget(target)
        if not report.found and not as_json:
            raise click.ClickException(report.message)
    else:
        if project and all_projects:
            raise click.UsageError("--project and --all-projects exclude each other")
        report = app.memory.forget_many(
            project="*" if all_projects else project, tags=tags, older_than_days=older_than, confirm=confirm
        )
    emit_json(report.to_dict()) if as_json else click.echo(report.message)


@click.command()
@click.option("--project", help="Everything of this project.")
@click.option(
    "--expired", is_flag=True, help="Only decisions, learnings and breadcrumbs whose valid-until has passed."
)
@click.option(
    "--older-than", type=click.FloatRange(min=1), metavar="DAYS", help="Sessions and records older."
)
@click.option("--dry-run", is_flag=True, help="Count what would be deleted; delete nothing.")
@json_option
@pass_app
def purge(
    app: AppContext,
    project: str | None,
    expired: bool,
    older_than: float | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Delete a whole scope (a project, everything older than DAYS, or both; every project unless
    --project), or the expired records, then compact the file. Purged sessions are not imported
    again."""
    report = app.memory.purge(project=project, expired=expired, older_than_days=older_than, dry_run=dry_run)
    emit_json(report.to_dict()) if as_json else click.echo(report.message)


@click.command()
@json_option
@pass_app
def rescrub(app: AppContext, as_json: bool) -> None:
    """Run the current scrubber over everything stored and rewrite what it changes."""
    with LazyBar("rescrubbing", enabled=not as_json and sys.stderr.isatty()) as bar:
        report = app.memory.rescrub(progress=bar)
    emit_json(report.to_dict()) if as_json else click.echo(report.message)


COMMANDS = [forget, purge, rescrub]
