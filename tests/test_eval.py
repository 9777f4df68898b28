"""`recall eval`: known-item probes from the user's own data, scored per mode and project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.evaluation import build_probes, evaluate
from recall.memory import Memory
from recall.models import KIND_CODES, RecordKind, index_rowid
from recall.search.hybrid import search

REQUESTS = {
    "login": "please fix the flaky login page test before the release",
    "payment": "please fix the flaky payment page test before the demo",
    "search": "the search page test is flaky again, please fix it before the release",
    "profile": "fix the profile page before the demo please, the test is flaky",
}


@pytest.fixture
def shop(memory: Memory) -> Memory:
    for topic, request in REQUESTS.items():
        memory.dump(title=f"{topic} work", project="shop", session_id=topic, messages=[
            {"role": "user", "content": request},
            {"role": "assistant", "content": f"the {topic} page test waits for the network now, fixed"},
            {"role": "user", "content": f"good, the {topic} page is stable"},
            {"role": "assistant", "content": f"the {topic} page test passed twenty runs in a row"},
            {"role": "user", "content": f"then fix the {topic} release notes"},
        ])  # fmt: skip
    memory.add(
        "decision", "Use Postgres for billing", project="shop", detail="we need row locks for invoices"
    )
    memory.add("learning", "CI caches wheels", project="other", detail="pip download is slow on the runners")
    memory.embed()
    return memory


def test_a_session_probe_keeps_only_words_other_sessions_use(shop: Memory) -> None:
    skipped: dict[str, int] = {}
    with shop.store.reading() as conn:
        probes = build_probes(conn, "shop", per_kind=10, total=100, skipped=skipped)
    login = next(p for p in probes if p.kind == "session" and "release" in p.query and "demo" not in p.query)
    assert login.query.split() == [
        "please",
        "fix",
        "the",
        "flaky",
        "page",
        "test",
        "before",
        "the",
        "release",
    ]
    assert {p.kind for p in probes} == {"session", "decision"}
    assert all(p.project == "shop" for p in probes)


def test_a_session_probe_leaves_out_the_turns_whose_vectors_mix_in_its_request(shop: Memory) -> None:
    with shop.store.reading() as conn:
        probes = build_probes(conn, "shop", per_kind=10, total=100, skipped={})
        turns = dict(conn.execute(
            "SELECT m.ordinal, m.id FROM messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE s.external_id = 'login'").fetchall())  # fmt: skip
    login = next(p for p in probes if p.kind == "session" and p.source == turns[0])
    # MIX_WEIGHTS reaches two turns back: the two turns after the request carry its vector.
    assert login.neighbours == (turns[1], turns[2])
    code = KIND_CODES[RecordKind.MESSAGE]
    assert {index_rowid(code, turns[n]) for n in (0, 1, 2)} <= login.leave_out()
    assert not {index_rowid(code, turns[n]) for n in (3, 4)} & login.leave_out()


def test_left_out_rows_are_searched_as_if_not_stored(shop: Memory) -> None:
    first = shop.search("login", mode="keyword", project="shop").hits
    request = next(h for h in first if h.kind == "message" and "please" in h.content)
    gone = index_rowid(KIND_CODES[RecordKind.MESSAGE], request.id)
    for mode in ("keyword", "hybrid"):
        hits = search(
            shop.store, "login", mode=mode, project="shop", embedder=shop.embedder, leave_out={gone}
        )  # type: ignore[arg-type]
        assert request.id not in {h.id for h in hits if h.kind == "message"}
        assert hits, mode  # the rest of the session is still found


def test_a_left_out_turn_does_not_come_back_as_the_successor_of_a_keyword_match(memory: Memory) -> None:
    memory.dump(title="carry", project="p", session_id="carry", messages=[
        {"role": "assistant", "content": "the flaky login test waits for the network"},
        {"role": "assistant", "content": "nothing to see in this turn"},
        {"role": "user", "content": "zebra quartz"},
    ])  # fmt: skip
    memory.embed()
    with memory.store.reading() as conn:
        last = conn.execute("SELECT id FROM messages WHERE content = 'zebra quartz'").fetchone()[0]
    gone = index_rowid(KIND_CODES[RecordKind.MESSAGE], last)
    found = search(memory.store, "flaky login test", project="p", embedder=memory.embedder, limit=10)
    assert last in {h.id for h in found}  # two turns after the match, it inherits CARRY**2 of its score
    hits = search(
        memory.store, "flaky login test", project="p", embedder=memory.embedder, limit=10, leave_out={gone}
    )
    assert last not in {h.id for h in hits} and hits


def test_scores_per_mode_and_project(shop: Memory) -> None:
    report = evaluate(shop)
    assert report.probes == {"session": 4, "decision": 1, "learning": 1}
    assert report.modes == ["keyword", "semantic", "hybrid"]
    keyword = report.scores["keyword"]
    assert set(keyword) == {"all", "shop", "other"}
    assert keyword["all"].probes == 6
    # A record's detail is in its own row: keyword search finds it first.
    assert keyword["other"].to_dict()["recall@5"] == 100.0
    # Each session probe must reach another message of its session without its own request.
    assert keyword["shop"].at10 >= 3
    assert report.seconds > 0


def test_cli_eval_json_for_one_project(db_path: Path, shop: Memory) -> None:
    shop.close()
    result = CliRunner().invoke(cli, ["--db", str(db_path), "eval", "--project", "other", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["probes"] == {"learning": 1}
    assert set(data["scores"]["keyword"]) == {"all", "other"}
    assert {"recall@5", "recall@10", "mrr", "probes"} <= set(data["scores"]["keyword"]["all"])


def test_cli_eval_without_a_model_checks_keyword_search(
    db_path: Path, shop: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop.close()
    monkeypatch.setenv("RECALL_MODEL_DIR", str(tmp_path / "no-model-here"))
    result = CliRunner().invoke(cli, ["--db", str(db_path), "eval"])
    assert result.exit_code == 0, result.output
    assert "keyword mode only" in result.output
    assert "keyword   all" in result.output and "hybrid" not in result.output.split("keyword mode only")[1]


def test_an_empty_store_says_there_is_nothing_to_probe(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db_path), "eval", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["probes"] == {} and data["notes"]
