"""Every test runs against its own recall home: nothing touches the user's real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall.memory import Memory
from recall.models import RecordKind
from recall.search.embedder import Embedder, FakeEmbedder, get_embedder
from recall.store import NewRecord, Store


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "recall-home"
    monkeypatch.setenv("RECALL_HOME", str(home))
    monkeypatch.delenv("RECALL_DB", raising=False)
    monkeypatch.delenv("RECALL_MODEL_DIR", raising=False)
    return home


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "recall.db"


# Modules whose tests also run on a PostgreSQL server (adr/0024): the same tests, the same API.
BOTH_BACKENDS = frozenset({"test_records", "test_keyword_search", "test_forget", "test_pg_backend"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run the store tests of ``BOTH_BACKENDS`` on SQLite and on PostgreSQL (``sqlite_only`` opts out)."""
    if "backend" not in metafunc.fixturenames or metafunc.module.__name__ not in BOTH_BACKENDS:
        return
    if metafunc.definition.get_closest_marker("sqlite_only"):
        return
    metafunc.parametrize("backend", ["sqlite", "postgresql"])


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def memory(db_path: Path, backend: str, request: pytest.FixtureRequest) -> Iterator[Memory]:
    """The library API on a real file with the fast fake embedder; tests about meaning use the real model.
    On the ``postgresql`` backend, on a fresh database of a throwaway server instead of the file."""
    db: str | Path = db_path if backend == "sqlite" else request.getfixturevalue("pg_url")
    with Memory(db, embedder=FakeEmbedder()) as opened:
        yield opened


@pytest.fixture
def store(memory: Memory) -> Store:
    """The persistence layer under ``memory`` (same file, same connection)."""
    return memory.store


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real shipped ONNX model, loaded once per test run."""
    return get_embedder()


@pytest.fixture
def real_memory(db_path: Path, minilm: Embedder) -> Iterator[Memory]:
    """The library API on a real file with the real model, for tests about meaning."""
    with Memory(db_path, embedder=minilm) as opened:
        yield opened


@pytest.fixture
def real_store(real_memory: Memory) -> Store:
    return real_memory.store


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake user home, with every agent's location variable cleared: never the real one."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("USERPROFILE", str(folder))
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "XDG_CONFIG_HOME",
        "APPDATA",
        "RECALL_CURSOR_ROOTS",
        "XDG_DATA_HOME",
        "OPENCODE_DB",
        "PI_CODING_AGENT_DIR",
        "GEMINI_CLI_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """One throwaway PostgreSQL server for the whole run (tests/postgres.py); skips without the binaries."""
    from postgres import serve

    yield from serve()


@pytest.fixture
def pg_url(pg_server: Any, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database on that server for one test."""
    import re
    import uuid

    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:8]
    return str(pg_server.create_database(name))


@pytest.fixture
def pottery(store: Store) -> Store:
    """Two projects, three kinds; ``glaze`` is in decisions, learnings and nearly every pottery row,
    ``kiln`` in both projects, ``weather`` in one row (the keyword tests on project counts)."""
    for n in range(9):
        kind = RecordKind.DECISION if n % 3 == 0 else RecordKind.LEARNING
        detail = "the kiln ran hot" if n % 4 == 0 else None
        text = f"glaze batch {n} cracked; café notes on the glazing"
        store.add(NewRecord(kind, text, "pottery", detail=detail, tags=("glaze",) * (n % 2)))
    store.add(NewRecord(RecordKind.BREADCRUMB, "fire the kiln again tomorrow", "pottery"))
    store.add(NewRecord(RecordKind.LEARNING, "weather was damp, glaze ran", "pottery"))
    for n in range(30):
        store.add(NewRecord(RecordKind.LEARNING, f"kiln schedule {n}: glaze at cone six", "ceramics"))
    return store
