"""Boundaries that keep the core reusable and the command fast to start."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EDGE_ONLY = {"click", "mcp"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
            if node.module.startswith("recall.cli") or node.module.startswith("recall.mcp_server"):
                names.add("recall-edge")
    return names


def test_core_and_adapters_never_import_an_interface() -> None:
    offenders = []
    edges = {"mcp_server.py", "__main__.py"}
    core = [p for p in (REPO / "recall").rglob("*.py") if "cli" not in p.parts and p.name not in edges]
    for path in core + list((REPO / "adapters").rglob("*.py")):
        bad = _imports(path) & (EDGE_ONLY | {"recall-edge"})
        if bad:
            offenders.append(f"{path.relative_to(REPO)}: {sorted(bad)}")
    assert offenders == []


def test_adapters_never_touch_the_database_layer() -> None:
    for path in (REPO / "adapters").rglob("*.py"):
        assert not _imports(path) & {"sqlalchemy", "sqlmodel"}, path
        text = path.read_text(encoding="utf-8")
        assert "recall.store" not in text and "recall.db" not in text, path


def test_help_stays_light() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from recall.cli import cli\n"
        "CliRunner().invoke(cli, ['--help'])\n"
        "heavy = {'sqlalchemy', 'sqlmodel', 'numpy', 'onnxruntime', 'tokenizers', 'mcp', 'detect_secrets'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
