"""Boundaries that keep the core reusable and the command fast to start."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EDGE_ONLY = {"click", "mcp", "jinja2", "uvicorn"}


EDGES = ("cli", "mcp_server", "web")  # packages under recall/ that only translate for people and agents


def _modules(path: Path) -> set[str]:
    """Every module ``path`` imports, by full dotted name (function-level imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _imports(path: Path) -> set[str]:
    names = {module.split(".")[0] for module in _modules(path)}
    if any(module.startswith(tuple(f"recall.{edge}" for edge in EDGES)) for module in _modules(path)):
        names.add("recall-edge")
    return names


def test_core_and_adapters_never_import_an_interface() -> None:
    offenders = []
    core = [
        p
        for p in (REPO / "recall").rglob("*.py")
        if not set(EDGES) & set(p.relative_to(REPO / "recall").parts) and p.name != "__main__.py"
    ]
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


def test_the_store_is_persistence_alone() -> None:
    """Searching, embedding and briefs are built on the store, never inside it (no import circle)."""
    above = ("recall.search", "recall.memory", "recall.brief", "recall.ingest", "recall.dump")
    offenders = {
        str(path.relative_to(REPO)): sorted(m for m in _modules(path) if m.startswith(above))
        for path in (REPO / "recall" / "store").rglob("*.py")
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_edges_reach_the_core_only_through_the_library_api() -> None:
    """The CLI, the MCP server, the web view and the hooks call ``recall.Memory``, not the store or
    search directly."""
    inner = ("recall.store", "recall.search", "recall.ingest", "recall.dump", "recall.watch")
    edge_files = [
        *(REPO / "recall" / "cli").rglob("*.py"),
        *(REPO / "recall" / "mcp_server").rglob("*.py"),
        *(REPO / "recall" / "web").rglob("*.py"),
        REPO / "recall" / "hooks.py",
    ]
    offenders = {
        str(path.relative_to(REPO)): sorted(m for m in _modules(path) if m.startswith(inner))
        for path in edge_files
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_web_view_starts_light() -> None:
    """`recall ui` binds and serves before SQLAlchemy, numpy or the model load: the store opens on a
    thread once the server is up, and the first page that needs it waits for it."""
    code = (
        "import sys\n"
        "from recall import Memory\n"
        "from recall.web import create_app\n"
        "create_app(Memory('/nonexistent/never.db'))\n"
        "heavy = {'sqlalchemy', 'sqlmodel', 'numpy', 'onnxruntime', 'tokenizers', 'mcp', 'pydantic'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
