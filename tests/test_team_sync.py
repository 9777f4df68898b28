"""Two machines, one team server (adr/0025): what one records, the other's brief shows after a sync."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recall.errors import InvalidInput
from recall.memory import Memory
from recall.search.embedder import FakeEmbedder
from recall.team.client import SyncReport, sync
from recall.team.server import LocalTransport, TeamServer
from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage


@pytest.fixture
def team(pg_url: str) -> Any:
    with Memory(pg_url, embedder=FakeEmbedder()) as server_memory:
        yield TeamServer(server_memory)


def machine(tmp_path: Path, name: str) -> Memory:
    return Memory(tmp_path / name / "recall.db", embedder=FakeEmbedder(), project="shop")


class Shop:
    """Alice and Bob, each on a machine of their own, each with a token for the shop project."""

    def __init__(self, team: TeamServer, tmp_path: Path) -> None:
        self.team = team
        self.alice, self.bob = machine(tmp_path, "a"), machine(tmp_path, "b")
        self.tokens = {
            id(self.alice): team.add_token("alice", ("shop",)),
            id(self.bob): team.add_token("bob", ("shop",)),
        }

    def sync(self, who: Memory) -> SyncReport:
        return sync(who, "team", LocalTransport(self.team, self.tokens[id(who)]))


def transcript(external_id: str, *texts: str) -> Transcript:
    messages = tuple(
        TranscriptMessage(
            key=f"{external_id}-{n}", role=Role.USER, text=text, origin=Origin.HUMAN, kind=MessageKind.TEXT
        )
        for n, text in enumerate(texts)
    )
    return Transcript(host="claude", external_id=external_id, messages=messages, cwd="/work/shop")


def test_a_decision_recorded_on_one_machine_is_in_the_others_brief(team: TeamServer, tmp_path: Path) -> None:
    alice = machine(tmp_path, "laptop")
    bob = machine(tmp_path, "desktop")
    token_a = team.add_token("alice", ("shop",))
    token_b = team.add_token("bob", ("shop",))
    decided = alice.add("decision", "Use Stripe for payments, not PayPal", detail="fees", project="shop")
    alice.set_profile("stack", "Python 3.11, Django", project="shop")

    pushed = sync(alice, "team", LocalTransport(team, token_a))
    assert pushed.records_pushed == 1 and not pushed.conflicts
    assert "Stripe" not in bob.session_brief("shop")
    pulled = sync(bob, "team", LocalTransport(team, token_b))

    assert pulled.pulled_added == 1 and pulled.profiles_pulled == 1
    assert "Use Stripe for payments" in bob.session_brief("shop")
    assert bob.profile("shop").get("stack") == "Python 3.11, Django"
    copy = bob.list("decision", project="shop").records[0]
    assert copy.provenance == decided.provenance == "user_authored"
    # the server knows who wrote it
    with team.store.reading() as conn:
        authors = conn.execute("SELECT created_by FROM team_rows WHERE kind_code = 1").fetchall()
    assert [row[0] for row in authors] == ["alice"]


def test_a_second_sync_sends_and_brings_nothing(team: TeamServer, tmp_path: Path) -> None:
    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    alice.add("learning", "the staging database resets at midnight", project="shop")
    alice.store.import_transcripts([transcript("s1", "deploy the shop", "run the migrations first")])
    first = shop.sync(alice)
    assert first.messages_pushed == 2 and first.messages_added == 2 and first.records_pushed == 1
    shop.sync(bob)
    again_a = shop.sync(alice)
    again_b = shop.sync(bob)
    for report in (again_a, again_b):
        assert (
            report.messages_pushed,
            report.records_pushed,
            report.pulled_added,
            report.pulled_updated,
        ) == (0, 0, 0, 0)
    with team.store.reading() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM learnings").fetchone()[0] == 1


def test_a_batch_sent_twice_adds_nothing(team: TeamServer, tmp_path: Path) -> None:
    """What a sync killed after the server stored a batch, but before the client moved its mark, resends."""
    alice = machine(tmp_path, "a")
    token = team.add_token("alice", ("shop",))
    alice.store.import_transcripts([transcript("s1", "one", "two", "three")])
    sync(alice, "team", LocalTransport(team, token))
    with alice.store.transaction():
        alice.store.connection.execute("UPDATE sync_state SET pushed_message_id = 0")
    resent = sync(alice, "team", LocalTransport(team, token))
    assert resent.messages_pushed == 3 and resent.messages_added == 0
    with team.store.reading() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 3


def test_the_same_decision_superseded_on_two_machines_keeps_the_first(
    team: TeamServer, tmp_path: Path
) -> None:
    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    old = alice.add("decision", "Deploy on Fridays", project="shop")
    shop.sync(alice)
    shop.sync(bob)
    bobs_copy = bob.list("decision", project="shop").records[0]

    by_alice = alice.add("decision", "Deploy on Tuesdays", project="shop")
    alice.supersede(old.ref, by=by_alice.ref)
    by_bob = bob.add("decision", "Deploy continuously", project="shop")
    bob.supersede(bobs_copy.ref, by=by_bob.ref)
    shop.sync(alice)
    lost = shop.sync(bob)

    assert lost.conflicts and "first change wins" in lost.conflicts[0]
    with team.store.reading() as conn:
        rows = conn.execute("SELECT content, status, superseded_by FROM decisions ORDER BY id").fetchall()
    by_content = {row[0]: (row[1], row[2]) for row in rows}
    assert by_content["Deploy on Fridays"][0] == "superseded"
    tuesdays_id = next(r for r in rows if r[0] == "Deploy on Tuesdays")
    assert (
        by_content["Deploy on Tuesdays"][0] == "active" and by_content["Deploy continuously"][0] == "active"
    )
    assert tuesdays_id is not None
    brief = bob.session_brief("shop")
    assert (
        "Deploy on Tuesdays" in brief and "Deploy continuously" in brief
    )  # both stand until a person decides


def test_a_token_sees_and_writes_only_its_projects(team: TeamServer, tmp_path: Path) -> None:
    alice = machine(tmp_path, "a")
    token = team.add_token("alice", ("shop",))
    alice.add("decision", "Secret roadmap choice", project="other")
    report = sync(alice, "team", LocalTransport(team, token))
    assert report.records_pushed == 0 and any("not open to this token" in r for r in report.refused)
    member = team.authenticate(token)
    assert member is not None
    scoped = team.memory_for(member)
    with pytest.raises(InvalidInput, match="not open to this token"):
        scoped.add("decision", "x", project="other")
    team.revoke("alice")
    assert team.authenticate(token) is None
    assert len(SyncReport("r", "m").message) > 0


def count(team: TeamServer, sql: str) -> int:
    with team.store.reading() as conn:
        return int(conn.execute(sql).fetchone()[0])


def test_a_record_forgotten_on_one_machine_is_erased_on_the_server_and_the_other(
    team: TeamServer, tmp_path: Path
) -> None:
    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    wrong = alice.add("decision", "Store card numbers in the orders table", project="shop")
    kept = alice.add("learning", "the payment sandbox rejects amounts under one euro", project="shop")
    shop.sync(alice)
    assert shop.sync(bob).pulled_added == 2
    assert "card numbers" in bob.session_brief("shop")

    alice.forget(wrong.ref)
    pushed = shop.sync(alice)
    assert pushed.forgets_pushed == 1 and pushed.records_pushed == 0
    assert count(team, "SELECT count(*) FROM decisions") == 0
    assert count(team, "SELECT count(*) FROM learnings") == 1
    with team.store.reading() as conn:  # the tombstone names who forgot, and keeps no text
        tombstone = conn.execute("SELECT * FROM team_forgotten WHERE kind_code = 1").fetchone()
    assert tombstone["forgotten_by"] == "alice" and "card" not in repr(tuple(tombstone))
    pulled = shop.sync(bob)
    assert pulled.forgotten_here == 1
    assert bob.list("decision", project="shop").records == ()
    assert [r.data["content"] for r in bob.list("learning", project="shop").records] == [kept.data["content"]]
    assert "card numbers" not in bob.session_brief("shop")
    # nothing left to send or erase, either way
    for who in (alice, bob):
        again = shop.sync(who)
        assert (again.forgets_pushed, again.records_pushed, again.forgotten_here, again.pulled_added) == (
            0,
            0,
            0,
            0,
        )
    assert count(team, "SELECT count(*) FROM decisions") == 0


def test_a_machine_still_holding_a_forgotten_record_never_brings_it_back(
    team: TeamServer, tmp_path: Path
) -> None:
    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    decided = alice.add("decision", "Ship the beta to every customer", project="shop")
    shop.sync(alice)
    shop.sync(bob)
    copy = bob.list("decision", project="shop").records[0]
    bob.update(copy.ref, content="Ship the beta to every customer on Monday")  # an edit racing the forget

    alice.forget(decided.ref)
    shop.sync(alice)
    answered = shop.sync(bob)
    assert answered.records_pushed == 0 and answered.forgotten_here == 1  # the forget wins
    assert count(team, "SELECT count(*) FROM decisions") == 0
    assert bob.list("decision", project="shop").records == ()

    # a push whose answer was lost: the machine holds the record unlinked, the server forgot it since
    carol = machine(tmp_path, "c")
    token_c = team.add_token("carol", ("shop",))
    lost = carol.add("learning", "the staging certificate expires in March", project="shop")
    sync(carol, "team", LocalTransport(team, token_c))
    with carol.store.transaction():
        carol.store.connection.execute("DELETE FROM sync_links")
    with team.store.reading() as conn:
        server_id = conn.execute("SELECT id FROM learnings").fetchone()[0]
    team.memory.forget(f"learning#{server_id}")
    resent = sync(carol, "team", LocalTransport(team, token_c))
    assert resent.records_pushed == 0 and resent.forgotten_here == 1
    assert count(team, "SELECT count(*) FROM learnings") == 0
    assert carol.list("learning", project="shop").records == () and lost.id


def test_a_forgotten_records_id_taken_again_is_a_new_record_on_the_server(
    team: TeamServer, tmp_path: Path
) -> None:
    """SQLite gives the next row a deleted highest id again; it must not inherit the link or the tombstone."""
    alice = machine(tmp_path, "a")
    token = team.add_token("alice", ("shop",))
    first = alice.add("decision", "Use MySQL for the catalogue", project="shop")
    sync(alice, "team", LocalTransport(team, token))
    alice.forget(first.ref)
    second = alice.add("decision", "Use PostgreSQL for the catalogue", project="shop")
    assert second.id == first.id
    report = sync(alice, "team", LocalTransport(team, token))
    assert report.forgets_pushed == 1 and report.records_pushed == 1 and report.forgotten_here == 0
    with team.store.reading() as conn:
        rows = conn.execute("SELECT content FROM decisions").fetchall()
    assert [row[0] for row in rows] == ["Use PostgreSQL for the catalogue"]
    assert [r.data["content"] for r in alice.list("decision", project="shop").records] == [
        second.data["content"]
    ]


def test_a_forgotten_session_leaves_the_server_and_every_machine_holding_it(
    team: TeamServer, tmp_path: Path
) -> None:
    """Two machines that read the same transcript (a synced home folder): one forgets the session."""
    from recall.summary_queue import write_due_summaries

    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    pasted = transcript("s1", "deploy with the key AKIA-not-really", "then restart the workers")
    other = transcript("s2", "rename the cart module", "and update its imports")
    for who in (alice, bob):
        who.store.import_transcripts([pasted, other])
        write_due_summaries(who.store)
    first = shop.sync(alice)
    assert first.summaries_pushed == 2
    assert count(team, "SELECT count(*) FROM session_summaries WHERE provenance = 'derived'") == 2

    with alice.store.reading() as conn:
        session_id = conn.execute("SELECT id FROM sessions WHERE external_id = 's1'").fetchone()[0]
    alice.forget(f"session#{session_id}")
    assert shop.sync(alice).forgets_pushed >= 1
    assert count(team, "SELECT count(*) FROM sessions WHERE external_id = 's1'") == 0
    assert count(team, "SELECT count(*) FROM messages") == 2  # s2's
    assert count(team, "SELECT count(*) FROM session_summaries") == 1

    late = shop.sync(bob)  # bob pushes s1 before he hears of the forget
    assert late.messages_added == 0 and late.forgotten_here >= 1
    assert count(team, "SELECT count(*) FROM sessions WHERE external_id = 's1'") == 0
    with bob.store.reading() as conn:
        assert [r[0] for r in conn.execute("SELECT external_id FROM sessions").fetchall()] == ["s2"]
    assert bob.store.import_transcripts([pasted]).added == 0  # and no import stores it again


def test_a_forgotten_message_is_erased_on_the_server_and_not_pushed_again(
    team: TeamServer, tmp_path: Path
) -> None:
    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    shared = transcript(
        "s1", "the build is green", "the customer export sits in the zanzibar bucket", "ship it"
    )
    alice.store.import_transcripts([shared])
    shop.sync(alice)
    with alice.store.reading() as conn:
        message_id = conn.execute("SELECT id FROM messages WHERE content LIKE '%zanzibar%'").fetchone()[0]
    alice.forget(f"message#{message_id}")
    shop.sync(alice)
    assert count(team, "SELECT count(*) FROM messages") == 2
    assert count(team, "SELECT count(*) FROM messages WHERE content LIKE '%zanzibar%'") == 0
    bob.store.import_transcripts([shared])  # the same transcript, all three turns
    assert shop.sync(bob).messages_added == 0
    assert count(team, "SELECT count(*) FROM messages WHERE content LIKE '%zanzibar%'") == 0


def test_session_summaries_are_pushed_and_pushed_again_when_they_change(
    team: TeamServer, tmp_path: Path
) -> None:
    from recall.summary_queue import write_due_summaries

    alice = machine(tmp_path, "a")
    token = team.add_token("alice", ("shop",))
    alice.store.import_transcripts([transcript("s1", "add a refund endpoint to the shop API")])
    write_due_summaries(alice.store)
    assert sync(alice, "team", LocalTransport(team, token)).summaries_pushed == 1
    with team.store.reading() as conn:
        row = conn.execute("SELECT content, provenance, project FROM session_summaries").fetchone()
    with alice.store.reading() as conn:
        mine = conn.execute("SELECT content FROM session_summaries").fetchone()[0]
    assert (row[0], row[1], row[2]) == (mine, "derived", "shop")
    assert sync(alice, "team", LocalTransport(team, token)).summaries_pushed == 0
    alice.store.import_transcripts(
        [
            transcript(
                "s1",
                "add a refund endpoint to the shop API",
                "We decided to use Stripe for refunds because its API is simpler.",
            )
        ]
    )
    write_due_summaries(alice.store)
    again = sync(alice, "team", LocalTransport(team, token))
    assert again.summaries_pushed == 1 and again.messages_added == 1
    with team.store.reading() as conn:
        assert conn.execute("SELECT count(*) FROM session_summaries").fetchone()[0] == 1
        updated = conn.execute("SELECT content FROM session_summaries").fetchone()[0]
    with alice.store.reading() as conn:
        assert updated == conn.execute("SELECT content FROM session_summaries").fetchone()[0]


def test_breadcrumbs_are_pulled_and_expire_on_the_other_machine(team: TeamServer, tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    shop = Shop(team, tmp_path)
    alice, bob = shop.alice, shop.bob
    soon = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    live = alice.add("breadcrumb", "finish the refund endpoint tests", project="shop", valid_until=soon)
    ended = alice.add("breadcrumb", "migrate the old coupons table", project="shop", valid_until=soon)
    alice.update(ended.ref, valid_until=(datetime.now(UTC) - timedelta(hours=1)).isoformat())
    shop.sync(alice)
    assert count(team, "SELECT count(*) FROM breadcrumbs") == 2

    pulled = shop.sync(bob)
    assert pulled.pulled_added == 1  # the one that already ended is not brought
    copies = bob.list("breadcrumb", project="shop").records
    assert [c.data["content"] for c in copies] == [live.data["content"]] and copies[0].data["valid_until"]
    assert "refund endpoint tests" in bob.session_brief("shop")

    alice.update(live.ref, valid_until=(datetime.now(UTC) - timedelta(minutes=1)).isoformat())  # done
    shop.sync(alice)
    assert shop.sync(bob).pulled_updated == 1
    assert "refund endpoint tests" not in bob.session_brief("shop")


def test_duplicates_merged_on_one_machine_fold_away_on_the_server(team: TeamServer, tmp_path: Path) -> None:
    alice = machine(tmp_path, "a")
    token = team.add_token("alice", ("shop",))
    alice.add("decision", "Use Stripe for payments in the shop", project="shop")
    alice.add("decision", "Use Stripe for payments in the shop checkout", project="shop", force=True)
    sync(alice, "team", LocalTransport(team, token))
    assert count(team, "SELECT count(*) FROM decisions") == 2
    merged = alice.dedup(project="shop")
    assert len(alice.list("decision", project="shop").records) == 1, merged
    report = sync(alice, "team", LocalTransport(team, token))
    assert report.forgets_pushed == 1 and report.records_pushed == 1  # the one kept gained the other's
    assert count(team, "SELECT count(*) FROM decisions") == 1


def test_a_token_cannot_forget_or_bar_another_projects_rows(team: TeamServer, tmp_path: Path) -> None:
    from recall.store.forgotten import session_digest

    alice = machine(tmp_path, "a")
    token_a, token_m = team.add_token("alice", ("shop",)), team.add_token("mallory", ("other",))
    decided = alice.add("decision", "Keep the shop on Python 3.11", project="shop")
    alice.store.import_transcripts([transcript("s1", "upgrade the shop workers")])
    sync(alice, "team", LocalTransport(team, token_a))
    with team.store.reading() as conn:
        server_id = conn.execute("SELECT id FROM decisions").fetchone()[0]
    digest = session_digest("claude", "s1")
    answer = LocalTransport(team, token_m).call(
        "POST",
        "/sync/push",
        {
            "forgotten": [
                {"kind": "decision", "server_id": server_id},
                {"kind": "session", "digest": digest, "session_digest": digest},
            ]
        },
    )
    assert len(answer["refused"]) == 2 and not answer["erased"]
    assert count(team, "SELECT count(*) FROM decisions") == 1
    assert count(team, "SELECT count(*) FROM sessions") == 1
    assert count(team, "SELECT count(*) FROM forgotten") == 0  # nor barred from later pushes
    assert decided.id
