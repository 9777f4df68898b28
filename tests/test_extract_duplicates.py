"""Extraction's near-duplicate check judges every keyword candidate on its words (adr/0042), so a
restatement is found even when many shorter records outrank it in BM25."""

from __future__ import annotations

from pathlib import Path

from recall.extract.candidate import Candidate
from recall.extract.prepare import prepare
from recall.models import RecordKind
from recall.store import NewRecord, Store

SAID = "the sqlite wal checkpoint stalls while a reader holds its snapshot open during an import"
# The same words in a long record: FTS5's length normalisation puts it below short ones.
STORED = SAID + ". Seen in " + ", ".join(f"worker{n} under load{n} in module{n}" for n in range(80))
# Short records, each with four of its words: better BM25 matches, but not restatements.
_WORDS = ("sqlite", "checkpoint", "stalls", "reader", "holds", "snapshot", "open", "import")
DECOYS = [" ".join((*(_WORDS[(i + k) % 8] for k in range(4)), "note", chr(97 + i))) for i in range(16)]
# Unrelated records, so that the query's words are rare in the project (BM25's inverse frequency).
OTHERS = [f"the billing service rounds invoice {n} to whole cents" for n in range(200)]


def test_a_restatement_below_many_better_keyword_matches_is_still_found(tmp_path: Path) -> None:
    store = Store(tmp_path / "recall.db")
    try:
        stored = store.add(NewRecord(RecordKind.LEARNING, STORED, "proj"))
        for text in DECOYS + OTHERS:
            store.add(NewRecord(RecordKind.LEARNING, text, "proj"))
        candidate = Candidate(RecordKind.LEARNING, SAID, rule="stated_finding", confidence=0.9, sources=())
        [record] = prepare(store, "proj", [candidate])
    finally:
        store.close()
    assert record.duplicate_of == stored
