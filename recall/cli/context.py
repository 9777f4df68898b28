"""What every command shares: the library API (``recall.Memory``), opened lazily, and output helpers."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Self

import click

if TYPE_CHECKING:
    from recall.memory import Memory


class AppContext:
    def __init__(self, db_path: str | None) -> None:
        self.db_path = db_path
        self._memory: Memory | None = None

    @property
    def memory(self) -> Memory:
        """The one API every command calls; creating it opens nothing (the store opens on first use).

        Without embedding on write: loading the model would double the time of a one-row `recall add`
        and cost it two more waits for the write lock while an import runs (adr/0016). The row is
        embedded by the next meaning search, `recall import` or `recall embed`.
        """
        if self._memory is None:
            from recall.memory import Memory

            self._memory = Memory(self.db_path, embed_on_write=False)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None


pass_app = click.make_pass_decorator(AppContext)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
project_option = click.option(
    "--project", help="Project name (default: RECALL_PROJECT, else the current git repository)."
)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def scope_name(project: str | None) -> str:
    return f"project {project}" if project else "all projects"


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
