"""The one project resolver: every adapter, the CLI and the MCP server name projects through it.

A project is named after the repository, not after whichever folder a session happened to start in:
walk up from the path to the git root (a worktree counts as its main repository), then take the
origin remote's repository name, else the root folder's name. A path outside any repository is named
after its own folder. Paths that no longer exist (deleted worktrees, another machine's transcripts)
fall back to the last component of the path as written: never a decoded host folder name. The one
exception is a deleted worktree in a layout that names its repository: ``<repo>/.claude/worktrees/x``
(Claude Code), ``<repo>/.worktrees/x``, ``<repo>-worktrees/x`` beside ``<repo>``, and Codex's
``~/.codex/worktrees/<id>/<repo>``. Such a path is named after that repository (resolved through git
when its folder still exists), so a session in a removed worktree joins its project.

Git is read from its files, not by running ``git``: a hook must not pay for a subprocess per session.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath

UNKNOWN_PROJECT = "unknown"
ALL_PROJECTS = "*"  # the project name that means every project, on every edge

_WORKTREES_SUFFIX = "-worktrees"
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


def resolve_project(path: str | os.PathLike[str] | None) -> str:
    """Name the project a working directory belongs to."""
    if path is None or str(path).strip() == "":
        return UNKNOWN_PROJECT
    return _resolve(str(path).strip())


def current_project(cwd: str | os.PathLike[str] | None = None) -> str:
    return resolve_project(cwd if cwd is not None else os.getcwd())


def default_project(explicit: str | None = None) -> str:
    """The project a call is about when it names none: the flag, then ``RECALL_PROJECT``, then the folder.

    ``recall connect`` pins ``RECALL_PROJECT`` in each agent's MCP entry, because an agent may start
    the server from another folder; the CLI honours it too, so every edge agrees on the answer.
    """
    return pinned_project(explicit) or current_project()


def pinned_project(explicit: str | None = None) -> str | None:
    """The project named by the flag or ``RECALL_PROJECT``, if either names one (no folder lookup)."""
    from recall.config import PROJECT_ENV

    for candidate in (explicit, os.environ.get(PROJECT_ENV)):
        if candidate is not None and candidate.strip():
            return candidate.strip()
    return None


@lru_cache(maxsize=4096)
def _resolve(raw: str) -> str:
    path = Path(raw).expanduser()
    if path.exists():
        start = path if path.is_dir() else path.parent
        root = _git_root(start.resolve())
        if root is not None:
            work_root, git_dir = root
            name = _origin_repo_name(git_dir)
            return name or work_root.name or UNKNOWN_PROJECT
        return start.resolve().name or UNKNOWN_PROJECT
    pure = pure_path(raw)
    owner = _worktree_owner(pure)
    if owner is not None:
        return _resolve(str(owner)) if Path(owner).exists() else owner.name or UNKNOWN_PROJECT
    return pure.name or UNKNOWN_PROJECT


def _worktree_owner(path: PurePosixPath | PureWindowsPath) -> PurePosixPath | PureWindowsPath | None:
    """The repository folder a worktree path belongs to, when its layout says so (innermost wins).

    A plain ``worktrees`` folder is not enough: people keep projects in folders of that name.
    """
    layout = _worktree_layout(path)
    return None if layout is None else layout[0]


def _worktree_layout(
    path: PurePosixPath | PureWindowsPath,
) -> tuple[PurePosixPath | PureWindowsPath, PurePosixPath | PureWindowsPath] | None:
    """(the repository folder, the worktree's own folder) of a path in a known worktree layout."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        below = parts[i + 1 :]
        if parts[i] == "worktrees" and parts[i - 1] == ".claude":
            return type(path)(*parts[: i - 1]), type(path)(*parts[: i + 2])
        if parts[i] == "worktrees" and parts[i - 1] == ".codex" and len(below) >= 2:
            # ~/.codex/worktrees/<id>/<repo>: the checkout is named after its repository.
            return type(path)(*parts[: i + 3]), type(path)(*parts[: i + 3])
        if parts[i] == ".worktrees":
            return type(path)(*parts[:i]), type(path)(*parts[: i + 2])
        if parts[i].endswith(_WORKTREES_SUFFIX) and len(parts[i]) > len(_WORKTREES_SUFFIX):
            owner = type(path)(*parts[:i], parts[i].removesuffix(_WORKTREES_SUFFIX))
            return owner, type(path)(*parts[: i + 2])
    return None


def pure_path(raw: str) -> PurePosixPath | PureWindowsPath:
    """``raw`` as a path of the system that wrote it (a transcript may come from Windows)."""
    return PureWindowsPath(raw) if _WINDOWS_PATH.match(raw) else PurePosixPath(raw.replace("\\", "/"))


def worktree_folder(raw: str) -> str | None:
    """The folder of the worktree ``raw`` lies in, when a known layout says so; else None."""
    layout = _worktree_layout(pure_path(raw))
    return None if layout is None else str(layout[1])


@lru_cache(maxsize=4096)
def checkout_root(raw: str) -> str:
    """The top folder of the checkout a working directory lies in, spelt as given.

    That is the git work tree when the folder exists here (a worktree's own folder, not its main
    repository's), else the worktree folder of a known layout, else the folder itself. Paths that
    sessions touched are named relative to it, so one file has one name in every checkout.
    """
    local = Path(raw).expanduser()
    if local.is_dir():
        for folder in (local, *local.parents):
            if (folder / ".git").exists():
                return str(folder)
        return raw
    return worktree_folder(raw) or raw


def _git_root(start: Path) -> tuple[Path, Path] | None:
    """(main work tree root, common git dir) for the repository containing ``start``, if any."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():
            common = _worktree_common_dir(folder, dot_git)
            if common is not None:
                # The main work tree sits beside its .git folder; a bare common dir has none.
                main_root = common.parent if common.name == ".git" else folder
                return main_root, common
            return folder, dot_git
    return None


def _worktree_common_dir(folder: Path, dot_git_file: Path) -> Path | None:
    try:
        first = dot_git_file.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = Path(first.removeprefix("gitdir:").strip())
    if not git_dir.is_absolute():
        git_dir = (folder / git_dir).resolve()
    commondir_file = git_dir / "commondir"
    try:
        rel = commondir_file.read_text(encoding="utf-8").strip()
        common = (git_dir / rel).resolve()
    except OSError:
        # Submodules and older layouts: the gitdir itself holds the config.
        common = git_dir
    return common if common.exists() else None


def _origin_repo_name(git_dir: Path) -> str | None:
    import configparser  # only a folder without RECALL_PROJECT is named from its git remote

    config = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        config.read(git_dir / "config", encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    section = 'remote "origin"'
    if not config.has_section(section):
        return None
    url = config.get(section, "url", fallback="").strip()
    return repo_name_from_url(url)


def repo_name_from_url(url: str) -> str | None:
    """``git@github.com:org/repo.git`` and ``https://host/org/repo`` both name ``repo``."""
    url = url.strip().rstrip("/")
    if not url:
        return None
    tail = re.split(r"[/:\\]", url)[-1]
    tail = tail.removesuffix(".git")
    return tail or None
