"""The PostgreSQL backend (adr/0024): the schema matches SQLite's, and what only PostgreSQL does."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests_hostile import HOSTILE_TEXTS

from recall.memory import Memory
from recall.migrations import migrate
from recall.pg import postgres_url
from recall.pg.compat import redact_url, translate
from recall.pg.fulltext import code_tokens
from recall.search.embedder import FakeEmbedder

KEY = "sk-ant-api03-" + "Q7x9" * 11


def _pg_columns(url: str) -> dict[str, set[str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
    out: dict[str, set[str]] = {}
    for table, column in rows:
        out.setdefault(table, set()).add(column)
    return out


def _sqlite_columns() -> dict[str, set[str]]:
    lite = sqlite3.connect(":memory:", isolation_level=None)
    migrate(lite)
    tables = [
        name
        for (name,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith("search_index")
    ]
    return {table: {row[1] for row in lite.execute(f"PRAGMA table_info({table})")} for table in tables}


def test_postgresql_holds_every_table_and_column_sqlite_does(pg_url: str) -> None:
    Memory(pg_url).open().close()
    pg = _pg_columns(pg_url)
    for table, columns in _sqlite_columns().items():
        assert table in pg, table
        assert columns == pg[table], table
    # and the typed row classes (recall.models) describe the PostgreSQL tables too
    from recall.models import TABLES

    for model in TABLES.values():
        table = model.__table__  # type: ignore[attr-defined]
        assert {column.name for column in table.columns} <= pg[table.name], table.name


def test_opening_twice_applies_the_schema_once(pg_url: str) -> None:
    import psycopg

    from recall.pg.schema import apply_schema

    Memory(pg_url).open().close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert apply_schema(conn) is False


def test_the_url_or_recall_db_selects_postgresql(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert postgres_url("postgresql://u:secret@host/db") == "postgresql://u:secret@host/db"
    assert postgres_url("postgresql+psycopg://u@host/db") == "postgresql://u@host/db"
    assert postgres_url(tmp_path / "x.db") is None and postgres_url(str(tmp_path / "x.db")) is None
    monkeypatch.setenv("RECALL_DB", "postgres://u@host/db")
    assert postgres_url(None) == "postgresql://u@host/db"
    assert redact_url("postgresql://u:secret@host/db") == "postgresql://u:***@host/db"


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    from recall.errors import StoreUnavailable

    memory = Memory("postgresql://u:hunter2@/nothing?host=/nonexistent-dir&port=1", embedder=FakeEmbedder())
    with pytest.raises(StoreUnavailable) as caught:
        memory.add("decision", "x", project="p")
    assert "hunter2" not in str(caught.value) and "check that the server runs" in str(caught.value)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM t WHERE b = ? AND c LIKE '%?%'", "SELECT a FROM t WHERE b = %s AND c ILIKE '%%?%%'"),
        ("INSERT OR IGNORE INTO forgotten (digest) VALUES (?)", "ON CONFLICT DO NOTHING"),
        ("SELECT x FROM (SELECT 1 AS x) ORDER BY x", "(SELECT 1 AS x) AS _sub"),
        ("UPDATE t SET c = max(c, ?) WHERE id = ?", "greatest(c, %s)"),
        ("SELECT 1 FROM t WHERE v IS ?", "IS NOT DISTINCT FROM %s"),
        ("SELECT id FROM t WHERE id IN (SELECT value FROM json_each(?))", "value::bigint"),
    ],
)
def test_sqlite_statements_are_rewritten_for_postgresql(sql: str, expected: str) -> None:
    assert expected in translate(sql, frozenset(), frozenset(), ())[0]


def test_code_tokens_are_searched_whole(memory: Memory, backend: str) -> None:
    snake = memory.add("learning", "call parse_config_file before the server starts", project="p")
    memory.add("learning", "parse the config file by hand", project="p", force=True)
    hits = memory.search("parse_config_file", mode="keyword", project="p").hits
    assert hits[0].ref == str(snake.ref)
    assert code_tokens("why does os.path.join fail in src/x.py?") == ["os.path.join", "src/x.py"]


@pytest.mark.parametrize("text", HOSTILE_TEXTS, ids=[repr(t)[:24] for t in HOSTILE_TEXTS])
def test_hostile_text_never_errors_and_is_stored_as_given(memory: Memory, text: str) -> None:
    added = memory.add("learning", f"note {text}", project="p", force=True)
    for mode in ("keyword", "semantic", "hybrid"):
        assert isinstance(memory.search(text, mode=mode, project="p").hits, tuple)
    assert memory.get(added.ref).data["content"].startswith("note")


def test_a_forgotten_record_leaves_the_index_and_the_vectors(memory: Memory, backend: str) -> None:
    kept = memory.add("decision", "Ship the migration on Friday", project="p")
    gone = memory.add("decision", "Ship the invoices on Monday", project="p")
    assert {hit.ref for hit in memory.search("ship", mode="keyword", project="p").hits} == {
        str(kept.ref),
        str(gone.ref),
    }
    memory.forget(gone.ref)
    assert [hit.ref for hit in memory.search("ship", mode="keyword", project="p").hits] == [str(kept.ref)]
    assert [hit.ref for hit in memory.search("invoices monday", mode="semantic", project="p").hits] != [
        str(gone.ref)
    ]
    with memory.store.reading() as conn:
        left: Any = conn.execute("SELECT count(*) FROM embeddings WHERE row_id = ?", (gone.id,)).fetchone()
    assert left[0] == 0


def test_scrubbing_and_provenance_hold_on_both(memory: Memory, backend: str) -> None:
    added = memory.add(
        "decision",
        f"Deploy with key {KEY}",
        project="p",
        metadata={"note": "password=hunter2hunter2"},
    )
    row = memory.get(added.ref).data
    assert KEY not in row["content"] and "hunter2hunter2" not in str(row["meta"])
    assert row["provenance"] == "user_authored" and added.redacted


def test_very_common_words_only_rank_when_the_query_has_rarer_ones(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall.pg import fulltext

    memory = Memory(pg_url, embedder=FakeEmbedder(), embed_on_write=False)
    for n in range(120):
        memory.add("learning", f"deploy note number {n} about servers", project="p", force=True)
    rare = memory.add("learning", "deploy the zeppelin carefully", project="p", force=True)
    store: Any = memory.store
    store.pg.raw.execute("ANALYZE search_index")
    fulltext._STATS.clear()
    # a small index: every row holding any term is scored, the rare word first (its idf is larger)
    found = fulltext.candidates(store.pg, "deploy zeppelin", kind=None, project="p", depth=500)
    assert len(found) == 121 and max(found, key=found.__getitem__) == rare.id * 8 + 2
    # as if the index were large: the common word no longer finds rows, it only ranks them
    monkeypatch.setattr(fulltext, "SMALL_INDEX_ROWS", 10)
    monkeypatch.setattr(fulltext, "COMMON_ROWS", 50)
    found = fulltext.candidates(store.pg, "deploy zeppelin", kind=None, project="p", depth=50)
    assert list(found) == [rare.id * 8 + 2]
    assert len(fulltext.candidates(store.pg, "deploy", kind=None, project="p", depth=500)) == 121
    # common words only were sampled (gin_fuzzy_search_limit), and the setting did not outlive the search
    assert store.pg.raw.execute("SHOW gin_fuzzy_search_limit").fetchone()[0] == "0"
    with pytest.raises(Exception, match="division by zero"):
        fulltext._run(store.pg.raw, b"SELECT 1 / 0", [], True)
    assert store.pg.raw.execute("SHOW gin_fuzzy_search_limit").fetchone()[0] == "0"  # not even a failed one
    # phrases, prefixes and code tokens go through the pre-rank of a large index too
    found = fulltext.candidates(
        store.pg, 'zeppelin "note number" deploy* x_y', kind=None, project="p", depth=5
    )
    assert next(iter(found)) == rare.id * 8 + 2
    hits = memory.search("deploy zeppelin", mode="keyword", project="p").hits
    assert hits[0].ref == str(rare.ref)
    memory.close()


def test_stop_words_alone_find_the_rows_holding_them_on_both(memory: Memory, backend: str) -> None:
    """English stemming drops ``the``, ``and``, ``of``; FTS5 keeps them. PostgreSQL falls back to the
    unstemmed words (``tokens``), so a query of stop words finds what SQLite finds, in its scope only."""
    held = memory.add("learning", "the build uses make", project="p")
    memory.add("learning", "the other project also builds", project="q")
    memory.add("decision", "deploy zeppelin nightly", project="p")
    for query in ("the", "the and of", "The OR of", '"the"', "THE OF"):
        hits = memory.search(query, mode="keyword", project="p").hits
        assert [hit.ref for hit in hits] == [str(held.ref)], (backend, query)
    assert [
        h.ref for h in memory.search("the of and", mode="keyword", project="p", kind="learning").hits
    ] == [str(held.ref)]
    assert memory.search("the of and", mode="keyword", project="p", kind="decision").hits == ()
    assert memory.search("because", mode="keyword", project="p").hits == ()  # a stop word no row holds
    # a content word still leads: stop words do not widen a query that has one, operators or not
    assert str(held.ref) not in [
        h.ref for h in memory.search("the AND zeppelin", mode="keyword", project="p").hits
    ]
    assert memory.search("the zeppelin", mode="keyword", project="p").hits[0].ref != str(held.ref)
    for text in ("the & of", "the:* | !of", "'the' <-> 'of'", "of\\x00the"):
        memory.search(text, mode="keyword", project="p")  # answers, never errors


def test_the_turns_after_a_message_are_found_alike_on_both(memory: Memory, backend: str) -> None:
    from recall.rowkinds import index_rowid
    from recall.search.hybrid import following_turns
    from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

    kinds = [MessageKind.TEXT, MessageKind.TEXT, MessageKind.TOOL_CALL, MessageKind.TEXT, MessageKind.TEXT]
    messages = tuple(
        TranscriptMessage(key=f"k{n}", role=Role.USER, text=f"turn {n}", origin=Origin.HUMAN, kind=kind)
        for n, kind in enumerate(kinds)
    )
    memory.store.import_transcripts(
        [Transcript(host="claude", external_id="s", messages=messages)], project="p"
    )
    with memory.store.reading() as conn:
        ids = [int(row[0]) for row in conn.execute("SELECT id FROM messages ORDER BY ordinal").fetchall()]
        found = following_turns(conn, [index_rowid(5, ids[0]), index_rowid(5, ids[3])])
    assert found == {
        index_rowid(5, ids[0]): [index_rowid(5, ids[1]), index_rowid(5, ids[3])],  # the tool call is skipped
        index_rowid(5, ids[3]): [index_rowid(5, ids[4])],
    }


# A fixed corpus whose words stem alike under FTS5's Porter and PostgreSQL's English Snowball and hold no
# word either drops as a stop word, so the two backends see the same tokens (adr/0040).
PARITY_CORPUS = {
    "p": [
        ("decision", "deploy the billing service on friday after the database migration"),
        ("decision", "deploy billing again because the first deploy failed on the database"),
        ("learning", "the cache server restarts when the billing queue grows past ten thousand jobs"),
        ("learning", "migration scripts run before the deploy and lock the billing tables"),
        ("learning", "friday deploys need a second reviewer"),
        ("breadcrumb", "next: rewrite the cache eviction so billing stops timing out"),
        (
            "learning",
            "the queue worker crashed twice while the database was under heavy load from billing reports",
        ),
        ("decision", "keep the reviewer rota in the wiki"),
    ],
    "other": [
        ("learning", "cache cache cache everywhere in the other project"),
        ("learning", "reviewer reviewer reviewer in the other project"),
    ],
}
PARITY_QUERIES = (
    "deploy billing",
    "database migration friday",
    "cache billing queue",
    "reviewer",
    "deploy* database",
    '"billing service" friday',
    "cache AND billing",
    "worker crashed under load",
)


def _parity_memory(db: str | Path) -> Memory:
    memory = Memory(db, embedder=FakeEmbedder())
    for project, rows in PARITY_CORPUS.items():
        for kind, text in rows:
            memory.add(kind, text, project=project, force=True)
    return memory


def test_both_backends_rank_a_fixed_corpus_alike(tmp_path: Path, pg_url: str) -> None:
    """Keyword relevance on PostgreSQL is SQLite's bm25 (project counts, FTS5's idf, length
    normalisation): same order, and scores within a few percent. They differ only by a row's
    length: PostgreSQL keeps no position for a stop word, so one that ends a row ("timing out")
    goes uncounted."""
    from recall.pg import fulltext

    fulltext._STATS.clear()
    lite, pg = _parity_memory(tmp_path / "lite.db"), _parity_memory(pg_url)
    try:
        for query in PARITY_QUERIES:
            ours = lite.search(query, mode="keyword", project="p", limit=10).hits
            theirs = pg.search(query, mode="keyword", project="p", limit=10).hits
            assert ours, query
            assert [h.ref for h in ours] == [h.ref for h in theirs], query
            scores = [h.keyword_score for h in theirs]
            assert [h.keyword_score for h in ours] == pytest.approx(scores, rel=0.05), query
            hybrid = [
                lite.search(query, mode="hybrid", project="p", limit=10).hits,
                pg.search(query, mode="hybrid", project="p", limit=10).hits,
            ]
            assert [h.ref for h in hybrid[0]] == [h.ref for h in hybrid[1]], query
    finally:
        lite.close()
        pg.close()
