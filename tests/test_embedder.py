"""The local embedder, against the real ONNX model (two session loads, about a second in all)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from recall import heap
from recall.config import MODEL_DIR_ENV
from recall.errors import ModelUnavailable
from recall.search import embedder as emb
from recall.search.embedder import FakeEmbedder, OnnxEmbedder, get_embedder

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return OnnxEmbedder()


@pytest.fixture(scope="module")
def tampered_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the default model.onnx with one byte flipped (same size, other sha256)."""
    path = tmp_path_factory.mktemp("tampered") / "model.onnx"
    shutil.copyfile(emb.default_spec().onnx_path, path)
    with path.open("r+b") as handle:
        handle.seek(emb.DEFAULT_MODEL_SIZE // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))
    return path


def words(text: str) -> set[str]:
    return set(text.lower().replace(".", "").split())


def test_default_model_gives_unit_length_384_d_vectors(minilm: OnnxEmbedder) -> None:
    docs = minilm.embed_documents(["ok", "Café déjà vu: the build is green again."])
    query = minilm.embed_query("is the build green?")

    assert docs.shape == (2, 384) and docs.dtype == np.float32
    assert query.shape == (384,) and query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert (minilm.model_id, minilm.dim) == ("all-MiniLM-L6-v2-onnx-int8", 384)
    assert minilm.model_hash == emb.DEFAULT_MODEL_SHA256


def test_reproduces_sentence_transformers_quick_start_similarities(minilm: OnnxEmbedder) -> None:
    """Published fp32 figures 0.6660 / 0.1046 / 0.1411; the int8 file gives 0.668 / 0.105 / 0.140."""
    vectors = minilm.embed_documents(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = vectors @ vectors.T

    assert [sims[0, 1], sims[0, 2], sims[1, 2]] == pytest.approx([0.668, 0.105, 0.140], abs=0.005)


def test_paraphrase_sharing_no_word_ranks_its_target_first(minilm: OnnxEmbedder) -> None:
    target = "The database migration failed because the disk was full"
    query = "Storage ran out of space during a schema upgrade"
    distractors = [
        "Fixed the alignment of the login button on the settings page",
        "The user prefers tabs over spaces in Python files",
        "Renamed the helper that parses command line flags",
        "CI now caches downloaded packages between runs",
        "We chose React for the dashboard frontend",
    ]
    assert not words(query) & words(target)

    scores = minilm.embed_documents([*distractors, target]) @ minilm.embed_query(query)

    assert int(np.argmax(scores)) == len(distractors)


def test_batches_keep_input_order_and_match_one_at_a_time(minilm: OnnxEmbedder) -> None:
    rng = np.random.default_rng(7)
    vocab = ["cache", "index", "query", "vector", "agent", "commit", "branch", "deploy", "schema"]
    counts = rng.integers(1, 150, size=32)
    texts = [" ".join(rng.choice(vocab, size=int(n))) for n in counts]
    assert counts.sum() > emb.MAX_BATCH_TOKENS  # a token per word at least: more than one batch

    together = minilm.embed_documents(texts)
    alone = np.stack([minilm.embed_documents([text])[0] for text in texts])

    assert np.min(np.sum(together * alone, axis=1)) > 0.999


def test_texts_are_cut_at_256_tokens_not_at_the_tokenizer_files_128(minilm: OnnxEmbedder) -> None:
    phrase = "the service restarted after the deploy"
    at_180 = " ".join([phrase] * 30)  # 182 tokens with [CLS] and [SEP]
    at_600 = " ".join([phrase] * 100)
    endings = [" and the database stayed healthy", " but the network cable was unplugged"]

    vectors = minilm.embed_documents([at_600, at_600 + endings[1], at_180 + endings[0], at_180 + endings[1]])

    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > 0.99999  # the tail past 256 tokens never reached the model
    assert float(vectors[2] @ vectors[3]) < 0.99  # words after token 128 still count


def test_tampered_default_model_file_is_refused(tampered_model: Path) -> None:
    spec = dataclasses.replace(emb.default_spec(), onnx_path=tampered_model)

    with pytest.raises(ModelUnavailable, match="damaged or was replaced.*pip install --force-reinstall"):
        emb.verify_model_file(spec)


def test_model_directory_pinning_sha256_refuses_another_file(tampered_model: Path) -> None:
    directory = tampered_model.parent
    shutil.copyfile(emb.default_spec().tokenizer_path, directory / "tokenizer.json")
    (directory / emb.CONFIG_FILE).write_text(json.dumps({"sha256": emb.DEFAULT_MODEL_SHA256}))

    embedder = OnnxEmbedder(directory)
    with pytest.raises(ModelUnavailable, match='update "sha256"'):
        embedder.embed_query("anything")


def test_model_directory_with_vocab_txt_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm: OnnxEmbedder
) -> None:
    """vocab.txt alone rebuilds MiniLM's tokenizer exactly; recall-model.json sets id and prefixes."""
    directory = tmp_path / "my-model"
    directory.mkdir()
    (directory / "model.onnx").symlink_to(emb.default_spec().onnx_path)
    vocab = json.loads(emb.default_spec().tokenizer_path.read_text())["model"]["vocab"]
    (directory / "vocab.txt").write_text("".join(f"{token}\n" for token in sorted(vocab, key=vocab.get)))
    (directory / emb.CONFIG_FILE).write_text(
        json.dumps({"model_id": "minilm-from-vocab", "query_prefix": "search query: "})
    )
    monkeypatch.setenv(MODEL_DIR_ENV, str(directory))
    texts = ["Café déjà vu [SEP] naïve 東京 emoji 🙂", "x" * 150, "a literal [CLS] token in text"]

    custom = OnnxEmbedder()

    assert (custom.model_id, custom.model_hash) == ("minilm-from-vocab", emb.DEFAULT_MODEL_SHA256)
    cosines = np.sum(custom.embed_documents(texts) * minilm.embed_documents(texts), axis=1)
    assert np.min(cosines) > 0.99999
    prefixed = minilm.embed_documents(["search query: where is the cache?"])[0]
    assert float(custom.embed_query("where is the cache?") @ prefixed) > 0.99999


def test_model_directory_without_model_onnx_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))

    with pytest.raises(ModelUnavailable, match=f"No model.onnx .* unset {MODEL_DIR_ENV}"):
        OnnxEmbedder()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"pooling": "max"}, "pooling"),
        ({"max_len": 128}, "unknown keys"),
        ({"max_tokens": True}, "max_tokens"),
        ({"sha256": "abc"}, "64 hexadecimal"),
    ],
    ids=["bad-pooling", "unknown-key", "bool-as-int", "short-hash"],
)
def test_invalid_recall_model_json_is_refused(
    tmp_path: Path, config: dict[str, object], message: str
) -> None:
    (tmp_path / "model.onnx").write_bytes(b"")
    (tmp_path / "vocab.txt").write_text("[UNK]\n[CLS]\n[SEP]\n")
    (tmp_path / emb.CONFIG_FILE).write_text(json.dumps(config))

    with pytest.raises(ModelUnavailable, match=message):
        OnnxEmbedder(tmp_path)


def test_hash_is_cached_by_path_size_and_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    assert emb.file_sha256(model) == emb._sha256_file(model)

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"{path} hashed again")

    monkeypatch.setattr(emb, "_sha256_file", no_hashing)
    emb.file_sha256(model)  # served from RECALL_HOME/model-hashes.json
    os.utime(model, ns=(0, 0))
    with pytest.raises(AssertionError, match="hashed again"):
        emb.file_sha256(model)


def test_batches_are_length_sorted_and_bounded_by_the_token_budget() -> None:
    lengths = [200, 5, 30, 5, 256, 31, 600]

    batches = emb.plan_batches(lengths, max_tokens=256, max_texts=3)

    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(lengths)
    assert all(len(b) <= 3 and (len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 256) for b in batches)


def test_mean_pooling_ignores_padding_and_cls_takes_the_first_token() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 2.0], [99.0, 99.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)

    np.testing.assert_allclose(emb.pool(hidden, mask, "mean"), [[2.0, 1.0]])
    np.testing.assert_allclose(emb.pool(hidden, mask, "cls"), [[1.0, 0.0]])


def test_get_embedder_is_one_instance_across_threads() -> None:
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(get_embedder())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(seen) == 8 and all(embedder is seen[0] for embedder in seen)


def test_fake_embedder_is_deterministic_and_word_based() -> None:
    fake = FakeEmbedder()
    a, b, c = fake.embed_documents(["deploy the cache fix", "cache fix deployed", "lunch menu"])

    np.testing.assert_array_equal(fake.embed_query("deploy the cache fix"), a)
    np.testing.assert_allclose(np.linalg.norm([a, b, c], axis=1), 1.0, atol=1e-6)
    assert float(a @ b) > 0.4 > float(a @ c)
    assert (fake.model_id, fake.dim) == ("fake-hash-embedder", 384)


def test_importing_the_embedder_loads_no_heavy_module() -> None:
    code = (
        "import sys, recall.search.embedder; "
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )

    assert result.stdout.strip() == "[]"


# A fresh interpreter per side: the heap left by a load depends on everything the process did before.
_LOAD = """
import sys
from pathlib import Path
from recall import heap
from recall.search import embedder
if sys.argv[1] == "keep":
    heap.give_back = lambda: False
vectors = embedder.OnnxEmbedder().embed_documents(["the lock timeout on the import worker", "x", ""])
anon = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("RssAnon"))
sys.stdout.write(vectors.tobytes().hex() + " " + anon.split()[1])
"""


@pytest.mark.skipif(not heap.can_give_back(), reason="malloc_trim is glibc's")
def test_the_model_load_hands_its_freed_heap_back_and_embeds_the_same() -> None:
    """adr/0043: ~50 MiB the load frees go back to the kernel; the session is untouched, so the
    vectors are the same bytes."""
    sides = {}
    for side in ("keep", "trim"):
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, side], capture_output=True, text=True, check=True, cwd=REPO
        )
        vectors, anon_kib = done.stdout.split()
        sides[side] = (vectors, int(anon_kib))
    assert sides["trim"][0] == sides["keep"][0]
    assert sides["keep"][1] - sides["trim"][1] > 20 * 1024, sides["keep"][1] - sides["trim"][1]
