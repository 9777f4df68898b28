"""`recall export` and `recall import-records`: records out to JSONL or markdown files, and back in."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option


@click.command()
@project_option
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    help="decision, learning, breadcrumb or note (repeat; default: all four).",
)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl", show_default=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Folder to write into (markdown needs one; jsonl: stdout without).",
)
@click.option("--provenance", help="Only records of this provenance (e.g. user_authored).")
@json_option
@pass_app
def export(
    app: AppContext,
    project: str | None,
    kinds: tuple[str, ...],
    fmt: str,
    out: str | None,
    provenance: str | None,
    as_json: bool,
) -> None:
    """Export decisions, learnings, breadcrumbs and notes (every project unless --project).

    JSONL (one record a line) is what `recall import-records` reads back; markdown writes, per
    project, one file per decision (ADR-like), learnings.md, breadcrumbs.md and each note at its path.
    """
    if out is None:
        if fmt == "markdown":
            raise click.UsageError("markdown writes many files: give --out FOLDER")
        from recall.records_export import jsonl_lines

        for line in jsonl_lines(
            app.memory.export_records(project=project, kinds=kinds, provenance=provenance)
        ):
            click.echo(line)
        return
    done = app.memory.export_files(Path(out), format=fmt, project=project, kinds=kinds, provenance=provenance)
    if as_json:
        emit_json(done.to_dict())
        return
    counts = (
        ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(done.counts.items()))
        or "nothing"
    )
    click.echo(f"exported {counts} to {len(done.files)} file(s) in {out}")


@click.command(name="import-records")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--project", help="Put every record in this project instead of the one it names.")
@json_option
@pass_app
def import_records(app: AppContext, file: str, project: str | None, as_json: bool) -> None:
    """Import records from a JSONL export (FILE, or - for stdin): scrubbed, stamped as yours, new ids,
    supersession links kept. Records already here are not added twice; bad lines are named and skipped."""
    if file == "-":
        report = app.memory.import_records(sys.stdin, project=project)
    else:
        try:
            handle = open(file, encoding="utf-8", errors="replace")  # noqa: SIM115
        except OSError as exc:
            raise click.ClickException(
                f"cannot read {file}: {exc.strerror}; give a JSONL file from `recall export`"
            ) from exc
        with handle:
            report = app.memory.import_records(handle, project=project)
    if as_json:
        emit_json(report.to_dict())
        return
    added = (
        ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(report.added.items()))
        or "nothing"
    )
    click.echo(
        f"imported {added}; {report.already_there} already there; {report.links} supersession link(s) restored"
        + (f"; {report.unlinked} pointed at decisions not in the file" if report.unlinked else "")
    )
    if report.refused:
        click.echo(f"{report.refused} line(s) refused:", err=True)
        for problem in report.problems:
            click.echo(f"  {problem}", err=True)


COMMANDS = [export, import_records]
