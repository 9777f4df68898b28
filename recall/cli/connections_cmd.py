"""`recall connections`: what memory knows about a file, symbol, package, command or error."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app


@click.command()
@click.argument("entity")
@click.option("--project", help="Only this project (default: the current git repository's).")
@click.option("--all-projects", is_flag=True, help="Look in every project.")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True, help="Per section.")
@json_option
@pass_app
def connections(
    app: AppContext, entity: str, project: str | None, all_projects: bool, limit: int, as_json: bool
) -> None:
    """Decisions, learnings and sessions connected to ENTITY, and what was seen with it.

    ENTITY is a file (`src/auth/session.py`, `session.py`), a symbol (`build_summary`), a package, a
    command (`pytest`, `git push`) or an error (`KeyError`).
    """
    if all_projects and project:
        raise click.UsageError("give --project or --all-projects, not both")
    found = app.memory.connections(entity, project="*" if all_projects else project, limit=limit)
    scope = found.project
    if as_json:
        emit_json(found.to_dict())
        return
    if not found.entities:
        where = f" in project {scope!r}" if scope else ""
        hint = "" if all_projects else "; try --all-projects"
        raise click.ClickException(
            f"no file, symbol, package, command or error named {entity!r}{where}{hint}"
        )
    click.echo("matches: " + ", ".join(f"{e.type} {e.name} ({e.project})" for e in found.entities))
    for heading, records in (
        ("decisions", found.decisions),
        ("learnings", found.learnings),
        ("breadcrumbs", found.breadcrumbs),
    ):
        if records:
            click.echo(f"\n{heading}:")
            for r in records:
                status = f" [{r.status}]" if r.status not in (None, "active") else ""
                click.echo(f"  {r.kind}#{r.id}{status}  {r.created_at[:10]}  {r.content}")
    if found.sessions:
        click.echo("\nsessions (newest first):")
        for s in found.sessions:
            did = ", ".join(f"{relation} {times}" for relation, times in sorted(s.did.items()))
            click.echo(f"  session#{s.session_id}  {s.last_at[:16]}  {s.host}  {s.title or ''}  [{did}]")
    if found.related:
        click.echo("\nseen with it:")
        for related in found.related:
            click.echo(f"  {related.how:<12} {related.entity.type} {related.entity.name}  ({related.count})")


COMMANDS = [connections]
