"""`recall add`, `recall show`, `recall decision ...`, `recall forget`: the typed records."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, resolve_project_option

_ADDABLE = ("decision", "learning", "breadcrumb")
_SHOWABLE = ("decision", "learning", "breadcrumb", "session_summary", "message", "session")


@click.command()
@click.argument("kind", type=click.Choice(_ADDABLE, case_sensitive=False))
@click.argument("content")
@click.option("--detail", help="The reasoning or background (decisions: why).")
@click.option("--project", help="Project name (default: from the current git repository).")
@click.option("--tags", help="Comma-separated tags; lower-cased and de-duplicated.")
@click.option("--confidence", type=click.Choice(["high", "medium", "low"]), help="Decisions and learnings.")
@click.option("--importance", type=click.IntRange(1, 10), default=5, show_default=True)
@click.option(
    "--valid-until", help="Breadcrumbs: when it expires (2026-12-31, 2026-12-31T18:00, 8h, 3d, 1w)."
)
@json_option
@pass_app
def add(
    app: AppContext,
    kind: str,
    content: str,
    detail: str | None,
    project: str | None,
    tags: str | None,
    confidence: str | None,
    importance: int,
    valid_until: str | None,
    as_json: bool,
) -> None:
    """Record a decision, learning or breadcrumb; prints the new id."""
    from recall.models import RecordKind
    from recall.store import NewRecord
    from recall.store.records import normalise_tags, parse_when

    record_kind = RecordKind(kind.lower())
    new = NewRecord(
        kind=record_kind,
        content=content,
        project=resolve_project_option(project),
        detail=detail,
        tags=tuple(normalise_tags(tags)),
        confidence=confidence,
        importance=importance,
        valid_until=parse_when(valid_until),
    )
    new_id = app.store.add(new)
    if as_json:
        emit_json(app.store.require(record_kind, new_id))
    else:
        click.echo(new_id)


@click.command()
@click.argument("kind", type=click.Choice(_SHOWABLE, case_sensitive=False))
@click.argument("row_id", type=int)
@json_option
@pass_app
def show(app: AppContext, kind: str, row_id: int, as_json: bool) -> None:
    """Show one row in full."""
    from recall.store.views import load_row

    row = load_row(app.store, kind.lower(), row_id)
    if as_json:
        emit_json(row)
        return
    for key, value in row.items():
        if key in ("content", "detail") and value:
            click.echo(f"{key}:\n  " + str(value).replace("\n", "\n  "))
        elif key == "entities":
            click.echo("entities:" + ("" if value else " none"))
            for entity in value:
                click.echo(f"  {entity['relation']} {entity['type']} {entity['name']} ({entity['times']})")
        else:
            click.echo(f"{key}: {value}")


@click.group()
def decision() -> None:
    """Move a decision through its lifecycle: active → superseded | reverted."""


@decision.command()
@click.argument("decision_id", type=int)
@click.option("--by", "by_id", type=int, help="The id of the decision that replaces it.")
@json_option
@pass_app
def supersede(app: AppContext, decision_id: int, by_id: int | None, as_json: bool) -> None:
    """Mark an active decision superseded (optionally by another decision)."""
    result = app.store.supersede(decision_id, by=by_id)
    if as_json:
        emit_json(result)
    else:
        link = f" by {by_id}" if by_id is not None else ""
        click.echo(f"decision {decision_id} superseded{link}")


@decision.command()
@click.argument("decision_id", type=int)
@json_option
@pass_app
def revert(app: AppContext, decision_id: int, as_json: bool) -> None:
    """Mark an active decision reverted (undone, nothing replaces it)."""
    result = app.store.revert(decision_id)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"decision {decision_id} reverted")


@click.command()
@click.argument("kind", type=click.Choice(_ADDABLE, case_sensitive=False))
@click.argument("row_id", type=int)
@json_option
@pass_app
def forget(app: AppContext, kind: str, row_id: int, as_json: bool) -> None:
    """Delete a decision, learning or breadcrumb for good."""
    from recall.models import RecordKind

    found = app.store.forget(RecordKind(kind.lower()), row_id)
    if as_json:
        emit_json({"kind": kind, "id": row_id, "deleted": found})
    elif found:
        click.echo(f"{kind} {row_id} deleted")
    else:
        raise click.ClickException(f"no {kind} with id {row_id}")


COMMANDS = [add, show, decision, forget]
