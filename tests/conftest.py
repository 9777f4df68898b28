"""Every test runs against its own recall home: nothing touches the user's real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recall.memory import Memory
from recall.search.embedder import Embedder, FakeEmbedder, get_embedder
from recall.store import Store


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


@pytest.fixture
def memory(db_path: Path) -> Iterator[Memory]:
    """The library API on a real file with the fast fake embedder; tests about meaning use the real model."""
    with Memory(db_path, embedder=FakeEmbedder()) as opened:
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
