"""The `recall` command: a thin click layer over the core.

Every command calls the library API (``recall.Memory``), which opens the store lazily (``recall
--help`` and ``recall scrub`` never touch the database or import SQLAlchemy). Every error, a
``RecallError`` from the core or a usage error from click, becomes one line on stderr that names the
fix, and a non-zero exit.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from recall import __version__
from recall.cli.context import AppContext
from recall.errors import RecallError


class RecallGroup(click.Group):
    """Every error, usage errors included, reaches the user as one line that names the fix."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RecallError as exc:
            raise click.ClickException(str(exc)) from exc

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "recall"
            click.echo(f"recall: {_sentence(exc.format_message())} (see `{command} --help`)", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"recall: {_sentence(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("recall: interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


def _sentence(message: str) -> str:
    """Click's messages can span lines (choices, hints); one line reads better in a terminal or a log."""
    return " ".join(message.split())


@click.group(name="recall", cls=RecallGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    cli.main(prog_name="recall")


if __name__ == "__main__":  # pragma: no cover
    main()
