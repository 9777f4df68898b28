"""Search by meaning through the library API, with the real ONNX model (loaded once, about a second)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.errors import InvalidInput
from recall.memory import Memory
from recall.models import RecordKind
from recall.results import Hit
from recall.search import hybrid, semantic
from recall.search.embedder import Embedder, FakeEmbedder
from recall.search.keyword import keyword_search
from recall.store import NewRecord, RecordChanges, Store
from recall.transcript import Origin, Role, Transcript, TranscriptMessage


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


pytestmark = pytest.mark.slow

DISTRACTORS = [
    "Fixed the alignment of the login button on the settings page",
    "The user prefers tabs in Python files",
    "Renamed the helper that parses command line flags",
    "CI now caches downloaded packages between runs",
    "We chose React for the dashboard frontend",
]
TARGET = "The database migration failed because the disk was full"
PARAPHRASE = "Storage ran out of space during a schema upgrade"


def add(memory: Memory, content: str, project: str = "p") -> int:
    """A learning through the library API, which embeds it on write."""
    return memory.add("learning", content, project=project).id


def find(memory: Memory, query: str, mode: str = "semantic", **options: Any) -> list[Hit]:
    return list(memory.search(query, mode=mode, **options).hits)  # type: ignore[arg-type]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_paraphrase_sharing_no_word_finds_its_target_first(real_memory: Memory, mode: str) -> None:
    assert not words(PARAPHRASE) & words(TARGET)
    for text in DISTRACTORS:
        add(real_memory, text)
    target = add(real_memory, TARGET)
    assert not keyword(real_memory.store, PARAPHRASE, project="p")  # the stemmed index shares no stem either

    hits = find(real_memory, PARAPHRASE, mode, project="p")  # type: ignore[arg-type]

    assert hits[0].id == target
    assert hits[0].keyword_score is None and hits[0].cosine is not None


def test_vectors_of_another_model_are_never_compared(db_path: Path, minilm: Embedder) -> None:
    fake = FakeEmbedder()
    with Memory(db_path, embedder=fake) as memory:
        by_fake = add(memory, TARGET)
        fake_hits = find(memory, TARGET, project="p")
    with Memory(db_path, embedder=minilm) as memory:
        # The same memory reworded: forced, or the add would refresh the fake model's row.
        by_minilm = memory.add(
            "learning", "The disk filled up while the database migration ran", project="p", force=True
        ).id
        real_hits = find(memory, PARAPHRASE, project="p")
        pending = semantic.count_pending(memory.store, semantic.model_key(memory.store, minilm))

    assert [h.id for h in real_hits] == [by_minilm]
    assert [h.id for h in fake_hits] == [by_fake]
    assert pending[RecordKind.LEARNING.value] == 1  # the fake model's row still waits for a MiniLM vector


def test_the_project_filter_holds_on_the_vector_side(real_memory: Memory, minilm: Embedder) -> None:
    mine = add(real_memory, TARGET, project="mine")
    add(real_memory, TARGET, project="theirs")

    for mode in ("semantic", "hybrid"):
        hits = find(real_memory, PARAPHRASE, mode, project="mine")  # type: ignore[arg-type]
        assert [(h.id, h.project) for h in hits] == [(mine, "mine")]
    index = semantic.vector_index(real_memory.store, minilm)
    assert index.search(minilm.embed_query(PARAPHRASE), k=10, project="nowhere") == []


def test_scores_stay_between_zero_and_one_and_min_score_filters(real_memory: Memory) -> None:
    for text in [*DISTRACTORS, TARGET, "The disk is full again", "full disk, full database"]:
        add(real_memory, text)

    for mode in ("semantic", "hybrid"):
        every = find(real_memory, "database disk full", mode, project="p", limit=50)  # type: ignore[arg-type]
        assert every and all(0.0 <= h.score <= 1.0 for h in every)
        strong = find(real_memory, "database disk full", mode, project="p", limit=50, min_score=0.5)  # type: ignore[arg-type]
        assert strong and len(strong) < len(every) and all(h.score >= 0.5 for h in strong)
    with pytest.raises(InvalidInput):
        find(real_memory, "disk", "hybrid", min_score=1.5)


def conversation(turns: int) -> Transcript:
    messages = tuple(
        TranscriptMessage(key=str(n), role=Role.USER if n % 2 else Role.ASSISTANT, text=f"turn {n} about caching",
                          origin=Origin.HUMAN if n % 2 else Origin.AGENT)
        for n in range(turns)
    )  # fmt: skip
    return Transcript(host="test", external_id="s1", messages=messages)


def test_embedding_resumes_after_a_stop(
    db_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "BATCH_ROWS", 4)
    with Store(db_path) as store:
        store.import_transcripts([conversation(10)], project="p")
        key = semantic.model_key(store, minilm)

        nothing = semantic.embed_pending(store, minilm, budget_seconds=0.0)

        def stop(done: int, total: int) -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            semantic.embed_pending(store, minilm, progress=stop)
        halfway = semantic.count_embedded(store, key)["message"]
        rest = semantic.embed_pending(store, minilm)

    assert (nothing.embedded, nothing.pending) == (0, 10)
    assert halfway == 4  # the first batch was committed before the stop
    assert (rest.embedded, rest.pending) == (6, 0)


def test_rebuild_embeds_everything_again(db_path: Path, real_memory: Memory, minilm: Embedder) -> None:
    add(real_memory, TARGET)
    add(real_memory, "another learning")
    real_memory.store.connection.execute("UPDATE embeddings SET scale = 0")  # vectors of "another model"
    assert find(real_memory, PARAPHRASE, project="p") == []  # no vector of this model: nothing, not zeros

    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "embed", "--rebuild", "--json"], catch_exceptions=False
    )

    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["embedded"] == 2
    assert (
        semantic.count_embedded(real_memory.store, semantic.model_key(real_memory.store, minilm))["learning"]
        == 2
    )
    assert find(real_memory, PARAPHRASE, "semantic", project="p")[0].cosine > 0.3


def test_deleting_or_editing_a_record_drops_its_old_vector(real_memory: Memory) -> None:
    kept = add(real_memory, "Use WAL mode for concurrent readers")
    gone = add(real_memory, TARGET)
    before = vector_hash(real_memory.store, kept)

    real_memory.update(f"learning#{kept}", content="Pin numpy below 3 in the lock file")
    real_memory.forget(f"learning#{gone}")

    assert vector_hash(real_memory.store, gone) is None
    assert vector_hash(real_memory.store, kept) not in (None, before)
    hits = find(real_memory, "which numpy version is allowed", "semantic", project="p")
    assert [h.id for h in hits] == [kept]


def vector_hash(store: Store, row_id: int) -> str | None:
    row = store.connection.execute(
        "SELECT content_hash FROM embeddings WHERE kind_code = 2 AND row_id = ?", (row_id,)
    ).fetchone()
    return None if row is None else row[0]


def test_the_keyword_half_of_hybrid_finds_other_forms_of_a_word(real_memory: Memory) -> None:
    """The index stems (adr/0010), so hybrid's keyword half needs no query stemming of its own."""
    target = add(real_memory, "Caroline went painting with her family")
    for text in DISTRACTORS:
        add(real_memory, text)
    hits = find(real_memory, "When did she paint with her families?", "hybrid", project="p")
    assert hits[0].id == target and hits[0].keyword_rank == 1


def test_the_turns_after_a_keyword_match_inherit_part_of_its_score() -> None:
    keyword = {10: 4.0, 20: 1.0}
    carried = hybrid.carry_forward(keyword, {10: [20, 30], 20: [30]}, carry=0.5)
    assert carried == {10: 4.0, 20: 2.0, 30: 1.0}


def test_an_edit_during_embedding_never_leaves_a_stale_vector(store: Store) -> None:
    """Another thread or process edits a row while the model runs: the old text's vector is dropped."""
    row_id = store.add(NewRecord(RecordKind.LEARNING, "postgres connection pool exhausted", "p"))
    semantic.drop_vectors(store)

    class EditingEmbedder(FakeEmbedder):
        edited = False

        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            vectors = super().embed_documents(texts)
            if not EditingEmbedder.edited:
                EditingEmbedder.edited = True
                store.update(RecordKind.LEARNING, row_id, RecordChanges(content="redis eviction policy"))
            return vectors

    racing = EditingEmbedder()
    semantic.embed_pending(store, racing)
    stale = hybrid.search(store, "postgres connection pool", mode="semantic", project="p", embedder=racing)
    fresh = hybrid.search(store, "redis eviction policy", mode="semantic", project="p", embedder=racing)
    assert stale == []  # the row's only vector is of its new text, orthogonal to the old words
    assert fresh[0].cosine == pytest.approx(1.0, abs=0.02)


def test_an_edit_updates_the_in_memory_index_without_reloading_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall.search.vectors import VectorIndex

    ids = [add(memory, f"note {n} on caching") for n in range(5)]
    memory.search("caching", mode="semantic", project="p")
    resets: list[int] = []
    monkeypatch.setattr(VectorIndex, "_reset", lambda self: resets.append(1))
    memory.update(f"learning#{ids[0]}", content="queue backpressure")
    hits = memory.search("queue backpressure", mode="semantic", project="p").hits
    assert resets == []
    assert hits[0].id == ids[0] and sum(h.id == ids[0] for h in hits) == 1


def test_exact_scores_are_the_dequantised_cosines_in_any_order_and_across_chunks() -> None:
    import numpy as np

    from recall.search.vector_rows import VectorRows
    from recall.search.vectors import _EXACT_CHUNK, VectorIndex, quantize

    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((_EXACT_CHUNK + 500, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[7] + 0.5 * matrix[_EXACT_CHUNK + 9]
    query = (query / np.linalg.norm(query)).astype(np.float32)
    index = VectorIndex(1, 384)
    vectors, index.scales = quantize(matrix)
    index.vectors = VectorRows(vectors)
    positions = rng.permutation(len(matrix))
    got = index.exact_scores(query, positions)
    dequantised = index.vectors[positions].astype(np.float64) * index.scales[positions, None]
    assert got.dtype == np.float32 and got.shape == (len(matrix),)
    assert np.allclose(got, dequantised @ query, atol=1e-5)
    assert np.abs(got - matrix[positions] @ query).max() < 0.02  # int8 keeps cosines to ~1e-2
    assert positions[np.argmax(got)] in (7, _EXACT_CHUNK + 9)
