"""`recall note ...`: markdown notes at a path inside a project (recall.notes), over ``recall.Memory``."""

from __future__ import annotations

import sys

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app, project_option
from recall.results import Record


def _text(content: str | None, from_file: str | None) -> str:
    """The text given, read from a file, or from stdin (`-`), so long notes need no quoting."""
    if content is not None and from_file is not None:
        raise click.UsageError("give the text or --file, not both")
    if from_file is not None:
        if from_file == "-":
            return sys.stdin.read()
        with open(from_file, encoding="utf-8") as handle:
            return handle.read()
    if content is None:
        raise click.UsageError("give the text, or --file PATH (--file - reads stdin)")
    return content


def _show(record: Record, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(
            f"{verb} {record.data['path']} ({record.ref}, {len(str(record.data['content']))} characters)"
        )


@click.group()
def note() -> None:
    """Markdown notes at a path inside a project (notes/architecture.md), searched with everything else."""


@note.command()
@click.argument("path")
@click.argument("content", required=False)
@click.option("--file", "from_file", help="Read the text from this file (- for stdin).")
@project_option
@json_option
@pass_app
def write(
    app: AppContext, path: str, content: str | None, from_file: str | None, project: str | None, as_json: bool
) -> None:
    """Write the note at PATH whole, replacing any note there."""
    _show(app.memory.note_write(path, _text(content, from_file), project=project), as_json, "wrote")


@note.command()
@click.argument("path")
@project_option
@json_option
@pass_app
def read(app: AppContext, path: str, project: str | None, as_json: bool) -> None:
    """Print the note at PATH."""
    record = app.memory.note_read(path, project=project)
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(str(record.data["content"]), nl=not str(record.data["content"]).endswith("\n"))


@note.command()
@click.argument("path")
@click.argument("content", required=False)
@click.option(
    "--mode",
    type=click.Choice(["replace", "append", "prepend", "str_replace"]),
    default="append",
    show_default=True,
    help="str_replace is implied by --old.",
)
@click.option("--file", "from_file", help="Read the text from this file (- for stdin).")
@click.option("--old", help="The exact passage to replace; it must occur exactly once.")
@click.option("--new", help="What replaces --old (default: nothing).")
@project_option
@json_option
@pass_app
def edit(
    app: AppContext,
    path: str,
    content: str | None,
    mode: str,
    from_file: str | None,
    old: str | None,
    new: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Append, prepend or replace text in the note at PATH, or replace one passage with --old/--new."""
    if old is not None or mode == "str_replace":
        if content is not None or from_file is not None:
            raise click.UsageError("--old/--new replace one passage; give no other text")
        record = app.memory.note_edit(path, "str_replace", old=old, new=new or "", project=project)
    else:
        record = app.memory.note_edit(path, mode, _text(content, from_file), project=project)
    _show(record, as_json, "edited")


@note.command(name="list")
@click.argument("folder", required=False)
@project_option
@click.option("--all-projects", is_flag=True, help="Every project.")
@json_option
@pass_app
def list_(
    app: AppContext, folder: str | None, project: str | None, all_projects: bool, as_json: bool
) -> None:
    """List the notes (under FOLDER), by path."""
    listed = app.memory.note_list(folder, project="*" if all_projects else project)
    if as_json:
        emit_json({"notes": [record.to_dict() for record in listed]})
        return
    for record in listed:
        data = record.data
        click.echo(
            f"{data['path']}  {data['title']}  ({data['chars']} characters, {record.ref}, {data['project']})"
        )
    if not listed:
        click.echo("no notes", err=True)


@note.command()
@click.argument("path")
@project_option
@json_option
@pass_app
def delete(app: AppContext, path: str, project: str | None, as_json: bool) -> None:
    """Delete the note at PATH for good."""
    report = app.memory.note_delete(path, project=project)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.message)


COMMANDS = [note]
