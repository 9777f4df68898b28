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
    alice, bob = machine(tmp_path, "a"), machine(tmp_path, "b")
    token_a, token_b = team.add_token("alice", ("shop",)), team.add_token("bob", ("shop",))
    alice.add("learning", "the staging database resets at midnight", project="shop")
    alice.store.import_transcripts([transcript("s1", "deploy the shop", "run the migrations first")])
    first = sync(alice, "team", LocalTransport(team, token_a))
    assert first.messages_pushed == 2 and first.messages_added == 2 and first.records_pushed == 1
    sync(bob, "team", LocalTransport(team, token_b))
    again_a = sync(alice, "team", LocalTransport(team, token_a))
    again_b = sync(bob, "team", LocalTransport(team, token_b))
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
    alice, bob = machine(tmp_path, "a"), machine(tmp_path, "b")
    token_a, token_b = team.add_token("alice", ("shop",)), team.add_token("bob", ("shop",))
    old = alice.add("decision", "Deploy on Fridays", project="shop")
    sync(alice, "team", LocalTransport(team, token_a))
    sync(bob, "team", LocalTransport(team, token_b))
    bobs_copy = bob.list("decision", project="shop").records[0]

    by_alice = alice.add("decision", "Deploy on Tuesdays", project="shop")
    alice.supersede(old.ref, by=by_alice.ref)
    by_bob = bob.add("decision", "Deploy continuously", project="shop")
    bob.supersede(bobs_copy.ref, by=by_bob.ref)
    sync(alice, "team", LocalTransport(team, token_a))
    lost = sync(bob, "team", LocalTransport(team, token_b))

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
