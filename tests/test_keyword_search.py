"""Keyword search: any text is a valid query; filters, bias and the lifecycle shape the ranking."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from recall.migrations import latest_version, migrate
from recall.models import RecordKind
from recall.results import Hit
from recall.search.fts_query import build_match
from recall.search.keyword import keyword_search
from recall.store import NewRecord, Store
from recall.transcript import Role, Transcript, TranscriptMessage


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


HOSTILE = [
    "bun:sqlite", "C++", "what did we decide?", "recall-mcp", '"unbalanced', "AND", "*", "OR OR",
    "NOT", "(", ")", "NEAR(a b)", "col:value", "^start", "a + b", "'; DROP TABLE decisions; --",
    "\x00", "", "   ", "ünïcödé façade", "日本語の検索", "🙂", "x" * 5000, '""', "a*b*", "-", "{content}: x",
]  # fmt: skip


@pytest.fixture
def filled(store: Store) -> Store:
    store.add(
        NewRecord(RecordKind.DECISION, "Use bun:sqlite in the recall-mcp server, not a C++ addon", "alpha")
    )
    store.add(NewRecord(RecordKind.LEARNING, "FTS5 treats a hyphen as a column filter operator", "alpha"))
    store.add(NewRecord(RecordKind.BREADCRUMB, "migrating the sqlite schema to version two", "alpha"))
    store.add(NewRecord(RecordKind.DECISION, "Use Postgres for the billing service", "beta"))
    return store


@pytest.mark.parametrize("query", HOSTILE, ids=[repr(q)[:20] for q in HOSTILE])
def test_hostile_queries_never_raise(filled: Store, query: str) -> None:
    hits = keyword(filled, query)
    assert isinstance(hits, list)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("bun:sqlite", "Use bun:sqlite"),
        ("C++ addon", "Use bun:sqlite"),
        ("recall-mcp", "Use bun:sqlite"),
        ("hyphen", "FTS5 treats"),
        ("what did we decide about billing?", "Use Postgres"),
    ],
)
def test_punctuated_queries_find_their_rows(filled: Store, query: str, expected: str) -> None:
    hits = keyword(filled, query)
    assert hits and hits[0].content.startswith(expected)


def test_deliberate_syntax_still_works(filled: Store) -> None:
    assert {h.content[:8] for h in keyword(filled, "sqlite AND schema")} == {"migratin"}
    assert {h.content[:8] for h in keyword(filled, "sqlite NOT schema")} == {"Use bun:"}
    assert len(keyword(filled, "postgres OR hyphen")) == 2
    assert {h.content[:8] for h in keyword(filled, "migrat*")} == {"migratin"}
    assert keyword(filled, '"sqlite schema"')[0].kind == "breadcrumb"
    assert keyword(filled, '"schema sqlite"') == []


def test_build_match_quotes_every_term() -> None:
    assert build_match("recall-mcp") == '"recall mcp"'
    assert build_match("what did we decide?") == '"decide"'
    assert build_match("foo AND") == '"foo"'
    assert build_match("NOT foo bar") == '"foo" AND "bar"'
    assert build_match("*") is None


def test_project_and_table_filters_are_hard(filled: Store) -> None:
    assert {h.project for h in keyword(filled, "use", project="beta")} == {"beta"}
    assert keyword(filled, "billing", project="alpha") == []
    assert {h.kind for h in keyword(filled, "sqlite", table=RecordKind.BREADCRUMB)} == {"breadcrumb"}


def test_projects_with_shared_words_do_not_leak(store: Store) -> None:
    store.add(NewRecord(RecordKind.LEARNING, "cache invalidation", "recall"))
    store.add(NewRecord(RecordKind.LEARNING, "cache warming", "recall-memory"))
    assert [h.project for h in keyword(store, "cache", project="recall")] == ["recall"]


def test_bias_boosts_without_excluding(store: Store) -> None:
    store.add(NewRecord(RecordKind.DECISION, "deploy on fridays", "p"))
    store.add(NewRecord(RecordKind.LEARNING, "deploy needs a warm cache and a quiet queue", "p"))
    for n in range(6):
        store.add(NewRecord(RecordKind.BREADCRUMB, f"unrelated filler text {n}", "p"))
    plain = keyword(store, "deploy", project="p")
    biased = keyword(store, "deploy", project="p", bias=RecordKind.LEARNING)
    assert plain[0].kind == "decision"
    assert biased[0].kind == "learning"
    assert {h.kind for h in biased} == {"decision", "learning"}


def test_expired_breadcrumbs_leave_search_but_stay_stored(store: Store) -> None:
    past = datetime.now(UTC) - timedelta(hours=1)
    crumb = store.add(NewRecord(RecordKind.BREADCRUMB, "halfway through the rename", "p", valid_until=past))
    assert keyword(store, "rename", project="p") == []
    assert store.get(RecordKind.BREADCRUMB, crumb) is not None


def test_superseded_decisions_rank_below_active_ones(store: Store) -> None:
    old = store.add(NewRecord(RecordKind.DECISION, "store vectors as float32 blobs", "p"))
    new = store.add(NewRecord(RecordKind.DECISION, "store vectors as float16 blobs", "p"))
    store.supersede(old, by=new)
    hits = keyword(store, "store vectors blobs", project="p")
    assert [h.id for h in hits] == [new, old]
    assert hits[1].extra["status"] == "superseded"


def test_results_carry_kind_id_project_time_preview_provenance_score(filled: Store) -> None:
    filled.import_transcripts(
        [Transcript("claude", "s1", (TranscriptMessage("u1", Role.USER, "sqlite " * 100),), cwd="/x/alpha")]
    )
    hits = keyword(filled, "sqlite", project="alpha", limit=10)
    message = next(h for h in hits if h.kind == "message")
    assert message.provenance == "verbatim"
    assert len(message.preview) <= 240 and message.preview.endswith("…")
    assert message.content.count("sqlite") == 100
    for hit in hits:
        assert hit.id > 0 and hit.project == "alpha" and hit.created_at and hit.score > 0
    assert [h.keyword_rank for h in hits] == list(range(1, len(hits) + 1))


def test_one_scale_across_kinds(store: Store) -> None:
    """The same text scores the same whatever its kind: bm25 comes from one shared index."""
    store.add(NewRecord(RecordKind.DECISION, "rotate the signing keys monthly", "p"))
    store.add(NewRecord(RecordKind.LEARNING, "rotate the signing keys monthly", "p"))
    store.add(NewRecord(RecordKind.BREADCRUMB, "something else entirely", "p"))
    hits = keyword(store, "signing keys", project="p")
    assert len(hits) == 2
    assert hits[0].score == pytest.approx(hits[1].score)


def test_the_index_stems_so_other_forms_of_a_word_match(store: Store) -> None:
    store.add(NewRecord(RecordKind.LEARNING, "Caroline went painting with her families", "p"))
    store.add(NewRecord(RecordKind.DECISION, "the deployment runs nightly", "p"))
    assert [h.content[:8] for h in keyword(store, "who paints?", project="p")] == ["Caroline"]
    assert [h.content[:8] for h in keyword(store, "family", project="p")] == ["Caroline"]
    assert [h.content[:8] for h in keyword(store, '"paint with"', project="p")] == ["Caroline"]
    assert [h.content[:8] for h in keyword(store, "deploy*", project="p")] == ["the depl"]
    assert [h.content[:8] for h in keyword(store, "run", project="p")] == ["the depl"]


def test_a_prefix_ending_in_y_also_searches_without_it() -> None:
    assert build_match("deploy*") == '("deploy" * OR "deplo" *)'
    assert build_match("key*") == '"key" *'
    assert build_match("migrat*") == '"migrat" *'


def test_kind_and_project_filters_survive_the_stemmer(store: Store) -> None:
    """Scope tokens are stemmed too; kinds and projects (hex ending in e, like 'n') stay apart."""
    for project in ("pattern", "patter", "patterns", "n", "ne"):
        store.add(NewRecord(RecordKind.LEARNING, f"shared words about {project}", project))
    store.add(NewRecord(RecordKind.DECISION, "shared words decided", "pattern"))
    for project in ("pattern", "patter", "patterns", "n", "ne"):
        assert {h.project for h in keyword(store, "shared words", project=project)} == {project}
    assert {h.kind for h in keyword(store, "shared", table=RecordKind.DECISION)} == {"decision"}
    assert len(keyword(store, "shared", table=RecordKind.LEARNING)) == 5


def test_a_version_3_database_is_reindexed_with_stems(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, target=3)
    now = "2026-01-01T00:00:00+00:00"
    conn.execute(
        "INSERT INTO decisions (project, created_at, updated_at, provenance, content, detail, tags) "
        "VALUES ('p', ?, ?, 'user_authored', 'we chose painting robots', 'because of families', '[\"arts\"]')",
        (now, now),
    )
    conn.execute(
        "INSERT INTO sessions (id, project, created_at, updated_at, provenance, host, external_id) "
        "VALUES (7, 'p', ?, ?, 'verbatim', 'claude', 's1')",
        (now, now),
    )
    conn.execute(
        "INSERT INTO messages (project, created_at, updated_at, provenance, session_id, external_id, ordinal, "
        "role, origin, kind, content, content_hash) "
        "VALUES ('p', ?, ?, 'verbatim', 7, 'm1', 0, 'user', 'human', 'text', 'the builds were failing', 'h')",
        (now, now),
    )
    conn.execute(
        "INSERT INTO session_summaries (project, created_at, updated_at, provenance, session_id, title, content) "
        "VALUES ('q', ?, ?, 'derived', 7, 'Hiking trips', 'planned walks')",
        (now, now),
    )
    unstemmed = "SELECT count(*) FROM search_index WHERE search_index MATCH 'paints'"
    assert conn.execute(unstemmed).fetchone()[0] == 0
    conn.close()
    with Store(db_path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == latest_version()
        assert [h.kind for h in keyword(store, "paints", project="p")] == ["decision"]
        assert [h.kind for h in keyword(store, "family", project="p")] == ["decision"]
        assert [h.kind for h in keyword(store, "art", project="p")] == ["decision"]
        assert [h.kind for h in keyword(store, "failed build", project="p")] == ["message"]
        assert [h.kind for h in keyword(store, "hike walking", project="q")] == ["session_summary"]
        assert keyword(store, "hike", project="p") == []
        # the old triggers feed the rebuilt table: edits and deletes keep it exact
        store.connection.execute("UPDATE decisions SET content = 'we chose sculpting' WHERE project = 'p'")
        assert keyword(store, "paints", project="p") == []
        assert [h.kind for h in keyword(store, "sculpted", project="p")] == ["decision"]
        store.connection.execute("DELETE FROM messages")
        assert keyword(store, "failed build", project="p") == []
        store.connection.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")
