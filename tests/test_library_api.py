"""The library API, ``recall.Memory``: what every edge calls, and what the README shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import recall
from recall import InvalidInput, Kind, Memory, NotFound, Ref
from recall.search.embedder import FakeEmbedder

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_package_exports_a_curated_api() -> None:
    assert set(recall.__all__) >= {"Memory", "Record", "SearchResults", "Page", "Ref", "Kind", "RecallError"}
    assert all(hasattr(recall, name) for name in recall.__all__)


def test_importing_the_api_loads_nothing_heavy() -> None:
    code = (
        "import sys, recall\n"
        "m = recall.Memory('/nonexistent/never.db')\n"
        "heavy = {'sqlalchemy', 'sqlmodel', 'numpy', 'onnxruntime', 'tokenizers', 'mcp', 'pydantic'}\n"
        "print(sorted(heavy & {name.split('.')[0] for name in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_readme_python_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"## Use it from Python.*?```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert block is not None
    monkeypatch.setenv("RECALL_DB", str(tmp_path / "readme.db"))
    monkeypatch.setenv("RECALL_PROJECT", "readme")
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {})  # noqa: S102 - our own documentation
    with Memory() as memory:
        assert memory.get("decision#1").data["status"] == "superseded"
        assert memory.get("decision#1").data["superseded_by"] == 2


def test_refs_name_rows_everywhere(memory: Memory) -> None:
    added = memory.add("learning", "WAL grows until a checkpoint", project="p")
    assert str(added.ref) == "learning#1" and added.to_dict()["ref"] == "learning#1"
    for way in ("learning#1", "learnings#1", " LEARNING # 1 ", added.ref, 1):
        kind = "learning" if way == 1 else None
        assert memory.get(way, kind).id == 1
    assert memory.get("1", "learning") == memory.get("learning#1")
    with pytest.raises(InvalidInput, match="is a learning, not a decision"):
        memory.get("learning#1", "decision")
    with pytest.raises(InvalidInput, match="needs its kind"):
        memory.get("1")
    with pytest.raises(NotFound, match="no learning with id 9"):
        memory.get("learning#9")
    assert memory.find("learning#9") is None
    assert Ref.parse("loa#4") == Ref(Kind.SESSION_SUMMARY, 4)


def test_the_default_project_is_the_flag_then_recall_project_then_the_folder(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "some-folder"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("RECALL_PROJECT", raising=False)
    with Memory(db_path, embedder=FakeEmbedder()) as memory:
        assert memory.add("learning", "a").project == "some-folder"
        monkeypatch.setenv("RECALL_PROJECT", "pinned")
        assert memory.add("learning", "b").project == "pinned"
        assert memory.add("learning", "c", project="named").project == "named"
        assert memory.search("b", mode="keyword").project == "pinned"
        assert memory.search("b", mode="keyword", project="*").project is None
        with pytest.raises(InvalidInput, match="belongs to one project"):
            memory.add("learning", "d", project="*")
    with Memory(db_path, project="own", embedder=FakeEmbedder()) as memory:
        assert memory.add("learning", "e").project == "own"


def test_add_update_supersede_revert_and_forget_through_one_object(memory: Memory) -> None:
    old = memory.add("decision", "Use tabs", project="p", tags="Style, style")
    new = memory.add("decision", "Use spaces", project="p")
    assert old.data["tags"] == ["style"] and old.trusted
    assert memory.update(old.ref, importance=8).data["importance"] == 8
    assert memory.supersede(old.ref, by=new.ref).data["superseded_by"] == new.id
    assert memory.revert(new.id).data["status"] == "reverted"
    gone = memory.forget("decision#1")
    assert gone.found and gone.to_dict()["ref"] == "decision#1" and gone.deleted["decision"] == 1
    assert not memory.forget("decision#1").found
    with pytest.raises(InvalidInput, match="unknown kind"):
        memory.add("session", "no")


def test_a_written_record_is_found_by_meaning_at_once(memory: Memory) -> None:
    memory.add("learning", "pytest caches test results in a hidden folder", project="p")
    hits = memory.search("pytest hidden folder caches", mode="semantic", project="p").hits
    assert [hit.ref for hit in hits] == ["learning#1"]


def test_keyword_search_can_step_in_with_meaning_when_it_finds_nothing(memory: Memory) -> None:
    memory.add("learning", "The migration ran out of disk", project="p")
    plain = memory.search("storage exhausted during upgrade", mode="keyword", project="p")
    assert plain.hits == () and not plain.retried_as_hybrid
    retried = memory.search(
        "storage exhausted during upgrade", mode="keyword", project="p", retry_as_hybrid=True
    )
    assert retried.retried_as_hybrid and retried.mode == "hybrid"


def test_stats_say_why_some_messages_have_no_vector(memory: Memory) -> None:
    memory.dump(
        title="t",
        project="p",
        messages=[{"role": "user", "content": "run the tests"}, {"role": "tool", "content": "3 passed"}],
    )
    stats = memory.stats()
    assert stats.counts["message"] == 2
    assert sum(stats.embeddings["not_embedded"].values()) == 1
    assert stats.keyword_index["complete"] is True
