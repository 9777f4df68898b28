"""A session summary folds into its session's message in results instead of sitting beside it (adr/0022)."""

from __future__ import annotations

from typing import Any

import pytest

from recall.memory import Memory
from recall.results import Hit
from recall.search.folding import fold_summaries


def dumped(memory: Memory, title: str, *texts: str) -> None:
    messages = [{"role": "user" if n % 2 == 0 else "assistant", "content": t} for n, t in enumerate(texts)]
    memory.dump(title=title, project="shop", session_id=title, messages=messages)


@pytest.fixture
def two_sessions(memory: Memory) -> Memory:
    dumped(memory, "Zebra planning", "paint the zebra crossing outside the depot", "ok, white stripes then")
    dumped(memory, "Kiln repairs", "the kiln door hinge is broken", "order a new hinge from the supplier")
    memory.embed()  # a dump embeds its summary; the messages wait for `recall embed`
    return memory


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_summary_and_its_sessions_message_make_one_result(two_sessions: Memory, mode: str) -> None:
    hits = two_sessions.search("zebra crossing", mode=mode, project="shop", limit=10).hits  # type: ignore[arg-type]
    first = [h for h in hits if h.preview.startswith("paint the zebra")]
    assert first, [h.preview for h in hits]
    folded = {h.extra.get("summary") for h in hits if h.kind == "message"} - {None}
    zebra_summaries = [h for h in hits if h.kind == "session_summary" and "Zebra" in h.content]
    assert zebra_summaries == []
    assert len(folded) >= 1 and all(str(ref).startswith("session_summary#") for ref in folded)


def test_a_summary_whose_session_has_no_message_listed_stays(two_sessions: Memory) -> None:
    # Only the summary holds the title's word "planning".
    hits = two_sessions.search("planning", mode="keyword", project="shop", limit=10).hits
    assert [h.kind for h in hits] == ["session_summary"]


def test_without_folding_the_summary_sat_beside_its_message(two_sessions: Memory) -> None:
    """The situation folding exists for: the same query finds both rows."""
    kinds = {h.kind for h in two_sessions.search("zebra crossing", mode="keyword", project="shop", limit=10,
                                                  kind="session_summary").hits}  # fmt: skip
    assert kinds == {"session_summary"}


def hit(kind: str, row_id: int, session: int, **extra: Any) -> Hit:
    return Hit(kind=kind, id=row_id, project="p", created_at="", provenance="verbatim", preview="", content="",
               score=1.0, extra={"session_id": session, **extra})  # fmt: skip


def test_folding_keeps_the_limit_and_fills_the_freed_place() -> None:
    ranked = [
        hit("session_summary", 1, 7),
        hit("message", 10, 8),
        hit("message", 11, 7),
        hit("message", 12, 9),
    ]
    out = fold_summaries(ranked, 3)
    assert [(h.kind, h.id) for h in out] == [("message", 10), ("message", 11), ("message", 12)]
    assert out[1].extra["summary"] == "session_summary#1"


def test_a_summary_after_its_message_attaches_to_it() -> None:
    ranked = [hit("message", 11, 7), hit("session_summary", 1, 7), hit("message", 12, 9)]
    out = fold_summaries(ranked, 2)
    assert [(h.kind, h.id) for h in out] == [("message", 11), ("message", 12)]
    assert out[0].extra["summary"] == "session_summary#1"
