"""What every command shares: the lazily opened store and output helpers."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Self

import click

if TYPE_CHECKING:
    from recall.store import Store


class AppContext:
    def __init__(self, db_path: str | None) -> None:
        self.db_path = db_path
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from recall.store import Store

            self._store = Store(self.db_path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


pass_app = click.make_pass_decorator(AppContext)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def resolve_project_option(project: str | None) -> str:
    from recall.project import current_project

    return project if project else current_project()


class LazyBar:
    """A click progress bar on stderr, opened at the first report, when the total is known."""

    def __init__(self, label: str, *, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr, show_pos=True)
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
