"""The `recall` command: a thin click layer over the core.

Commands open the store lazily (``recall --help`` and ``recall scrub`` never touch the database or
import SQLAlchemy) and every ``RecallError`` becomes one line on stderr and exit status 1.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from recall import __version__
from recall.cli.context import AppContext
from recall.errors import RecallError


class RecallGroup(click.Group):
    """Translates core errors into one clear line instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RecallError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=RecallGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    envvar="RECALL_DB",
    help="Database file (default: ~/.recall/recall.db; env RECALL_DB).",
)
@click.version_option(__version__, prog_name="recall")
@click.pass_context
def cli(ctx: click.Context, db_path: str | None) -> None:
    """recall: local memory for AI coding agents.

    Imports what your agents said and decided, and hands the right part back to the next one.
    """
    ctx.obj = AppContext(db_path)
    ctx.call_on_close(ctx.obj.close)


def _register() -> None:
    """Every ``recall/cli/*_cmd.py`` module contributes its ``COMMANDS``; adding one needs no edit here."""
    import pkgutil
    from importlib import import_module

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.endswith("_cmd"):
            for command in import_module(f"{__name__}.{info.name}").COMMANDS:
                cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="recall")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
