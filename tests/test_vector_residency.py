"""How much of a mapped vector snapshot a search leaves in the process's memory (adr/0043).

The kernel maps a file's pages 64 KiB or a whole large folio at a time, so a search that rescores
scattered rows made nearly every page of the snapshot resident; now it lets go, as it goes, of the
pages past ``KEEP_MAPPED_BYTES``. Measured in ``/proc/self/smaps``: Linux only.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np
import pytest

from recall.search import row_reader, vector_rows, vectors
from recall.search.row_reader import RowReader
from recall.search.vector_rows import VectorRows
from recall.search.vectors import VectorIndex, _hamming, _sign_bits, quantize

SMAPS = Path("/proc/self/smaps")
linux_only = pytest.mark.skipif(
    not SMAPS.exists() or not hasattr(mmap.mmap, "madvise"), reason="reads /proc/self/smaps, needs madvise"
)
ROWS = 60_000  # above EXACT_LIMIT: the search rescores a prefiltered pool of 10,000 scattered rows
DIM = 384


def resident_kib(path: Path) -> tuple[int, int]:
    """(Size, Rss) in KiB of this process's mappings of ``path``."""
    size = rss = 0
    inside = False
    for line in SMAPS.read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            inside = len(fields) >= 6 and fields[-1] == str(path)
        elif inside and fields[0] == "Size:":
            size += int(fields[1])
        elif inside and fields[0] == "Rss:":
            rss += int(fields[1])
    return size, rss


def mapped_index(folder: Path) -> tuple[VectorIndex, Path]:
    """An index of ``ROWS`` random unit vectors, saved to a snapshot and started again from it."""
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    quantized, scales = quantize(matrix)
    index = VectorIndex(1, DIM)
    index.vectors, index.scales = VectorRows(quantized), scales
    index.codes = np.ones(ROWS, dtype=np.int8)
    index.ids = np.arange(1, ROWS + 1, dtype=np.int64)
    index.projects = np.zeros(ROWS, dtype=np.int32)
    index.sessions = np.full(ROWS, -1, dtype=np.int64)
    index.ordinals = np.zeros(ROWS, dtype=np.int64)
    index.bits = _sign_bits(quantized)
    path = folder / "rows.db.vectors-1.npz"
    index.save(path, "test model")
    assert index.vectors.frozen == ROWS  # the index now reads its vectors from the file's pages
    return index, path


@linux_only
@pytest.mark.parametrize("reads", ["kernel reads", "through the mapping"])
def test_a_search_leaves_only_the_kept_part_of_the_mapped_vectors_resident(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: str
) -> None:
    """Rows past the kept part are read by the kernel (``RowReader``), or, where it cannot,
    through the mapping and let go of as the search goes."""
    monkeypatch.setattr(vector_rows, "KEEP_MAPPED_BYTES", 1 << 20, raising=False)
    # A pool of 10,000 in 60,000 rows is too dense for kernel reads to pay (a million rows is not).
    monkeypatch.setattr(vector_rows, "_KERNEL_READS_UP_TO", 10**6, raising=False)
    index, path = mapped_index(tmp_path)
    if reads == "through the mapping":
        index.vectors.reader = None
    size, before = resident_kib(path)
    assert size * 1024 > ROWS * DIM and before <= 64
    query = index.vectors.base[123].astype(np.float32) * index.scales[123]
    for _ in range(3):
        hits = index.search(query, k=10)
        assert hits[0][1] == 124  # the row itself comes first: the rows read were the right ones
        _, rss = resident_kib(path)
        # 1 MiB kept, plus the page the array starts in; 10,000 scattered rows touched ~all 22 MiB.
        assert rss <= 1024 + 64, rss


@linux_only
def test_a_scan_of_every_row_reads_through_the_mapping_and_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows as dense as a scan's cost less mapped than read one by one; their pages still go."""
    monkeypatch.setattr(vector_rows, "KEEP_MAPPED_BYTES", 1 << 20, raising=False)
    index, path = mapped_index(tmp_path)
    if index.vectors.reader is not None:
        monkeypatch.setattr(index.vectors.reader, "read", lambda rows: pytest.fail("read row by row"))
    query = index.vectors.base[5].astype(np.float32) * index.scales[5]
    scores = index.exact_scores(query, np.arange(ROWS, dtype=np.int64))
    assert int(np.argmax(scores)) == 5
    _, rss = resident_kib(path)
    assert rss <= 1024 + 64, rss


@linux_only
def test_a_snapshot_within_the_budget_stays_mapped_between_searches(tmp_path: Path) -> None:
    """Below ``KEEP_MAPPED_BYTES`` nothing is let go until searches stop: no page faults again."""
    assert vector_rows.KEEP_MAPPED_BYTES > ROWS * DIM
    index, path = mapped_index(tmp_path)
    query = index.vectors.base[7].astype(np.float32) * index.scales[7]
    index.search(query, k=10)
    _, rss = resident_kib(path)
    assert rss * 1024 > ROWS * DIM // 2  # most of the 22 MiB a pool of 10,000 rows touches


def test_the_chunked_prefilter_counts_the_same_hamming_distances(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "_HAMMING_CHUNK", 1_000)
    rng = np.random.default_rng(9)
    rows = rng.standard_normal((2_500, DIM)).astype(np.float32)  # two whole chunks and a partial one
    bits = _sign_bits(rows)
    query_bits = _sign_bits(rng.standard_normal((1, DIM)).astype(np.float32))[:, 0]
    expected = np.unpackbits((bits ^ query_bits[:, None]).T.copy().view(np.uint8), axis=1).sum(axis=1)
    distance = _hamming(bits, query_bits)
    assert distance.dtype == np.uint16 and np.array_equal(distance, expected)


kernel_reads = pytest.mark.skipif(
    RowReader.open(os.open(__file__, os.O_RDONLY), 1, 0) is None,
    reason="no Linux AIO in this kernel or process",
)


@kernel_reads
def test_the_kernel_reads_the_same_rows_as_the_mapping_in_any_order(tmp_path: Path) -> None:
    index, _ = mapped_index(tmp_path)
    reader = index.vectors.reader
    assert reader is not None
    rng = np.random.default_rng(2)
    rows = rng.integers(0, ROWS, 2 * row_reader.BATCH + 17)  # three submissions, repeats, any order
    assert np.array_equal(reader.read(rows), index.vectors.base[rows])
    assert reader.read(np.zeros(0, dtype=np.int64)).shape == (0, DIM)


@kernel_reads
def test_a_refused_read_falls_back_to_the_mapping_with_the_same_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_rows, "KEEP_MAPPED_BYTES", 1 << 20, raising=False)
    monkeypatch.setattr(vector_rows, "_KERNEL_READS_UP_TO", 10**6, raising=False)
    index, _ = mapped_index(tmp_path)
    query = index.vectors.base[99].astype(np.float32) * index.scales[99]
    expected = index.search(query, k=20)

    def refuse(rows: object) -> None:
        raise OSError("io_submit read 0 of 10000 rows")

    assert index.vectors.reader is not None
    monkeypatch.setattr(index.vectors.reader, "read", refuse)
    assert index.search(query, k=20) == expected
    assert index.vectors.reader is None  # from now on through the mapping


@kernel_reads
def test_the_kernel_reads_the_file_the_index_maps_even_once_replaced(tmp_path: Path) -> None:
    """Another process may write a new snapshot over the path (adr/0041): the reader keeps to the
    file the mapping views, never mixing rows of two files."""
    index, path = mapped_index(tmp_path)
    path.rename(tmp_path / "old.npz")
    path.write_bytes(b"\1" * (ROWS * DIM + 4096))  # a new file at the old path
    reader = index.vectors.reader
    assert reader is not None
    rows = np.arange(ROWS - 50, ROWS, dtype=np.int64)
    assert np.array_equal(reader.read(rows), index.vectors.base[rows])
