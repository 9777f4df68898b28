"""What every command shares: the lazily opened store and output helpers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from recall.store import Store


class AppContext:
    def __init__(self, db_path: str | None) -> None:
        self.db_path = db_path
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        """The store, opened without embedding on write: loading the model would double the time
        of a one-row `recall add` and cost it two more waits for the write lock while an import runs
        (adr/0016). The row stays pending until the next `recall import` or `recall embed`."""
        if self._store is None:
            from recall.store import Store

            self._store = Store(self.db_path, embed_on_write=False)
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
