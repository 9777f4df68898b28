"""`recall connect`: register recall with each coding agent, in that agent's own config files.

One run pins the same database (and, in project files, the same project) for every agent, so what
Claude Code stores, Cursor and Codex can find. Each agent module (``claude``, ``cursor``, ``vscode``,
``codex``, ``opencode``, ``pi``, ``gemini``) says which files it owns and how to edit them; ``plan`` applies the edits as pure text
transforms, which makes re-running a no-op, ``--dry-run`` an exact diff, and ``disconnect`` the
inverse of ``connect``: it removes exactly recall's entries, and a file connect created goes with them.

What each agent gets is in the agent modules' docstrings; hooks call ``recall dump --from-hook`` and
``recall context --hook`` (``recall.hooks``), OpenCode and Pi through a plugin or extension file that
recall writes whole (``ownedfile``), and where an agent offers no hook, connect says that
``recall import --watch`` (``recall.watch``) is the fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from recall.connect import claude, codex, cursor, gemini, opencode, pi, vscode
from recall.connect.launcher import Setup, default_launcher
from recall.connect.plan import Connection, FileResult, run

AGENTS: dict[str, ModuleType] = {
    "claude": claude,
    "cursor": cursor,
    "vscode": vscode,
    "codex": codex,
    "opencode": opencode,
    "pi": pi,
    "gemini": gemini,
}

__all__ = ["AGENTS", "Connection", "FileResult", "Report", "Setup", "connect", "connections", "make_setup"]


@dataclass(slots=True)
class Report:
    files: list[FileResult]
    notes: list[tuple[str, str]] = field(default_factory=list)  # (agent, sentence)

    @property
    def refused(self) -> list[FileResult]:
        return [f for f in self.files if any(step.action == "refused" for step in f.steps)]


def make_setup(
    db_path: Path, cwd: Path, *, global_scope: bool, project: str | None = None, remote: str | None = None
) -> Setup:
    """Resolve everything a run pins: absolute database path, project root and name, how to start recall."""
    from recall.project import resolve_project

    root = project_root(cwd)
    return Setup(
        db_path=db_path.expanduser().absolute(),
        root=root,
        home=Path.home(),
        project=None if global_scope else (project or resolve_project(root)),
        launcher=default_launcher(),
        global_scope=global_scope,
        remote=remote,
    )


def project_root(cwd: Path) -> Path:
    """The git work tree containing ``cwd`` (where agents look for project config), else ``cwd``."""
    start = cwd.absolute()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def detected_agents(home: Path) -> list[str]:
    """Agents with a config folder on this machine; Claude Code when none is found."""
    found = [name for name, module in AGENTS.items() if module.detected(home)]
    return found or ["claude"]


def connect(
    setup: Setup,
    agents: Sequence[str],
    *,
    hooks: bool = False,
    instructions: bool = False,
    remove: bool = False,
    dry_run: bool = False,
) -> Report:
    """Connect (or with ``remove``, disconnect) ``agents``; files are written unless ``dry_run``."""
    steps = []
    notes: list[tuple[str, str]] = []
    for name in agents:
        module = AGENTS[name]
        steps.extend(module.steps(setup, hooks=hooks, guidance=instructions, remove=remove))
        if not remove:
            notes.extend((name, note) for note in module.notes(setup, hooks=hooks))
    return Report(run(steps, dry_run=dry_run), notes)


def connections(db_path: Path, cwd: Path) -> list[Connection]:
    """What every agent's project and user config files say about recall (read only)."""
    found: list[Connection] = []
    seen: set[Path] = set()
    for global_scope in (False, True):
        setup = make_setup(db_path, cwd, global_scope=global_scope)
        for module in AGENTS.values():
            for connection in module.connections(setup):
                if connection.server_file not in seen:
                    seen.add(connection.server_file)
                    found.append(connection)
    return found
