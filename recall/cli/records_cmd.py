"""`recall add`, `update`, `show`, `list`, `decision ...`: the typed records, named ``kind#id``
(forgetting: erase_cmd)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option, scope_name
from recall.results import Record

PREVIEW_CHARS = 160


@click.command()
@click.argument("kind")
@click.argument("content")
@click.option("--detail", help="The reasoning or background (decisions: why).")
@project_option
@click.option("--tags", help="Comma-separated tags; lower-cased and de-duplicated.")
@click.option("--confidence", type=click.Choice(["high", "medium", "low"]), help="Decisions and learnings.")
@click.option("--importance", type=click.IntRange(1, 10), default=5, show_default=True)
@click.option(
    "--valid-until",
    help="When it expires and leaves search and the briefs (2026-12-31, 2026-12-31T18:00, 8h, 3d, 1w).",
)
@click.option("--source", help="Where it came from, in your words: a URL, a ticket, a document.")
@click.option(
    "--metadata", help='A small JSON object kept with it (at most 4 KB), e.g. \'{"ticket": "ENG-12"}\'.'
)
@click.option("--force", is_flag=True, help="Add it even when a live record already says the same.")
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
    source: str | None,
    metadata: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Record a decision, learning or breadcrumb (KIND); prints its ref, e.g. decision#3.

    When a live record of the same kind and project already says it, that record is refreshed
    instead (its tags, importance and expiry take what this one adds) and named; --force adds anyway."""
    record = app.memory.add(
        kind,
        content,
        project=project,
        detail=detail,
        tags=tags,
        confidence=confidence,
        importance=importance,
        valid_until=valid_until,
        source=source,
        metadata=metadata,
        force=force,
    )
    _written(record, as_json)


@click.command()
@click.argument("ref")
@click.option("--content", help="New text.")
@click.option("--detail", help="New reasoning or background; an empty string clears it.")
@click.option("--tags", help="Comma-separated tags that replace the old ones.")
@click.option("--confidence", type=click.Choice(["high", "medium", "low"]), help="Decisions and learnings.")
@click.option("--importance", type=click.IntRange(1, 10))
@click.option("--valid-until", help="New expiry (2026-12-31, 8h, 3d); `none` removes it.")
@click.option("--source", help="Where it came from; an empty string clears it.")
@click.option("--metadata", help="A JSON object that replaces the old metadata (at most 4 KB).")
@project_option
@json_option
@pass_app
def update(
    app: AppContext,
    ref: str,
    content: str | None,
    detail: str | None,
    tags: str | None,
    confidence: str | None,
    importance: int | None,
    valid_until: str | None,
    source: str | None,
    metadata: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Correct a decision, learning or breadcrumb in place (REF: decision#3); only the options given change."""
    record = app.memory.update(
        ref,
        content=content,
        detail=detail,
        tags=tags,
        confidence=confidence,
        importance=importance,
        valid_until=valid_until,
        source=source,
        metadata=metadata,
        project=project,
    )
    _written(record, as_json)


def _written(record: Record, as_json: bool) -> None:
    """The ref on stdout (scripts read it); what the scrubber took out on stderr, so no one is surprised."""
    if as_json:
        emit_json(record.to_dict())
        return
    if record.refreshed is not None:
        click.echo(
            f"{record.ref} refreshed: it already says this ({_alike(record.refreshed)}); --force adds anyway"
        )
        click.echo(f"  {record.data['content'][:PREVIEW_CHARS]}")
    else:
        click.echo(record.ref)
    if record.redacted:
        found = ", ".join(f"{count} {kind}" for kind, count in record.redacted.items())
        click.echo(f"redacted before storing: {found}", err=True)


def _alike(likeness: Mapping[str, Any]) -> str:
    cosine = likeness.get("cosine")
    words = f"{likeness['overlap']:.0%} of its words"
    return words if cosine is None else f"{words}, cosine {cosine:.2f}"


@click.command()
@project_option
@click.option("--dry-run", is_flag=True, help="Say what would merge; change nothing.")
@json_option
@pass_app
def dedup(app: AppContext, project: str | None, dry_run: bool, as_json: bool) -> None:
    """Merge live decisions, learnings and breadcrumbs that say the same thing (every project unless
    --project): each group keeps its oldest record (a person's own first), which takes the others'
    tags, sources and supersession links; the others are deleted."""
    found = app.memory.dedup(project=project, dry_run=dry_run)
    if as_json:
        emit_json(found.to_dict())
        return
    verb = "would merge" if dry_run else "merged"
    for group in found.groups:
        others = ", ".join(f"{m.kind.value}#{m.id} ({_alike(m.likeness.to_dict())})" for m in group.merged)
        click.echo(f"{group.kind.value}#{group.keep} ({group.project}) {verb} {others}")
    click.echo(f"{found.merged} near-duplicate record(s) {verb} in {scope_name(found.project)}")
    if not found.model:
        click.echo(
            "the embedding model is not available: only near-identical wordings were compared", err=True
        )


@click.command()
@click.argument("ref")
@click.argument("row_id", required=False)
@json_option
@pass_app
def show(app: AppContext, ref: str, row_id: str | None, as_json: bool) -> None:
    """Show one row in full: `recall show learning#1` (or `recall show learning 1`)."""
    record = app.memory.get(row_id, ref) if row_id is not None else app.memory.get(ref)
    if as_json:
        emit_json(record.to_dict())
        return
    click.echo(f"{record.ref} ({record.provenance})")
    for key, value in record.data.items():
        if key in ("kind", "id"):
            continue
        if key in ("content", "detail") and value:
            quote = "  " if record.trusted else "  > "
            click.echo(f"{key}:\n{quote}" + str(value).replace("\n", f"\n{quote}"))
        elif key == "entities":
            click.echo("entities:" + ("" if value else " none"))
            for entity in value:
                click.echo(f"  {entity['relation']} {entity['type']} {entity['name']} ({entity['times']})")
        else:
            click.echo(f"{key}: {value}")


@click.command(name="list")
@click.argument("kinds", nargs=-1)
@project_option
@click.option("--all-projects", is_flag=True, help="Every project.")
@click.option(
    "--status",
    help="Decisions: active, superseded, reverted; decisions, learnings, breadcrumbs: live, expired.",
)
@click.option("--provenance", help="verbatim, user_authored, extracted or derived.")
@click.option("--tag", "tags", multiple=True, help="Only rows with this tag (repeat: all must match).")
@click.option("--since", help="Only rows since this date (2026-11-01) or span back (7d).")
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("--cursor", help="Continue a listing where the last page ended.")
@json_option
@pass_app
def list_(
    app: AppContext,
    kinds: tuple[str, ...],
    project: str | None,
    all_projects: bool,
    status: str | None,
    provenance: str | None,
    tags: tuple[str, ...],
    since: str | None,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List decisions, learnings, breadcrumbs and session summaries, newest first (or the KINDS named:
    decision, learning, breadcrumb, session_summary, session, message)."""
    if all_projects and project:
        raise click.UsageError("--project and --all-projects do not combine; use one")
    page = app.memory.list(
        kinds or None,
        project="*" if all_projects else project,
        status=status,
        provenance=provenance,
        tags=tags,
        since=since,
        limit=limit,
        cursor=cursor,
    )
    if as_json:
        emit_json(page.to_dict())
        return
    if not page.records:
        where = scope_name(None if all_projects else app.memory.project(project))
        click.echo(
            f"nothing to list in {where}" + ("" if all_projects else " (try --all-projects)"), err=True
        )
    for record in page.records:
        click.echo(_line(record))
    if page.next_cursor:
        click.echo(f"more: add --cursor {page.next_cursor}", err=True)


def _line(record: Record) -> str:
    data = record.data
    status = data.get("status")
    marks = f" [{status}]" if status not in (None, "active") else ""
    when = str(data.get("started_at") or data.get("timestamp") or data.get("created_at") or "")[:10]
    text = data.get("title") if record.kind.value == "session" else data.get("content")
    flat = " ".join(str(text or "").split())
    if len(flat) > PREVIEW_CHARS:
        flat = flat[: PREVIEW_CHARS - 1] + "…"
    return f"{record.ref}{marks}  {record.project}  {when}  {record.provenance}  {flat}"


@click.group()
def decision() -> None:
    """Move a decision through its lifecycle: active → superseded | reverted."""


@decision.command()
@click.argument("decision_ref")
@click.option("--by", "by_ref", help="The decision that replaces it (id or decision#id).")
@json_option
@pass_app
def supersede(app: AppContext, decision_ref: str, by_ref: str | None, as_json: bool) -> None:
    """Mark an active decision superseded (optionally by another decision)."""
    record = app.memory.supersede(decision_ref, by=by_ref)
    if as_json:
        emit_json(record.to_dict())
    else:
        successor = record.data.get("superseded_by")
        click.echo(f"{record.ref} superseded" + (f" by decision#{successor}" if successor else ""))


@decision.command()
@click.argument("decision_ref")
@json_option
@pass_app
def revert(app: AppContext, decision_ref: str, as_json: bool) -> None:
    """Mark an active decision reverted (undone, nothing replaces it)."""
    record = app.memory.revert(decision_ref)
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(f"{record.ref} reverted")


COMMANDS = [add, update, show, list_, decision, dedup]
