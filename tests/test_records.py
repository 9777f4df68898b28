"""Typed records: written and read back, normalised, corrected, forgotten, moved through the lifecycle."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from recall.errors import InvalidInput, InvalidTransition, NotFound
from recall.memory import Memory
from recall.models import RecordKind
from recall.results import Hit
from recall.search.keyword import keyword_search
from recall.store import NewRecord, RecordChanges, Store
from recall.store.records import normalise_tags, parse_kind, parse_when


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        (RecordKind.DECISION, {"confidence": "high"}),
        (RecordKind.LEARNING, {"confidence": "low"}),
        (RecordKind.BREADCRUMB, {"valid_until": datetime(2099, 1, 1, tzinfo=UTC)}),
    ],
    ids=["decision", "learning", "breadcrumb"],
)
def test_every_kind_is_written_and_read_back(store: Store, kind: RecordKind, extra: dict) -> None:
    new_id = store.add(
        NewRecord(kind, "  Use WAL mode  ", "proj", detail="readers", tags=("DB",), importance=7, **extra)
    )
    row = store.require(kind, new_id)
    assert row["kind"] == kind.value
    assert row["content"] == "Use WAL mode"
    assert row["detail"] == "readers"
    assert row["project"] == "proj"
    assert row["importance"] == 7
    assert row["tags"] == ["db"]
    assert row["provenance"] == "user_authored"
    assert row["created_at"] == row["updated_at"]
    if kind is RecordKind.DECISION:
        assert row["status"] == "active"
        assert row["superseded_by"] is None
        assert row["confidence"] == "high"
    if kind is RecordKind.BREADCRUMB:
        assert row["valid_until"].startswith("2099-01-01")


def test_tags_are_lowercased_trimmed_deduplicated_in_order() -> None:
    assert normalise_tags([" Zeta", "alpha ", "ZETA", "", "Beta,alpha", "two  words"]) == [
        "zeta",
        "alpha",
        "beta",
        "two words",
    ]
    assert normalise_tags("a, B ,a,,c") == ["a", "b", "c"]
    assert normalise_tags(None) == []


def test_stored_tags_are_normalised(store: Store) -> None:
    new_id = store.add(NewRecord(RecordKind.LEARNING, "x", "p", tags=("B", "a", " b ")))
    assert store.require(RecordKind.LEARNING, new_id)["tags"] == ["b", "a"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": "   "}, "content must not be empty"),
        ({"importance": 11}, "importance"),
        ({"importance": 0}, "importance"),
        ({"confidence": "sure"}, "confidence"),
        ({"metadata": {"note": "x" * 5000}}, "over 4,096 bytes"),
        ({"metadata": ["not", "an", "object"]}, "JSON object"),
        ({"source": "s" * 5000}, "source is over"),
    ],
    ids=[
        "empty",
        "importance-high",
        "importance-low",
        "confidence",
        "metadata-too-big",
        "metadata-list",
        "source-too-big",
    ],
)
def test_invalid_input_is_refused_with_a_message(store: Store, kwargs: dict, message: str) -> None:
    values = {"kind": RecordKind.DECISION, "content": "ok", "project": "p", **kwargs}
    with pytest.raises(InvalidInput, match=message):
        store.add(NewRecord(**values))


def test_update_corrects_in_place_and_keeps_created_at(store: Store) -> None:
    new_id = store.add(NewRecord(RecordKind.LEARNING, "pytest needs -q", "p"))
    before = store.require(RecordKind.LEARNING, new_id)
    time.sleep(0.002)
    after = store.update(RecordKind.LEARNING, new_id, RecordChanges(content="pytest wants -q", tags=("CI",)))
    assert after["content"] == "pytest wants -q"
    assert after["tags"] == ["ci"]
    assert after["created_at"] == before["created_at"]
    assert after["updated_at"] > before["updated_at"]
    assert [h.id for h in keyword(store, "wants", project="p")] == [new_id]
    assert keyword(store, "needs", project="p") == []


def test_forget_deletes_row_and_index_entry(memory: Memory, store: Store) -> None:
    new_id = store.add(NewRecord(RecordKind.BREADCRUMB, "refactoring the importer", "p"))
    assert memory.forget(f"breadcrumb#{new_id}").found is True
    assert store.get(RecordKind.BREADCRUMB, new_id) is None
    assert keyword(store, "importer", project="p") == []
    assert memory.forget(f"breadcrumb#{new_id}").found is False


def test_forget_many_refuses_without_a_filter_and_filters_by_tag(memory: Memory, store: Store) -> None:
    keep = store.add(NewRecord(RecordKind.LEARNING, "keep me", "p", tags=("core",)))
    drop = store.add(NewRecord(RecordKind.DECISION, "drop me", "p", tags=("tmp", "x")))
    with pytest.raises(InvalidInput, match="refusing"):
        memory.forget_many(project="*")
    removed = memory.forget_many(project="p", tags=["TMP"], confirm=1)
    assert removed.deleted == {"decision": 1, "learning": 0, "breadcrumb": 0}
    assert store.get(RecordKind.DECISION, drop) is None
    assert store.get(RecordKind.LEARNING, keep) is not None


def test_supersede_links_the_replacement(store: Store) -> None:
    old = store.add(NewRecord(RecordKind.DECISION, "use Postgres", "p"))
    new = store.add(NewRecord(RecordKind.DECISION, "use SQLite", "p"))
    result = store.supersede(old, by=new)
    assert result["status"] == "superseded"
    assert result["superseded_by"] == new


@pytest.mark.parametrize("first", ["supersede", "revert"])
@pytest.mark.parametrize("second", ["supersede", "revert"])
def test_only_active_decisions_change_status(store: Store, first: str, second: str) -> None:
    decision = store.add(NewRecord(RecordKind.DECISION, "ship on Fridays", "p"))
    getattr(store, first)(decision)
    with pytest.raises(InvalidTransition, match="only active decisions"):
        getattr(store, second)(decision)


def test_supersede_by_missing_or_self_is_refused(store: Store) -> None:
    decision = store.add(NewRecord(RecordKind.DECISION, "a", "p"))
    with pytest.raises(NotFound):
        store.supersede(decision, by=999)
    with pytest.raises(InvalidInput, match="itself"):
        store.supersede(decision, by=decision)
    assert store.require(RecordKind.DECISION, decision)["status"] == "active"


def test_missing_rows_raise_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="no decision with id 42"):
        store.revert(42)
    assert store.get(RecordKind.LEARNING, 42) is None


def test_parse_kind_accepts_plurals_and_names_valid_kinds() -> None:
    assert parse_kind("decisions") is RecordKind.DECISION
    assert parse_kind("breadcrumbs") is RecordKind.BREADCRUMB
    assert parse_kind("Session-Summary") is RecordKind.SESSION_SUMMARY
    with pytest.raises(InvalidInput, match="use one of: decision"):
        parse_kind("memo")


def test_parse_when_reads_dates_and_spans() -> None:
    soon = parse_when("2h")
    assert soon is not None and timedelta(minutes=119) < soon - datetime.now(UTC) < timedelta(minutes=121)
    assert parse_when("2026-12-31") == datetime(2026, 12, 31, tzinfo=UTC)
    with pytest.raises(InvalidInput, match="ISO date"):
        parse_when("next tuesday")
