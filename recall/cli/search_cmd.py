"""`recall search`: find records and messages by keyword, by meaning, or both."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, resolve_project_option

_KINDS = ("decision", "learning", "breadcrumb", "session_summary", "message")


@click.command()
@click.argument("query")
@click.option(
    "--mode", type=click.Choice(["hybrid", "keyword", "semantic"]), default="hybrid", show_default=True
)
@click.option("--project", help="Only this project (default: the current git repository's).")
@click.option("--all-projects", is_flag=True, help="Search every project.")
@click.option("--table", type=click.Choice(_KINDS), help="Only this kind of record.")
@click.option("--bias", type=click.Choice(_KINDS), help="Prefer this kind, without excluding others.")
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@click.option(
    "--min-score", type=click.FloatRange(0, 1), default=0.0, help="Hybrid/semantic: drop weaker hits."
)
@json_option
@pass_app
def search(
    app: AppContext,
    query: str,
    mode: str,
    project: str | None,
    all_projects: bool,
    table: str | None,
    bias: str | None,
    limit: int,
    min_score: float,
    as_json: bool,
) -> None:
    """Search decisions, learnings, breadcrumbs, session summaries and messages.

    Any text works: `recall-mcp`, `bun:sqlite`, `C++`, `what did we decide?`. Keyword mode also takes
    deliberate syntax: AND, OR, NOT between words, prefix*, "exact phrase".
    """
    from recall.models import RecordKind
    from recall.search.hybrid import search as run_search
    from recall.search.query import clean_query

    query = clean_query(query)  # what is searched and shown: bytes a shell passed that are not UTF-8 included
    scope = None if all_projects else resolve_project_option(project)
    hits = run_search(
        app.store,
        query,
        mode=mode,  # type: ignore[arg-type]
        project=scope,
        table=RecordKind(table) if table else None,
        bias=RecordKind(bias) if bias else None,
        limit=limit,
        min_score=min_score,
    )
    if as_json:
        emit_json(
            {"query": query, "mode": mode, "project": scope, "results": [hit.to_dict() for hit in hits]}
        )
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
            f"{hit.kind}#{hit.id}{status}  {hit.project}  {when}  {hit.provenance}  score {hit.score:.3g}"
        )
        click.echo(f"  {hit.content if len(hit.content) <= 600 else hit.preview}")


COMMANDS = [search]
