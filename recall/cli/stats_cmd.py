"""`recall stats`: what the store holds, per kind and project."""

from __future__ import annotations

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app


@click.command()
@json_option
@pass_app
def stats(app: AppContext, as_json: bool) -> None:
    """Counts per kind and project, the database path and size, and its schema version."""
    data = app.store.stats()
    if as_json:
        emit_json(data)
        return
    click.echo(f"database: {data['database']} ({data['size_bytes'] / 1_048_576:.1f} MiB)")
    click.echo(f"schema:   version {data['schema_version']} (latest {data['schema_latest']})")
    click.echo("counts:   " + ", ".join(f"{kind} {count:,}" for kind, count in data["counts"].items()))
    if data["decisions_by_status"]:
        click.echo(
            "decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(data["decisions_by_status"].items()))
        )
    entities = data["entities"]
    click.echo("entities: " + ", ".join(f"{kind} {count:,}" for kind, count in entities.items()))
    if data["sessions_unconnected"]:
        click.echo(f"  {data['sessions_unconnected']:,} sessions not connected yet (the next import does it)")
    vectors = data.get("embeddings", {})
    if vectors.get("model"):
        click.echo(f"embeddings ({vectors['model']}):")
        for kind, done in vectors["embedded"].items():
            click.echo(f"  {kind}: {done:,} embedded, {vectors['pending'].get(kind, 0):,} pending")
    elif vectors.get("error"):
        click.echo(f"embeddings: unavailable ({vectors['error']})")
    for project, counts in data["projects"].items():
        click.echo(f"  {project}: " + ", ".join(f"{kind} {count:,}" for kind, count in counts.items()))


COMMANDS = [stats]
