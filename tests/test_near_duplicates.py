"""Near-duplicates: `recall add` and MCP memory_add refresh the live record that already says it, and
`recall dedup` merges those already stored, keeping sources and supersession links. Meaning comes
from the real model; the thresholds themselves are measured in bench/near_duplicates.py."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from recall.cli import cli
from recall.mcp_server import create_server
from recall.memory import Memory
from recall.models import KIND_CODES, RecordKind
from recall.near_duplicates import likeness
from recall.search.embedder import Embedder

WAL = "Use SQLite with WAL for local dev"
WAL_AGAIN = "use sqlite with WAL for local development"

pytestmark = pytest.mark.slow


def count(memory: Memory, kind: str) -> int:
    return int(memory.store.connection.execute(f"SELECT count(*) FROM {kind}s").fetchone()[0])


def test_the_rule_joins_rewordings_and_keeps_apart_what_differs_in_one_thing(minilm: Embedder) -> None:
    def alike(a: str, b: str) -> bool:
        vectors = minilm.embed_documents([a, b])
        return likeness(a, b, float(vectors[0] @ vectors[1])).same_memory

    assert alike(WAL, WAL_AGAIN)
    assert alike("Deploy staging from main on every merge", "Every merge to main deploys staging")
    assert not alike(WAL, "Use Postgres for local dev")
    assert not alike("Bump the version to 0.2.0", "Bump the version to 0.3.0")
    assert not alike("Retry webhooks three times", "Retry webhooks five times")
    # Without the model only a near-identical wording counts.
    assert likeness(WAL, "use SQLite, with WAL, for local dev!", None).same_memory
    assert not likeness(WAL, WAL_AGAIN, None).same_memory


def test_add_refreshes_the_record_that_already_says_it(real_memory: Memory) -> None:
    first = real_memory.add("decision", WAL, project="shop", tags=["db"], importance=4)
    again = real_memory.add(
        "decision",
        WAL_AGAIN,
        project="shop",
        tags=["sqlite"],
        importance=7,
        detail="tests read while one writes",
    )

    assert again.ref == first.ref and again.refreshed is not None
    assert again.refreshed["cosine"] > 0.8
    assert again.data["content"] == WAL  # the stored wording stays
    assert again.data["tags"] == ["db", "sqlite"]
    assert again.data["importance"] == 7
    assert again.data["detail"] == "tests read while one writes"
    assert again.data["updated_at"] > first.data["updated_at"]
    assert count(real_memory, "decision") == 1
    assert again.to_dict()["refreshed"]["overlap"] > 0.3


def test_what_differs_or_lives_elsewhere_is_added(real_memory: Memory) -> None:
    first = real_memory.add("decision", WAL, project="shop")
    assert real_memory.add("decision", "Use Postgres for local dev", project="shop").ref != first.ref
    assert real_memory.add("decision", WAL_AGAIN, project="other").refreshed is None  # another project
    assert real_memory.add("learning", WAL_AGAIN, project="shop").refreshed is None  # another kind
    forced = real_memory.add("decision", WAL_AGAIN, project="shop", force=True)
    assert forced.ref != first.ref and forced.refreshed is None
    real_memory.supersede(first.ref)
    assert count(real_memory, "decision") == 4  # the other project's included
    # Only a live record is refreshed: the superseded one is not, the forced active one is.
    assert real_memory.add("decision", WAL, project="shop").ref == forced.ref


def test_a_refreshed_breadcrumb_keeps_the_later_expiry(real_memory: Memory) -> None:
    first = real_memory.add(
        "breadcrumb", "Next: paginate the /orders endpoint", project="shop", valid_until="1d"
    )
    again = real_memory.add(
        "breadcrumb", "Next: add pagination to the /orders endpoint", project="shop", valid_until="5d"
    )
    assert again.ref == first.ref
    assert again.data["valid_until"] > first.data["valid_until"]


def _source_messages(memory: Memory, count: int) -> list[int]:
    memory.dump(
        title="talk",
        project="shop",
        messages=[{"role": "user", "content": f"line {i}"} for i in range(count)],
    )
    return [int(row[0]) for row in memory.store.connection.execute("SELECT id FROM messages ORDER BY id")]


def test_dedup_merges_stored_duplicates_keeping_sources_and_supersession(real_memory: Memory) -> None:
    keep = real_memory.add("decision", WAL, project="shop", tags=["db"])
    dup = real_memory.add("decision", WAL_AGAIN, project="shop", tags=["wal"], force=True)
    older = real_memory.add("decision", "Use a JSON file for local dev storage", project="shop")
    real_memory.supersede(older.ref, by=dup.ref)
    other = real_memory.add("decision", "Use Postgres for local dev", project="shop")
    messages = _source_messages(real_memory, 2)
    code = KIND_CODES[RecordKind.DECISION]
    with real_memory.store.transaction() as writer:
        writer.add_sources(code, keep.id, messages[:1])
        writer.add_sources(code, dup.id, messages[1:])

    planned = real_memory.dedup(project="shop", dry_run=True)
    assert [(g.keep, [m.id for m in g.merged]) for g in planned.groups] == [(keep.id, [dup.id])]
    assert count(real_memory, "decision") == 4  # a dry run changes nothing

    done = real_memory.dedup(project="shop")
    assert done.merged == 1 and not done.dry_run
    assert real_memory.find(dup.ref) is None
    kept = real_memory.get(keep.ref)
    assert kept.data["tags"] == ["db", "wal"]
    assert sorted(kept.data["sources"]) == sorted(messages)
    assert real_memory.get(older.ref).data["superseded_by"] == keep.id
    assert real_memory.find(other.ref) is not None
    assert real_memory.dedup(project="shop").merged == 0


@pytest.fixture
def cli_db(tmp_path: Path, minilm: Embedder) -> Path:
    return tmp_path / "cli.db"


def run(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_add_names_the_record_it_refreshed_and_force_adds(cli_db: Path) -> None:
    assert run(cli_db, "add", "decision", WAL, "--project", "shop").strip() == "decision#1"
    said = run(cli_db, "add", "decision", WAL_AGAIN, "--project", "shop", "--tags", "sqlite")
    assert said.startswith("decision#1 refreshed: it already says this") and "--force" in said
    data = json.loads(run(cli_db, "add", "decision", WAL_AGAIN, "--project", "shop", "--json"))
    assert data["ref"] == "decision#1" and data["refreshed"]["cosine"] > 0.8 and data["tags"] == ["sqlite"]
    assert run(cli_db, "add", "decision", WAL_AGAIN, "--project", "shop", "--force").strip() == "decision#2"

    planned = json.loads(run(cli_db, "dedup", "--project", "shop", "--dry-run", "--json"))
    assert planned["merged"] == 1 and planned["groups"][0]["keep"] == "decision#1"
    assert "would merge decision#2" in run(cli_db, "dedup", "--dry-run")
    assert "1 near-duplicate record(s) merged in project shop" in run(cli_db, "dedup", "--project", "shop")
    assert (
        json.loads(run(cli_db, "list", "decision", "--project", "shop", "--json"))["records"][0]["ref"]
        == "decision#1"
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_memory_add_over_mcp_says_which_record_it_refreshed(db_path: Path, minilm: Embedder) -> None:
    with anyio.fail_after(90), Memory(db_path, project="shop", embedder=minilm) as memory:
        async with Client(create_server(memory)) as client:
            first = await client.call_tool(
                "memory_add",
                {"kind": "learning", "content": "SQLite needs PRAGMA foreign_keys=ON per connection"},
            )
            again = await client.call_tool(
                "memory_add",
                {
                    "kind": "learning",
                    "content": "PRAGMA foreign_keys must be turned on for every SQLite connection",
                },
            )
            forced = await client.call_tool(
                "memory_add",
                {
                    "kind": "learning",
                    "content": "PRAGMA foreign_keys must be turned on for every SQLite connection",
                    "force": True,
                },
            )
    assert first.structured_content is not None and again.structured_content is not None
    assert first.structured_content["refreshed"] is None
    assert again.structured_content["ref"] == first.structured_content["ref"] == "learning#1"
    assert again.structured_content["refreshed"]["cosine"] > 0.8
    text = again.content[0].text  # type: ignore[union-attr]
    assert text.startswith("not added: learning#1") and "force=true" in text
    assert forced.structured_content is not None and forced.structured_content["ref"] == "learning#2"


@pytest.mark.anyio
async def test_memory_dedup_over_mcp_says_then_merges(db_path: Path, minilm: Embedder) -> None:
    with anyio.fail_after(90), Memory(db_path, project="shop", embedder=minilm) as memory:
        keep = memory.add("decision", WAL)
        dup = memory.add("decision", WAL_AGAIN, force=True)
        async with Client(create_server(memory)) as client:
            said = await client.call_tool("memory_dedup", {})
            done = await client.call_tool("memory_dedup", {"dry_run": False})
        assert memory.find(dup.ref) is None and memory.find(keep.ref) is not None
    assert said.structured_content is not None and said.structured_content["dry_run"] is True
    assert said.structured_content["groups"][0]["keep"] == str(keep.ref)
    assert said.structured_content["groups"][0]["merged"][0]["ref"] == str(dup.ref)
    assert done.structured_content is not None and done.structured_content["merged"] == 1


def test_restating_an_extracted_record_accepts_it(real_memory: Memory) -> None:
    from recall.store.extracted import ExtractedRecord, ExtractionBatch

    done = real_memory.dump(
        title="talk", project="shop", messages=[{"role": "user", "content": "we use WAL"}]
    )
    found = ExtractedRecord(
        kind=RecordKind.DECISION, content=WAL, rule="stated_choice", version=1, confidence=0.5,
        fingerprint="f", sources=(),
    )  # fmt: skip
    real_memory.store.write_extraction(ExtractionBatch(done.session_id, "shop", (found,), (), frozenset(), 1))
    extracted = real_memory.list("decision", project="shop").records[0]
    assert extracted.provenance == "extracted" and extracted.data["extraction"]["review"] == "pending"

    again = real_memory.add("decision", WAL_AGAIN, project="shop")
    assert again.ref == extracted.ref and again.data["extraction"]["review"] == "accepted"
    assert again.provenance == "extracted"  # provenance is never rewritten


def test_an_expired_record_is_not_refreshed(real_memory: Memory) -> None:
    old = real_memory.add("learning", "SQLite needs PRAGMA foreign_keys=ON per connection", project="shop")
    real_memory.update(old.ref, valid_until="2020-01-01")
    again = real_memory.add(
        "learning", "PRAGMA foreign_keys must be turned on for every SQLite connection", project="shop"
    )
    assert again.refreshed is None and again.ref != old.ref


class CountingEmbedder:
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts = 0
        self.model_id, self.model_hash, self.dim = inner.model_id, inner.model_hash, inner.dim

    def embed_documents(self, texts: list[str]) -> object:
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> object:
        self.texts += 1
        return self.inner.embed_query(text)


def test_the_same_words_refresh_without_asking_the_model(db_path: Path, minilm: Embedder) -> None:
    counting = CountingEmbedder(minilm)
    with Memory(db_path, embedder=counting) as memory:  # type: ignore[arg-type]
        first = memory.add("decision", WAL, project="shop")
        asked = counting.texts
        again = memory.add("decision", "use SQLite, with WAL, for local dev!", project="shop")
        assert again.ref == first.ref and again.refreshed is not None
        assert again.refreshed["cosine"] is None  # decided on the words alone
        assert counting.texts == asked
        # A rewording with fewer shared words still needs the model, and gets it.
        reworded = memory.add("decision", WAL_AGAIN, project="shop")
        assert reworded.ref == first.ref and reworded.refreshed["cosine"] > 0.8
        assert counting.texts > asked


def test_saying_the_same_thing_again_refreshes_without_loading_the_model(
    db_path: Path, minilm: Embedder
) -> None:
    """An exact repeat is matched with a cosine of 1, as the model would rate it; a rewording still
    asks the model."""
    from recall.near_duplicates import find_duplicate

    with Memory(db_path, embedder=minilm) as memory:
        first = memory.add("decision", WAL, project="shop")
        asked: list[str] = []

        def model() -> Embedder:
            asked.append("model")
            return minilm

        same = find_duplicate(memory.store, RecordKind.DECISION, "shop", WAL, model)
        assert same is not None and asked == []
        assert same.id == first.id and same.likeness.cosine == 1.0
        with_model = likeness(
            WAL, WAL, float(minilm.embed_documents([WAL])[0] @ minilm.embed_documents([WAL])[0])
        )
        assert same.likeness.to_dict() == with_model.to_dict()

        reworded = find_duplicate(memory.store, RecordKind.DECISION, "shop", WAL_AGAIN, model)
        assert reworded is not None and reworded.id == same.id and asked == ["model"]
