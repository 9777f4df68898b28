"""Which folder a Gemini CLI session ran in: Gemini stores no working directory with a chat.

Ground truth (gemini-cli ``config/storage.ts``, ``config/projectRegistry.ts``; shared/ref/more-hosts.md
§3): a project's files live in ``<gemini dir>/tmp/<id>/`` where ``<id>`` is the sha256 of the project
root (v0.1 – v0.28) or, from v0.29, a slug of the root's basename registered in
``<gemini dir>/projects.json`` as ``{"projects": {"<abs root>": "<slug>"}}``, with the root also
written to ``tmp/<slug>/.project_root``. Every chat still carries ``projectHash``, the sha256 of the
root, whatever the folder is called.

So a root is known for sure from the marker file or the registry, and otherwise can be recognised:
any candidate path whose sha256 equals the hash is the root. Candidates are the session's own
``directories``, the absolute paths its tools touched and their parents, and the folder recall runs
in. The folder name itself is never decoded into a path (glossary: Project).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath

from adapters._files import read_side_file
from adapters._jsonl import FileCache, home_dir, scrub_surrogates

HOME_ENV = "GEMINI_CLI_HOME"
ROOT_MARKER = ".project_root"
REGISTRY = "projects.json"
_HASH = re.compile(r"^[0-9a-f]{64}$")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]")


def gemini_dir() -> Path | None:
    """``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``; None when no home resolves."""
    configured = os.environ.get(HOME_ENV, "").strip()
    home = Path(configured).expanduser() if configured else home_dir()
    return home / ".gemini" if home is not None else None


def project_folder(path: Path) -> Path | None:
    """``tmp/<id>`` holding a Gemini file (``logs.json``, ``chats/...``), or None outside that layout."""
    for parent in Path(os.path.abspath(path)).parents:
        if parent.parent.name == "tmp":
            return parent
    return None


def sha256_of(root: str) -> str:
    return hashlib.sha256(root.encode("utf-8", "surrogatepass")).hexdigest()


def load_registry(path: Path) -> dict[str, str]:
    """``projects.json`` as slug → root; {} for anything unusable (it is optional metadata)."""
    data = read_side_file(path)
    try:
        root = json.loads(data.decode("utf-8", "replace")) if data is not None else None
    except (ValueError, RecursionError):
        return {}
    projects = root.get("projects") if isinstance(root, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {
        scrub_surrogates(slug): scrub_surrogates(folder)
        for folder, slug in projects.items()
        if isinstance(slug, str) and isinstance(folder, str) and folder.strip()
    }


class ProjectRoots:
    """Finds project roots, reading each ``projects.json`` once per change (one import reads many chats)."""

    def __init__(self) -> None:
        self._registries: FileCache[dict[str, str]] = FileCache(load_registry)

    def root(self, path: Path, project_hash: str | None, candidates: Iterable[str] = ()) -> str | None:
        """The project root of the Gemini file at ``path``; None when nothing identifies it."""
        folder = project_folder(path)
        known = self._declared(folder) if folder is not None else None
        target = project_hash if project_hash and _HASH.match(project_hash) else None
        if target is None and folder is not None and _HASH.match(folder.name):
            target = folder.name
        if known is not None and (target is None or sha256_of(known) == target):
            return known
        if target is None:
            return None
        for candidate in _with_parents([*candidates, os.getcwd()]):
            if sha256_of(candidate) == target:
                return candidate
        return None

    def _declared(self, folder: Path) -> str | None:
        """The root written in the folder's ``.project_root``, else the registry's for its slug."""
        marker = read_side_file(folder / ROOT_MARKER)
        if marker is not None:
            text = scrub_surrogates(marker.decode("utf-8", "replace")).strip()
            if text:
                return text
        registry = self._registries.get(folder.parent.parent / REGISTRY)
        return registry.get(folder.name) if registry else None


def _with_parents(paths: Iterable[str]) -> Iterable[str]:
    seen: set[str] = set()
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            continue
        pure = PureWindowsPath(raw) if _WINDOWS_PATH.match(raw) else PurePosixPath(raw)
        if not pure.is_absolute():
            continue
        for candidate in (pure, *pure.parents):
            text = str(candidate)
            if text not in seen:
                seen.add(text)
                yield text
