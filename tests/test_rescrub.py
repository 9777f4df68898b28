"""`recall rescrub`: rows stored under older scrubbing rules are scrubbed again, and only they change."""

from __future__ import annotations

import json
import secrets
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from residue import index_leftovers, leftovers

from recall.cli import cli
from recall.models import RecordKind
from recall.results import Hit
from recall.scrub import Scrubbed
from recall.search import semantic
from recall.search.embedder import FakeEmbedder
from recall.search.keyword import keyword_search
from recall.store import NewRecord, Store
from recall.store.rescrub import rescrub
from recall.transcript import Origin, Role, Transcript, TranscriptMessage


def keyword(store: Store, query: str, **options: Any) -> list[Hit]:
    """Keyword search on the store itself (the library API's keyword mode runs exactly this)."""
    with store.reading() as conn:
        return keyword_search(conn, query, **options)


def aws_key_id() -> str:
    """A fresh fake AWS access key id: a kind the current scrubber redacts."""
    return "AKIA" + "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16))


@pytest.fixture
def stored_under_old_rules(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> tuple[Store, str, dict[str, int]]:
    """Rows written while the scrubber knew nothing (as an older rule set missed a kind), then the
    current scrubber back in place. Returns the store, the secret and the ids of interest."""
    from recall.store.profiles import set_value
    from recall.summary_queue import write_due_summaries

    secret = aws_key_id()
    with monkeypatch.context() as patched:
        patched.setattr("recall.store.caps.scrub", lambda text: Scrubbed(text, ()))
        patched.setattr("recall.store.caps.scrub_short", lambda text: Scrubbed(text, ()))
        patched.setattr("recall.store.writer.scrub_value", lambda value: (value, ()))
        messages = (
            TranscriptMessage("m1", Role.USER, f"deploy with key {secret} please", origin=Origin.HUMAN),
            TranscriptMessage(
                "m2", Role.ASSISTANT, "done, deployed", origin=Origin.AGENT, meta={"env": secret}
            ),
        )
        store.import_transcripts([Transcript("test", "s-1", messages, title=f"deploy {secret}")], project="p")
        write_due_summaries(store)
        ids = {
            "decision": store.add(
                NewRecord(RecordKind.DECISION, "rotate keys", "p", detail=secret, tags=("ops",))
            ),
            "clean": store.add(NewRecord(RecordKind.LEARNING, "nothing secret here", "p")),
        }
        set_value(store, "p", "build", f"AWS_ACCESS_KEY_ID={secret} make")
    semantic.embed_pending(store, FakeEmbedder())
    return store, secret, ids


def test_rows_stored_under_older_rules_are_scrubbed_and_the_old_text_leaves_the_disk(
    stored_under_old_rules: tuple[Store, str, dict[str, int]], db_path: Path
) -> None:
    store, secret, ids = stored_under_old_rules
    assert leftovers(db_path.parent, secret, secret.lower())
    clean_before = store.require(RecordKind.LEARNING, ids["clean"])["updated_at"]
    decision_before = store.require(RecordKind.DECISION, ids["decision"])["updated_at"]
    seen: list[tuple[int, int]] = []

    report = rescrub(store, progress=lambda done, total: seen.append((done, total)))

    assert report.rewritten == {
        "session": 1, "message": 2, "decision": 1, "learning": 0, "breadcrumb": 0, "session_summary": 1,
        "profile": 1, "note": 0,
    }  # fmt: skip
    assert report.checked["message"] == 2 and report.checked["learning"] == 1
    assert report.redactions["aws-access-key-id"] >= 5
    assert seen[-1][0] == seen[-1][1] == sum(report.checked.values())
    assert leftovers(db_path.parent, secret, secret.lower()) == {}
    assert index_leftovers(db_path, secret.lower()) == []
    assert keyword(store, secret) == [] and keyword(store, "deployed")
    decision = store.require(RecordKind.DECISION, ids["decision"])
    assert decision["detail"] == "[REDACTED:aws-access-key-id]" and decision["updated_at"] == decision_before
    assert store.require(RecordKind.LEARNING, ids["clean"])["updated_at"] == clean_before
    # Rewritten rows lost their vectors (their text changed); the untouched ones kept theirs.
    assert report.vectors_dropped == 3  # message m1, the decision, the summary (m2 changed in meta only)
    pending = semantic.count_pending(store, semantic.model_key(store, FakeEmbedder()))
    assert pending == {
        "decision": 1,
        "learning": 0,
        "breadcrumb": 0,
        "session_summary": 1,
        "message": 1,
        "note": 0,
    }
    assert sum(rescrub(store).rewritten.values()) == 0  # nothing left to change


def test_the_command_reports_counts_as_json(db_path: Path) -> None:
    with Store(db_path) as store:
        store.add(NewRecord(RecordKind.LEARNING, "nothing secret here", "p"))
    result = CliRunner().invoke(cli, ["--db", str(db_path), "rescrub", "--json"], catch_exceptions=False)
    data = json.loads(result.output)
    assert data["checked"]["learning"] == 1 and sum(data["rewritten"].values()) == 0
