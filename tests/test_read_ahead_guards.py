"""What the read-ahead worker made of a new session (adr/0045) is taken only when it rests on what
the importing process's own reading would rest on; otherwise that process reads the session itself.

Each case reads a real Claude Code session the way the worker does (``read_source``, run here), alters
one thing the worker's reading depended on, stores it, and compares every table with a store that
read the session in-process. The altered readings also carry no mentions and no candidates, so had
one of them been taken the links and records would be missing and the comparison would fail.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import recall.extract.stage
import recall.store.entities
from adapters.base import ReadOptions
from recall.extract.ahead import ExtractionAhead
from recall.ingest import ImportSummary, store_transcripts
from recall.read_ahead import read_source
from recall.store import Store
from recall.store.entities import MentionsAhead
from recall.store.transcripts import Ready
from recall.summary import DraftAhead, SummaryDraft
from recall.summary_queue import _draft, write_due_summaries
from tests.test_read_ahead import dump, imported

# 388 messages (two transactions), 259 entity links, a decision and four learnings
SESSION = (
    Path(__file__).parent
    / "fixtures/transcripts/claude-code/real/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
)

Change = Callable[[Ready], None]


def stored(db: Path, change: Change | None = None) -> dict[str, list[tuple[object, ...]]]:
    """Every table after storing SESSION from what the worker's reading made of it (changed)."""
    Store(db).close()
    read = read_source("claude", SESSION, ReadOptions(), str(db))
    if change is not None:
        change(read.ready[0])
    store = Store(db)
    try:
        summary = ImportSummary()
        store_transcripts(store, read.transcripts, summary, ready=read.ready)
        write_due_summaries(store, summary.summaries_ahead)
    finally:
        store.close()
    return dump(db)


def in_process(db: Path) -> dict[str, list[tuple[object, ...]]]:
    store = Store(db)
    try:
        [transcript] = read_source("claude", SESSION, ReadOptions(), str(db)).transcripts
        store_transcripts(store, [transcript], ImportSummary())
        write_due_summaries(store)
    finally:
        store.close()
    return dump(db)


def mentions(change: Callable[[MentionsAhead], MentionsAhead]) -> Change:
    """Alter the connect stage's reading, and empty it of mentions."""

    def alter(ready: Ready) -> None:
        assert ready.mentions is not None
        empty = {keys: (tuple(() for _ in made[0]), {}) for keys, made in ready.mentions.parts.items()}
        ready.mentions = change(dataclasses.replace(ready.mentions, parts=empty))

    return alter


def extraction(change: Callable[[ExtractionAhead], ExtractionAhead]) -> Change:
    """Alter extraction's reading, and empty it of candidates."""

    def alter(ready: Ready) -> None:
        assert ready.extraction is not None and ready.extraction.analysis.candidates
        analysis = dataclasses.replace(ready.extraction.analysis, candidates=())
        ready.extraction = change(dataclasses.replace(ready.extraction, analysis=analysis))

    return alter


def summary(title: str | None) -> Change:
    """A summary drafted under ``title`` that says something no read of the store would."""

    def alter(ready: Ready) -> None:
        assert ready.summary is not None
        draft = dataclasses.replace(ready.summary.draft, content="drafted ahead")
        ready.summary = DraftAhead(ready.summary.title if title is None else title, draft)

    return alter


def other_answer(ahead: MentionsAhead) -> MentionsAhead:
    """The worker took ``numpy`` for one of the project's own modules; the store says it is not."""
    return dataclasses.replace(ahead, local={**ahead.local, "numpy": True})


CHANGES: dict[str, Change] = {
    "another project": mentions(lambda ahead: dataclasses.replace(ahead, project="elsewhere")),
    "other roots": mentions(
        lambda ahead: dataclasses.replace(ahead, paths=(ahead.paths[0], ("/somewhere/else",), None))
    ),
    "another answer on an imported name": mentions(other_answer),
    "other rows in a part": mentions(
        lambda ahead: dataclasses.replace(ahead, parts={keys[1:]: made for keys, made in ahead.parts.items()})
    ),
    "other messages": extraction(lambda ahead: dataclasses.replace(ahead, keys=ahead.keys[1:])),
    "another title for the summary": summary("another title"),
    "another project for extraction": extraction(
        lambda ahead: dataclasses.replace(
            ahead, analysis=dataclasses.replace(ahead.analysis, project="elsewhere")
        )
    ),
}


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[object, ...]]]:
    rows = in_process(tmp_path_factory.mktemp("in-process") / "recall.db")
    assert len(rows["entity_links"]) > 200 and rows["decisions"] and rows["learnings"]
    return rows


def test_the_workers_reading_as_made_stores_what_an_in_process_import_stores(
    tmp_path: Path, expected: dict[str, list[tuple[object, ...]]]
) -> None:
    assert stored(tmp_path / "recall.db") == expected


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_reading_resting_on_something_else_is_set_aside(
    tmp_path: Path, expected: dict[str, list[tuple[object, ...]]], name: str
) -> None:
    assert stored(tmp_path / "recall.db", CHANGES[name]) == expected


def test_an_unaltered_empty_reading_would_be_taken(tmp_path: Path) -> None:
    """The check above can fail: the same emptied readings, left resting on what they did, are taken."""
    rows = stored(tmp_path / "recall.db", mentions(lambda ahead: ahead))
    assert rows["entity_links"] == []
    rows = stored(tmp_path / "other.db", extraction(lambda ahead: ahead))
    assert rows["decisions"] == rows["learnings"] == []
    rows = stored(tmp_path / "third.db", summary(None))
    assert [row for row in rows["session_summaries"] if "drafted ahead" in row]


def test_a_summary_drafted_before_the_session_was_queued_again_is_set_aside(tmp_path: Path) -> None:
    in_process(tmp_path / "recall.db")
    store = Store(tmp_path / "recall.db")
    try:
        with store.transaction() as writer:
            session_id = store.connection.execute("SELECT id FROM sessions").fetchone()[0]
            writer.queue_summary(session_id)
            generation = writer.summary_generation(session_id)
        title = store.connection.execute("SELECT title FROM sessions").fetchone()[0]
        fake = SummaryDraft("t", "drafted ahead")
        assert generation is not None
        assert _draft(store, session_id, made=DraftAhead(title, fake, generation))[2] is fake
        assert _draft(store, session_id, made=DraftAhead(title, fake, generation - 1))[2] != fake
    finally:
        store.close()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """How often this process reads sessions for the connect stage and runs the extraction rules."""
    calls: collections.Counter[str] = collections.Counter()
    read, analyse = recall.store.entities.read_mentions, recall.extract.stage.analyse

    def counted_read(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["connect"] += 1
        return read(*args, **kwargs)

    def counted_analyse(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["extract"] += 1
        return analyse(*args, **kwargs)

    monkeypatch.setattr(recall.store.entities, "read_mentions", counted_read)
    monkeypatch.setattr(recall.extract.stage, "analyse", counted_analyse)
    yield calls


def test_the_importing_process_takes_what_the_worker_read(
    tmp_path: Path, counted: collections.Counter[str]
) -> None:
    """Through the real worker, sessions it read are neither connected nor extracted here again."""
    alone = imported(tmp_path / "alone.db", "claude", read_ahead=False)
    here_alone = collections.Counter(counted)
    counted.clear()
    ahead = imported(tmp_path / "ahead.db", "claude", read_ahead=True)

    assert ahead.sessions_new == alone.sessions_new == here_alone["extract"] == 14
    # The first file is read in-process while the worker starts. The connect stage reads a session
    # again when the worker read it before the store knew another folder of its project: how many
    # depends on how far ahead the worker was (test_an_unaltered_empty_reading_would_be_taken
    # shows a reading resting on the same is always taken).
    assert counted["extract"] <= 2 and counted["connect"] < here_alone["connect"]
    assert dump(tmp_path / "ahead.db") == dump(tmp_path / "alone.db")


def test_extraction_read_ahead_is_placed_only_on_the_very_messages(tmp_path: Path) -> None:
    """Candidates name messages by ordinal until placed on the stored ids of the same messages."""
    Store(tmp_path / "empty.db").close()
    read = read_source("claude", SESSION, ReadOptions(), str(tmp_path / "empty.db"))
    made = read.ready[0].extraction
    assert made is not None
    in_process(tmp_path / "recall.db")
    store = Store(tmp_path / "recall.db")
    try:
        with store.reading() as conn:
            session_id, *_ = conn.execute("SELECT id FROM sessions").fetchone()
            ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY ordinal")]
        placed = made.placed(store, session_id)
        assert placed is not None
        assert [c.sources for c in placed.candidates] == [
            tuple(ids[ordinal] for ordinal in c.sources) for c in made.analysis.candidates
        ]
        swapped = (made.keys[1], made.keys[0], *made.keys[2:])
        assert dataclasses.replace(made, keys=swapped).placed(store, session_id) is None
    finally:
        store.close()
