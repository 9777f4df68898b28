"""One name per file: relative to the project root, whichever host, machine or worktree wrote it.

Claude Code writes absolute paths (``/home/a/repo/src/x.py``), Codex patches and shell commands
write paths relative to their working directory (``src/x.py``), Cursor writes ``file://`` URIs and
Windows paths, people write whatever they like. All of them name the same file when taken relative
to the top of the checkout the session ran in: the git work tree, or for a session in a worktree
(``<repo>/.claude/worktrees/x``, ``<repo>-worktrees/x``, ...) the worktree's own folder. A path
outside every known root keeps its absolute form, with the user's home written ``~``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from copy import copy
from urllib.parse import unquote

from recall.project import checkout_root, worktree_folder

MAX_PATH_CHARS = 300

_DRIVE = re.compile(r"^/?([A-Za-z]):[\\/]")
_HOME = re.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root|[a-z]:/Users/[^/]+)(?=/|$)", re.IGNORECASE)
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$|#L\d+(?:-L?\d+)?$")
_NOT_A_PATH = re.compile(r"[\s*?<>|{}$]")


def clean_path(raw: str) -> str | None:
    """A path as written, with forward slashes and without quotes, ``file://`` or a line suffix."""
    text = raw.strip().strip("'\"`")
    if text.startswith("file://"):
        text = unquote(text[len("file://") :])
        if text.startswith("localhost/"):
            text = text[len("localhost") :]
    drive = _DRIVE.match(text)
    if drive:
        text = f"{drive.group(1).lower()}:/{text[drive.end() :]}".replace("\\", "/")
    text = _LINE_SUFFIX.sub("", text)
    if not text or len(text) > MAX_PATH_CHARS or _NOT_A_PATH.search(text) or text.startswith("-"):
        return None
    return text


class ProjectPaths:
    """Names the files of one session: relative to its checkout, or to any root its project knows.

    ``known_roots`` are the working directories of the project's other sessions: a session that ran
    in a subfolder, or on a checkout that no longer exists here, still names files from the root the
    others used. Among the roots that hold a path the shortest wins (a repository over its subfolder).
    """

    def __init__(self, cwd: str | None, known_roots: Iterable[str] = ()) -> None:
        self.cwd = _folder(cwd) if cwd else None
        roots = [self.cwd] if self.cwd else []
        roots += [folder for root in known_roots if (folder := _folder(root))]
        unique = {_key(checkout_root(r)): _folder(checkout_root(r)) for r in roots}
        self._roots = sorted((r for r in unique.values() if r and r != "/"), key=len)
        home = next((m.group(0) for r in self._roots if (m := _HOME.match(r))), None)
        self._home = home

    def basis(self) -> tuple[str | None, tuple[str, ...], str | None]:
        """What names files here: two with the same basis name every path alike (adr/0045)."""
        return self.cwd, tuple(self._roots), self._home

    def at(self, folder: str) -> ProjectPaths:
        """The same project seen from another working directory (a tool call's own ``workdir``)."""
        moved = copy(self)
        path = clean_path(folder) or ""
        if path and not _absolute(path) and self.cwd:
            path = f"{self.cwd}/{path}"
        moved.cwd = posixpath.normpath(path) if path else self.cwd
        return moved

    def file(self, raw: str) -> str | None:
        """The project-relative name of the file ``raw`` points at; None when it is no file path."""
        path = clean_path(raw)
        if path is None:
            return None
        if path.startswith("~/") and self._home:
            path = self._home + path[1:]
        if not _absolute(path):
            if self.cwd is None:
                return _relative_name(posixpath.normpath(path.removeprefix("./")))
            path = posixpath.normpath(f"{self.cwd}/{path}")
        path = posixpath.normpath(path)
        for root in self._roots:
            if _key(path) == _key(root):
                return None
            if _key(path).startswith(_key(root) + "/"):
                return _relative_name(path[len(root) + 1 :])
        inner = _inside_worktree(path)
        if inner is not None:
            return _relative_name(inner)
        home = _HOME.match(path)
        return "~" + path[home.end() :] if home else path


def _folder(raw: str) -> str:
    path = clean_path(raw) or ""
    return posixpath.normpath(path) if path else ""


def _key(path: str) -> str:
    """Windows paths compare without case; POSIX paths with it."""
    return path.lower() if _DRIVE.match(path) else path


def _absolute(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def _inside_worktree(path: str) -> str | None:
    """The rest of a path below a worktree folder of a known layout, if it lies in one."""
    folder = worktree_folder(path)
    if folder is None:
        return None
    folder = folder.replace("\\", "/")
    return path[len(folder) + 1 :] if path.startswith(folder + "/") else None


def _relative_name(rel: str) -> str | None:
    """A relative name, itself stripped of a worktree layout (a main checkout editing a worktree)."""
    if "worktrees" in rel:
        rel = _inside_worktree("/" + rel) or rel
    return None if rel in ("", ".", "..") or rel.endswith("/") else rel
