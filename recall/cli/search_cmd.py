"""`recall search`: find records and messages by keyword (and, once embeddings land, by meaning)."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, resolve_project_option

_KINDS = ("decision", "learning", "breadcrumb", "session_summary", "message")


@click.command()
@click.argument("query")
@click.option("--project", help="Only this project (default: the current git repository's).")
@click.option("--all-projects", is_flag=True, help="Search every project.")
@click.option("--table", type=click.Choice(_KINDS), help="Only this kind of record.")
@click.option("--bias", type=click.Choice(_KINDS), help="Prefer this kind, without excluding others.")
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@json_option
@pass_app
def search(
    app: AppContext,
    query: str,
    project: str | None,
    all_projects: bool,
    table: str | None,
    bias: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Search decisions, learnings, breadcrumbs, session summaries and messages.

    Any text works: `recall-mcp`, `bun:sqlite`, `C++`, `what did we decide?`. Deliberate syntax
    too: AND, OR, NOT between words, prefix*, "exact phrase".
    """
    from recall.models import RecordKind

    scope = None if all_projects else resolve_project_option(project)
    hits = app.store.search(
        query,
        project=scope,
        table=RecordKind(table) if table else None,
        bias=RecordKind(bias) if bias else None,
        limit=limit,
    )
    if as_json:
        emit_json({"query": query, "project": scope, "results": [hit.to_dict() for hit in hits]})
        return
    if not hits:
        where = f" in project {scope!r}" if scope else ""
        hint = "" if all_projects else " (try --all-projects)"
        click.echo(f"no results for {query!r}{where}{hint}", err=True)
        return
    for hit in hits:
        when = hit.created_at[:10]
        status = f" [{hit.extra['status']}]" if hit.extra.get("status") not in (None, "active") else ""
        click.echo(
            f"{hit.kind}#{hit.id}{status}  {hit.project}  {when}  {hit.provenance}  score {hit.score:.3f}"
        )
        click.echo(f"  {hit.preview}")


COMMANDS = [search]
