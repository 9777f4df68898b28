"""`recall extract` and `recall review`: typed memory extracted from transcripts, and its review."""

from __future__ import annotations

import sys
from typing import Any

import click

from recall.cli.context import AppContext, LazyBar, emit_json, json_option, pass_app


@click.command()
@click.option("--project", help="Only this project (default: every project).")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Delete unreviewed extracted records and extract every session again (rejections and accepted "
    "records stay).",
)
@json_option
@pass_app
def extract(app: AppContext, project: str | None, rebuild: bool, as_json: bool) -> None:
    """Extract decisions, learnings and breadcrumbs from stored sessions; safe to stop and run again."""
    with LazyBar("extracting", enabled=not as_json and sys.stderr.isatty()) as bar:
        removed, report = app.memory.extract(project=project, rebuild=rebuild, progress=bar)
    if as_json:
        emit_json({"removed": removed, **report.to_dict()})
        return
    if rebuild:
        click.echo(f"removed {removed:,} unreviewed extracted records")
    click.echo(describe_extraction(report.to_dict()))
    for error in report.errors[:5]:
        click.echo(f"  ! {error}", err=True)


def describe_extraction(data: dict[str, Any]) -> str:
    added = data.get("added", {})
    kinds = ", ".join(f"{count} {kind}s" for kind, count in added.items()) or "nothing new"
    return (
        f"extracted from {data.get('sessions', 0)} sessions: {kinds}; {data.get('refreshed', 0)} refreshed, "
        f"{data.get('expired', 0)} breadcrumbs expired, {data.get('superseded', 0)} decisions superseded"
    )


@click.group(invoke_without_command=True)
@click.option("--project", help="Only this project (default: the current git repository's).")
@click.option("--all-projects", is_flag=True, help="Every project.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@json_option
@click.pass_context
def review(ctx: click.Context, project: str | None, all_projects: bool, limit: int, as_json: bool) -> None:
    """Extracted records awaiting review, each with the message lines it came from.

    `recall review accept ID...` keeps them (they enter the briefs); `recall review reject ID...`
    deletes them for good: the same wording is never extracted again. Name records by ref (decision#12).
    """
    if ctx.invoked_subcommand is not None:
        return
    app = ctx.find_object(AppContext)
    assert app is not None
    if all_projects and project:
        raise click.UsageError("--project and --all-projects do not combine; use one")
    scope = None if all_projects else app.memory.project(project)
    items = app.memory.review(project="*" if all_projects else project, limit=limit)
    if as_json:
        emit_json({"project": scope, "records": [item.to_dict() for item in items]})
        return
    if not items:
        hint = "" if all_projects else " (try --all-projects)"
        click.echo(f"nothing awaits review{f' in project {scope!r}' if scope else ''}{hint}", err=True)
        return
    for item in items:
        click.echo(
            f"{item.ref}  {item.rule} v{item.rule_version}  confidence {item.confidence:.2f}  {item.project}"
        )
        click.echo(f"  {item.content}")
        where = item.session_title or f"session {item.session_id}"
        click.echo(f"  from {item.host or '?'} session: {where}")
        for source in item.sources:
            click.echo(f"    > [{source.role}/{source.kind} message#{source.message_id}] {source.excerpt}")


@review.command()
@click.argument("refs", nargs=-1, required=True)
@json_option
@pass_app
def accept(app: AppContext, refs: tuple[str, ...], as_json: bool) -> None:
    """Accept extracted records: they stay and count as confident."""
    records = app.memory.accept(refs)
    if as_json:
        emit_json({"accepted": [record.to_dict() for record in records]})
    else:
        click.echo("accepted " + ", ".join(str(record.ref) for record in records))


@review.command()
@click.argument("refs", nargs=-1, required=True)
@json_option
@pass_app
def reject(app: AppContext, refs: tuple[str, ...], as_json: bool) -> None:
    """Reject extracted records: deleted, and never extracted again."""
    done = app.memory.reject(refs)
    if as_json:
        emit_json({"rejected": list(done)})
    else:
        click.echo("rejected " + ", ".join(done))


COMMANDS = [extract, review]
