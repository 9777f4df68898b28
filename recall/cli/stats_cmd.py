"""`recall stats`: what the store holds, per kind and project, and what has a vector."""

from __future__ import annotations

from typing import Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app
from recall.results import Stats


@click.command()
@json_option
@pass_app
def stats(app: AppContext, as_json: bool) -> None:
    """Counts per kind and project, the database file, the keyword index and embeddings."""
    data = app.memory.stats()
    if as_json:
        emit_json(data.to_dict())
        return
    for heading, lines in _sections(data):
        click.echo(heading)
        for line in lines:
            click.echo(f"  {line}")


def _sections(data: Stats) -> list[tuple[str, list[str]]]:
    counts = [f"{kind}: {count:,}" for kind, count in data.counts.items()]
    if data.decisions_by_status:
        counts.append(
            "decisions by status: "
            + ", ".join(f"{k} {v}" for k, v in sorted(data.decisions_by_status.items()))
        )
    if data.breadcrumbs_expired:
        counts.append(f"expired breadcrumbs (out of search, still stored): {data.breadcrumbs_expired:,}")
    index = data.keyword_index
    keyword = (
        [f"complete: {index['indexed']:,} rows"]
        if index["complete"]
        else [f"INCOMPLETE: {index['indexed']:,} of {index['rows']:,} rows indexed; run `recall doctor`"]
    )
    projects = [
        f"{project}: " + ", ".join(f"{kind} {count:,}" for kind, count in counts_.items())
        for project, counts_ in data.projects.items()
    ]
    entities = [", ".join(f"{kind} {count:,}" for kind, count in data.entities.items()) or "none yet"]
    if data.sessions_unconnected:
        entities.append(f"{data.sessions_unconnected:,} sessions not connected yet (the next import does it)")
    return [
        (
            "Database",
            [
                data.database,
                f"{data.size_bytes / 1_048_576:.1f} MiB, schema {data.schema_version} of {data.schema_latest}",
            ],
        ),
        ("Stored", counts),
        ("Keyword index", keyword),
        ("Connections (entities)", entities),
        ("Embeddings", _embedding_lines(data.embeddings)),
        ("Projects", projects or ["none yet"]),
    ]


def _embedding_lines(vectors: dict[str, Any]) -> list[str]:
    if not vectors.get("model"):
        return [f"unavailable: {vectors.get('error')}; keyword search still works"]
    lines = [f"model: {vectors['model']}"]
    for kind, done in vectors["embedded"].items():
        pending = vectors["pending"].get(kind, 0)
        lines.append(
            f"{kind}: {done:,} embedded" + (f", {pending:,} pending (`recall embed`)" if pending else "")
        )
    skipped = vectors.get("not_embedded") or {}
    if skipped:
        why = ", ".join(f"{reason} {count:,}" for reason, count in skipped.items())
        lines.append(f"messages never embedded, by design (keyword search finds them): {why}")
    return lines


COMMANDS = [stats]
