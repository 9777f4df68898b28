"""`recall search`: find records and messages by keyword, by meaning, or both."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option, scope_name


@click.command()
@click.argument("query")
@click.option(
    "--mode", type=click.Choice(["hybrid", "keyword", "semantic"]), default="hybrid", show_default=True
)
@project_option
@click.option("--all-projects", is_flag=True, help="Search every project.")
@click.option(
    "--kind",
    "--table",
    "kind",
    help="Only this kind: decision, learning, breadcrumb, session_summary, message, note.",
)
@click.option("--bias", help="Prefer this kind, without excluding others.")
@click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeat: all must match).")
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
    kind: str | None,
    bias: str | None,
    tags: tuple[str, ...],
    limit: int,
    min_score: float,
    as_json: bool,
) -> None:
    """Search decisions, learnings, breadcrumbs, session summaries and messages.

    Any text works: `recall-mcp`, `bun:sqlite`, `C++`, `what did we decide?`. Keyword mode also takes
    deliberate syntax: AND, OR, NOT between words, prefix*, "exact phrase".
    """
    if all_projects and project:
        raise click.UsageError("--project and --all-projects do not combine; use one")
    found = app.memory.search(
        query,
        mode=mode,  # type: ignore[arg-type]
        project="*" if all_projects else project,
        kind=kind,
        bias=bias,
        limit=limit,
        min_score=min_score,
        tags=tags,
    )
    if as_json:
        emit_json(found.to_dict())
        return
    if not found.hits:
        hint = "" if found.project is None else " (try --all-projects or other words)"
        click.echo(f"no results for {found.query!r} in {scope_name(found.project)}{hint}", err=True)
        return
    for hit in found.hits:
        when = hit.created_at[:10]
        status = f" [{hit.extra['status']}]" if hit.extra.get("status") not in (None, "active") else ""
        click.echo(f"{hit.ref}{status}  {hit.project}  {when}  {hit.provenance}  score {hit.score:.3g}")
        click.echo(f"  {hit.content if len(hit.content) <= 600 else hit.preview}")


COMMANDS = [search]
