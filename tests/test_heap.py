"""The C heap keeps freed memory during an import (adr/0042): measured in page faults, glibc only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adapters import get_adapter
from recall import heap
from recall.ingest import run_import
from recall.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"

glibc_only = pytest.mark.skipif(not heap.supported(), reason="the trim threshold is a glibc malloc setting")


# Run in a fresh interpreter: in a long test process freed blocks land in the heap's bins, not at
# its top, and whether the top is trimmed depends on everything that ran before.
CHURN = """
import resource, sys
from recall import heap

def churn(rounds=60):
    # ~2 MiB in 96 KiB blocks (below the mmap threshold, so from the top of the heap), then freed:
    # one batch's rows, then the next batch's.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        blocks = [bytearray(96 * 1024) for _ in range(24)]
        del blocks
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

before = churn()
with heap.roomy_heap():
    churn(1)  # the heap grows once
    inside = churn()
after = churn()
print(before, inside, after)
"""


@glibc_only
def test_freed_memory_is_kept_inside_and_returned_outside() -> None:
    done = subprocess.run([sys.executable, "-c", CHURN], capture_output=True, text=True, check=True)
    before, inside, after = map(int, done.stdout.split())
    # Outside, every round hands its pages back and faults them in again (~24 × 24 pages).
    assert before > 10 * max(inside, 10), (before, inside, after)
    assert after > 10 * max(inside, 10), (before, inside, after)


def test_nested_and_concurrent_uses_share_one_setting() -> None:
    assert not heap.roomy()
    with heap.roomy_heap():
        with heap.roomy_heap():
            assert heap.roomy()
        assert heap.roomy()  # the inner exit leaves the outer import's setting alone
    assert not heap.roomy()


def test_an_import_runs_inside_the_roomy_heap(tmp_path: Path) -> None:
    seen: list[bool] = []
    store = Store(tmp_path / "recall.db")
    try:
        run_import(
            store,
            [get_adapter("claude")],
            paths=[FIXTURES / "claude-code"],
            embed_budget_seconds=0,
            progress=lambda done, total, path: seen.append(heap.roomy()),
        )
    finally:
        store.close()
    assert seen and all(seen)
    assert not heap.roomy()
