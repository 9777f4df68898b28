"""Forget means gone: after `recall forget`, no byte of the text is in any file beside the database,
not in the keyword index's pages, not in a vector snapshot, and no import brings it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from residue import index_leftovers, leftovers, plain_canary, secret_canary

from adapters import get_adapter
from recall.cli import cli
from recall.errors import InvalidInput, NotFound
from recall.ingest import run_import
from recall.kinds import Kind, Ref
from recall.memory import Memory
from recall.models import KIND_CODES, RecordKind
from recall.results import Hit
from recall.search import semantic
from recall.search.keyword import keyword_search
from recall.store import Store

CLAUDE = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code"
SHORT = CLAUDE / "real" / "spotter" / "short.jsonl"
SUBAGENT_LAYOUT = CLAUDE / "schema-fixtures" / "agent-sessions" / "subagent-layout"
PARENT = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


def on_disk(db_path: Path, *canaries: str) -> dict[str, list[str]]:
    return leftovers(db_path.parent, *canaries)


def import_claude(store: Store, folder: Path) -> dict:
    return run_import(store, [get_adapter("claude")], paths=[folder], embed_budget_seconds=0).to_dict()


@pytest.mark.sqlite_only  # bytes on disk and snapshot files: the SQLite file's own guarantees
@pytest.mark.parametrize("kind", [RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB])
def test_a_forgotten_record_leaves_no_text_on_disk(
    memory: Memory, store: Store, db_path: Path, kind: RecordKind
) -> None:
    plain, secretish = plain_canary(), secret_canary()
    memory.add(kind.value, "a neighbour that stays, about sqlite and wal", project="p", tags=["keep"])
    row_id = memory.add(
        kind.value, f"note {plain} here", project="p", detail=f"key {secretish} rotated", tags=[plain, "x"]
    ).id
    assert on_disk(db_path, plain, secretish)  # the test means something: the text was written

    report = memory.forget(row_id, kind.value)

    assert on_disk(db_path, plain, secretish) == {}
    assert index_leftovers(db_path, plain, secretish) == []
    assert keyword(store, plain) == [] and len(keyword(store, "sqlite")) == 1
    assert report.found and report.deleted == {kind.value: 1, "vector": 1}


def copy_with_canary(source: Path, target: Path, replacements: dict[str, str]) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    return target


@pytest.fixture
def subagent_session(tmp_path: Path) -> tuple[Path, str, str]:
    """The subagent layout fixture with canaries in the parent's request and the subagent's tool
    output, in a folder whose name holds a canary too (the source-file bookkeeping keeps paths)."""
    plain, secretish = plain_canary(), secret_canary()
    folder = tmp_path / "claude" / f"project-{plain}"
    copy_with_canary(
        SUBAGENT_LAYOUT / f"{PARENT}.jsonl",
        folder / f"{PARENT}.jsonl",
        {"Delegate a repo search to a subagent": f"Delegate the {plain} search to a subagent"},
    )
    child = Path(PARENT) / "subagents" / "agent-a0ad4f44468bdf20d.jsonl"
    copy_with_canary(SUBAGENT_LAYOUT / child, folder / child, {"a.txt:1: TODO fix": f"a.txt:1: {secretish}"})
    shutil.copy(SUBAGENT_LAYOUT / child.with_suffix(".meta.json"), folder / child.with_suffix(".meta.json"))
    return folder, plain, secretish


@pytest.mark.sqlite_only  # bytes on disk and snapshot files: the SQLite file's own guarantees
def test_a_forgotten_session_takes_everything_only_it_produced(
    memory: Memory,
    store: Store,
    db_path: Path,
    subagent_session: tuple[Path, str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder, plain, secretish = subagent_session
    assert import_claude(store, folder)["sessions"]["new"] == 2
    semantic.embed_pending(store, memory.embedder)
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 1)
    semantic.vector_index(store, memory.embedder)  # an in-process index and a snapshot on disk
    assert list(db_path.parent.glob("*.npz")) and on_disk(db_path, plain, secretish)
    parent_id = store.connection.execute(
        "SELECT id FROM sessions WHERE external_id = ?", (PARENT,)
    ).fetchone()[0]

    report = memory.forget(parent_id, "session")

    assert report.deleted["session"] == 1 and report.deleted["subagent session"] == 1
    assert report.deleted["message"] >= 4 and report.deleted["session_summary"] == 1
    assert report.deleted["vector"] > 0 and report.skipped_on_import == 2
    assert report.source_path is not None and plain in report.source_path
    assert "imports skip it" in report.message and "still at" in report.message
    assert on_disk(db_path, plain, secretish) == {}
    assert index_leftovers(db_path, plain, secretish) == []
    assert not list(db_path.parent.glob("*.npz")) and "vector_indexes" not in store.cache
    for table in ("sessions", "messages", "session_summaries", "embeddings", "source_files"):
        assert store.connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table

    again = import_claude(store, folder)  # the transcript is still on disk: it stays forgotten
    assert again["sessions"]["new"] == 0 and again["skipped"] == {"forgotten_session": 2}
    assert store.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0


@pytest.mark.sqlite_only  # bytes on disk and snapshot files: the SQLite file's own guarantees
def test_a_forgotten_message_leaves_its_summary_and_never_comes_back(
    memory: Memory, store: Store, db_path: Path, tmp_path: Path
) -> None:
    plain, secretish = plain_canary(), secret_canary()
    transcript = copy_with_canary(
        SHORT,
        tmp_path / "claude" / "spotter" / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl",
        {"mix phx.server doesnt seem to start": f"mix phx.server {plain} doesnt start, token {secretish}"},
    )
    import_claude(store, transcript.parent)
    (message_id,) = store.connection.execute(
        "SELECT id FROM messages WHERE content LIKE ?", (f"%{plain}%",)
    ).fetchone()
    summary_before = store.connection.execute("SELECT title, content FROM session_summaries").fetchone()
    assert plain in summary_before["title"] + summary_before["content"]

    report = memory.forget(f"message#{message_id}")

    assert report.found and report.summary_rebuilt and report.skipped_on_import == 1
    summary = store.connection.execute("SELECT title, content FROM session_summaries").fetchone()
    assert plain not in summary["title"] + summary["content"]
    assert on_disk(db_path, plain, secretish) == {}
    assert index_leftovers(db_path, plain, secretish) == []

    with transcript.open("a", encoding="utf-8") as handle:  # the session goes on: the file changes
        handle.write(json.dumps({
            "type": "user", "sessionId": "55604662-cf2a-4331-851a-ec234028f8ca", "uuid": "later-1",
            "cwd": "/home/marco/projects/spotter", "timestamp": "2026-02-10T21:20:00.000Z",
            "message": {"role": "user", "content": "try mix deps.get first"},
        }) + "\n")  # fmt: skip
    again = import_claude(store, transcript.parent)
    assert again["messages"]["added"] == 1 and again["skipped"]["forgotten_message"] == 1
    assert (
        store.connection.execute("SELECT count(*) FROM messages WHERE id = ?", (message_id,)).fetchone()[0]
        == 0
    )
    assert on_disk(db_path, plain, secretish) == {}


def test_a_forgotten_session_is_not_stored_again_by_a_dump(memory: Memory, store: Store) -> None:
    from recall.dump import dump_session

    messages = [{"role": "user", "content": "the flaky test again"}]
    first = dump_session(store, title="flaky", session_id="s-1", messages=messages)
    memory.forget(first.session_id, "session")
    with pytest.raises(NotFound, match="was forgotten"):
        dump_session(store, title="flaky", session_id="s-1", messages=messages)


def test_forget_reads_kind_and_id_in_either_form(memory: Memory) -> None:
    assert Ref.parse("decision#3") == Ref(Kind.DECISION, 3)
    assert Ref.parse(3, "Decisions") == Ref(Kind.DECISION, 3)
    assert Ref.parse("session#12") == Ref(Kind.SESSION, 12)
    for bad in ("decision#x", "decision"):
        with pytest.raises(InvalidInput):
            memory.forget(bad)
    with pytest.raises(InvalidInput, match="unknown kind"):
        memory.forget("widget#1")


def test_the_command_forgets_any_kind_by_kind_hash_id(db_path: Path, subagent_session: tuple) -> None:
    folder, plain, _ = subagent_session

    def run(*args: str):
        return CliRunner().invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)

    assert run("import", "--host", "claude", "--path", str(folder)).exit_code == 0
    result = run("forget", "session#1")
    assert result.exit_code == 0, result.output
    assert "session#1 forgotten" in result.output and "imports skip it" in result.output
    assert run("add", "decision", f"use {plain}", "--project", "p").output.strip() == "decision#1"
    data = json.loads(run("forget", "decision", "1", "--json").output)
    assert data["found"] is True and data["deleted"]["decision"] == 1
    missing = run("forget", "decision#1")
    assert missing.exit_code == 1 and "no decision#1" in missing.output
    assert on_disk(db_path, plain) == {}


@pytest.mark.sqlite_only  # bytes on disk and snapshot files: the SQLite file's own guarantees
def test_forgetting_vectors_leaves_no_snapshot_and_no_index_in_the_process(
    memory: Memory, store: Store, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "SNAPSHOT_MIN_ROWS", 1)
    kept = memory.add("learning", "wal mode helps readers", project="p").id
    gone = memory.add("learning", "pin numpy below three", project="p").id
    index = semantic.vector_index(store, memory.embedder)
    assert (KIND_CODES[RecordKind.LEARNING], gone) in set(
        zip(index.codes.tolist(), index.ids.tolist(), strict=True)
    )
    (snapshot,) = db_path.parent.glob("*.npz")
    writing = snapshot.with_name(f"{snapshot.name}.4242.1.part")  # another process is saving one right now
    writing.write_bytes(snapshot.read_bytes())

    report = memory.forget(gone, "learning")

    assert report.wiped is not None and report.wiped.snapshots_removed == 1
    assert not snapshot.exists() and not writing.exists()
    assert "vector_indexes" not in store.cache
    rebuilt = semantic.vector_index(store, memory.embedder)
    assert rebuilt.ids.tolist() == [kept]
