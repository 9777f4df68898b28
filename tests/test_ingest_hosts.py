"""`recall import` of OpenCode, Pi and Gemini CLI into a real database: incremental and idempotent.

These hosts rewrite files in place (OpenCode parts while streaming, Pi's migration on open, Gemini's
era-2 chats on every change and on a rewind), so each case checks what the store holds afterwards, not
only what the importer counted: a second run writes nothing, a grown session adds exactly what is
new, and a rewrite that changes nothing writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from adapters import get_adapter
from recall.ingest import ImportSummary, run_import
from recall.store import Store
from tests.adapters.test_pi import DOCS_SESSION, migrate_like_pi

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
OPENCODE_JSON = FIXTURES / "opencode" / "synthetic" / "built-from-source" / "v1.1-json" / "opencode"
OPENCODE_DB = (
    FIXTURES / "opencode" / "synthetic" / "built-from-source" / "v1.2-sqlite" / "opencode" / "opencode.db"
)
GEMINI_HOME = FIXTURES / "gemini" / "synthetic" / "built-from-source" / ".gemini"
GEMINI_REAL = next((FIXTURES / "gemini" / "real").rglob("*.json"))
PARENT = "ses_4a6e1d0f7ffeV3kQ9tLmB2xZcR"


def count(store: Store, sql: str = "SELECT count(*) FROM messages", *args: object) -> int:
    return int(store.connection.execute(sql, args).fetchone()[0])


def snapshot(store: Store) -> list[tuple[object, ...]]:
    """Every stored message as written, to compare a database before and after a run."""
    return store.connection.execute(
        "SELECT session_id, external_id, ordinal, content, content_hash, updated_at FROM messages ORDER BY id"
    ).fetchall()


def imported(store: Store, host: str, *paths: Path, force: bool = False) -> ImportSummary:
    return run_import(store, [get_adapter(host)], paths=list(paths), embed_budget_seconds=0, force=force)


@pytest.mark.parametrize("host", ["opencode", "pi", "gemini"])
def test_every_fixture_imports_and_a_second_run_writes_nothing(store: Store, host: str) -> None:
    root = FIXTURES / host
    first = imported(store, host, root)
    assert first.files_failed == 0 and first.messages_added == count(store) > 0
    before = snapshot(store)

    second = imported(store, host, root)
    forced = imported(store, host, root, force=True)

    assert second.files_unchanged == first.files_read and second.messages_added == 0
    assert (forced.messages_added, forced.messages_updated, forced.sessions_new) == (0, 0, 0)
    assert snapshot(store) == before


def test_opencode_read_from_json_and_database_is_stored_once(store: Store) -> None:
    imported(store, "opencode", OPENCODE_JSON)
    once = count(store)
    again = imported(store, "opencode", OPENCODE_DB)

    assert (again.messages_added, again.messages_updated, again.sessions_new) == (0, 0, 0)
    assert count(store) == once == 19
    child = store.connection.execute(
        "SELECT c.agent_id, p.external_id FROM sessions c JOIN sessions p ON p.id = c.parent_id"
    ).fetchone()
    assert tuple(child) == ("explore", PARENT)


def test_opencode_json_part_rewritten_in_place_and_a_new_message(store: Store, tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(OPENCODE_JSON, data)
    imported(store, "opencode", data)
    before = snapshot(store)
    part = next(data.glob("storage/part/msg_b5e0fbb07001Qs2MkP8dVx4HnE/prt_b5e0fbb0b001Tx9.json"))
    part.write_bytes(part.read_bytes())  # OpenCode rewrote it while streaming: same bytes, new mtime
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 2_000_000_000))

    rewritten = imported(store, "opencode", data)
    assert rewritten.files_read == 1 and (rewritten.messages_added, rewritten.messages_updated) == (0, 0)
    assert snapshot(store) == before

    message_dir = data / "storage" / "message" / PARENT
    (message_dir / "msg_b5e2000000001NewTurnAbcdef.json").write_text(json.dumps(
        {"id": "msg_b5e2000000001NewTurnAbcdef", "sessionID": PARENT, "role": "user",
         "time": {"created": 1768900200000}, "agent": "build"}))  # fmt: skip
    (data / "storage" / "part" / "msg_b5e2000000001NewTurnAbcdef").mkdir()
    (data / "storage" / "part" / "msg_b5e2000000001NewTurnAbcdef" / "prt_b5e2000000002Tx99.json").write_text(
        json.dumps({"id": "prt_b5e2000000002Tx99", "type": "text", "text": "Ship it."})
    )
    grown = imported(store, "opencode", data)
    assert (grown.messages_added, grown.messages_updated) == (1, 0)
    assert count(store) == len(before) + 1


def test_opencode_database_rows_updated_in_place(store: Store, tmp_path: Path) -> None:
    database = tmp_path / "opencode.db"
    shutil.copy(OPENCODE_DB, database)
    imported(store, "opencode", database)
    before = snapshot(store)
    with sqlite3.connect(database) as conn:  # a streaming update that changes nothing, then one that does
        conn.execute("UPDATE part SET time_updated = time_updated + 1")
        conn.execute("UPDATE session SET time_updated = time_updated + 1")
    unchanged = imported(store, "opencode", database)
    assert unchanged.files_read == 1 and snapshot(store) == before

    with sqlite3.connect(database) as conn:
        data = json.loads(
            conn.execute("SELECT data FROM part WHERE id = 'prt_b5e0fbb0b001Tx9'").fetchone()[0]
        )
        data["text"] += " Coverage is unchanged."
        conn.execute("UPDATE part SET data = ? WHERE id = 'prt_b5e0fbb0b001Tx9'", (json.dumps(data),))
    grown = imported(store, "opencode", database)
    assert (grown.messages_added, grown.messages_updated) == (0, 1)
    assert count(store, "SELECT count(*) FROM messages WHERE content LIKE '%Coverage is unchanged.'") == 1


def test_pi_rewrite_on_open_writes_nothing_and_new_entries_add_exactly_themselves(
    store: Store, tmp_path: Path
) -> None:
    session = tmp_path / "sessions" / "--x--" / DOCS_SESSION.name
    session.parent.mkdir(parents=True)
    shutil.copy(DOCS_SESSION, session)
    first = imported(store, "pi", session)
    assert first.messages_added == 507
    before = snapshot(store)

    migrate_like_pi(DOCS_SESSION, session)  # pi opened the file: v1 → v3, new ids, glued line gone
    rewritten = imported(store, "pi", session)
    assert rewritten.files_read == 1 and (rewritten.messages_added, rewritten.messages_updated) == (0, 0)
    assert snapshot(store) == before

    last = json.loads(session.read_text(encoding="utf-8").splitlines()[-1])
    with session.open("a", encoding="utf-8") as handle:
        for n, role in enumerate(["user", "assistant"]):
            handle.write(json.dumps({
                "type": "message", "id": f"new0000{n}", "parentId": last["id"],
                "timestamp": f"2026-01-02T10:00:0{n}.000Z",
                "message": {"role": role, "content": [{"type": "text", "text": f"turn {n} after the rewrite"}],
                            "timestamp": 1767348000000 + n},
            }) + "\n")  # fmt: skip
    grown = imported(store, "pi", session)
    assert (grown.messages_added, grown.messages_updated) == (2, 0)
    assert count(store) == 509


def test_gemini_jsonl_grows_and_a_rewind_changes_nothing(store: Store, tmp_path: Path) -> None:
    home = tmp_path / ".gemini"
    shutil.copytree(GEMINI_HOME, home)
    chat = next(home.glob("tmp/weather-cli/chats/session-*.jsonl"))
    lines = chat.read_text(encoding="utf-8").splitlines(keepends=True)
    chat.write_text("".join(lines[:8]), encoding="utf-8")  # before the rewound exchange
    first = imported(store, "gemini", home)

    chat.write_text("".join(lines), encoding="utf-8")  # the exchange, its rewind, the redo and the end
    grown = imported(store, "gemini", home)
    full = Store(tmp_path / "fresh.db")
    whole = imported(full, "gemini", home)
    assert first.messages_added + grown.messages_added == whole.messages_added == count(store)
    assert grown.messages_updated == 0
    full.close()

    before = snapshot(store)
    with chat.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"$rewindTo": "b8a5e3c7-2d90-4f16-8e4b-0a7c3f1d5e92"}) + "\n")
    rewound = imported(store, "gemini", home)
    assert rewound.files_read == 1 and (rewound.messages_added, rewound.messages_updated) == (0, 0)
    assert snapshot(store) == before


def test_gemini_era2_rewrite_and_a_resumed_copy_add_nothing(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / ".gemini" / "tmp" / "d30f91067027d10192e4aed3e7b03fecf08089dd3370f047f14f38b1845c8042"
    chat = folder / "chats" / GEMINI_REAL.name
    chat.parent.mkdir(parents=True)
    shutil.copy(GEMINI_REAL, chat)
    imported(store, "gemini", tmp_path / ".gemini")
    before = snapshot(store)

    record = json.loads(chat.read_text(encoding="utf-8"))  # the CLI rewrites the whole file
    chat.write_text(json.dumps(record, indent=4), encoding="utf-8")
    os.utime(chat, ns=(chat.stat().st_atime_ns, chat.stat().st_mtime_ns + 2_000_000_000))
    rewritten = imported(store, "gemini", tmp_path / ".gemini")
    assert rewritten.files_read == 1 and (rewritten.messages_added, rewritten.messages_updated) == (0, 0)

    # --resume of an era-2 chat in v0.39+: the whole history copied into a new .jsonl beside it
    meta = {k: v for k, v in record.items() if k != "messages"}
    resumed = chat.with_name(chat.name.replace(".json", "-resumed.jsonl"))
    extra = {"id": "6f0e-new", "timestamp": "2026-06-05T05:10:00.000Z", "type": "user", "content": "and now?"}
    resumed.write_text(
        "".join(json.dumps(x) + "\n" for x in [meta, *record["messages"], extra]), encoding="utf-8"
    )
    copy = imported(store, "gemini", tmp_path / ".gemini")
    assert (copy.messages_added, copy.messages_updated, copy.sessions_new) == (1, 0, 0)
    assert snapshot(store)[: len(before)] == before
    assert count(store, "SELECT count(*) FROM sessions WHERE host = 'gemini'") == 1


def test_watch_sees_a_message_written_into_a_json_session_while_it_runs(store: Store, tmp_path: Path) -> None:
    """The session file does not change when OpenCode adds a message: the watcher compares the same
    signature over all of the session's files that the importer records."""
    from recall.watch import watch

    data = tmp_path / "opencode"
    shutil.copytree(OPENCODE_JSON, data)
    before = imported(store, "opencode", data).messages_added
    added: list[int] = []
    stop = threading.Event()
    options = {"paths": [data], "interval": 0.01, "rescan_every": 0, "stop": stop,
               "on_import": lambda files, summary: added.append(summary.messages_added)}  # fmt: skip
    worker = threading.Thread(
        target=watch, args=(store, [get_adapter("opencode")]), kwargs=options, daemon=True
    )
    worker.start()
    try:
        time.sleep(0.5)  # a few quiet polls first
        message = data / "storage" / "message" / PARENT / "msg_b5e3000000001LateTurnAbcd.json"
        message.write_text(
            json.dumps({"id": message.stem, "role": "user", "time": {"created": 1768900300000}})
        )
        part = data / "storage" / "part" / message.stem / "prt_b5e3000000002Tx77.json"
        part.parent.mkdir()
        part.write_text(json.dumps({"id": part.stem, "type": "text", "text": "One more thing."}))
        deadline = time.monotonic() + 20
        while sum(added) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        worker.join(10)

    assert sum(added) == 1 and count(store) == before + 1


def test_recall_import_finds_the_three_hosts_where_they_keep_their_data(
    db_path: Path, user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from recall.cli import cli

    shutil.copytree(
        OPENCODE_JSON.parent / ".." / "v1.2-sqlite" / "opencode", user_home / ".local/share/opencode"
    )
    shutil.copytree(FIXTURES / "pi" / "real" / "agent-history" / "agent", user_home / ".pi" / "agent")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    shutil.copytree(GEMINI_HOME, tmp_path / "gemini-home" / ".gemini")
    monkeypatch.chdir(tmp_path)

    def hosts() -> dict[str, int]:
        with sqlite3.connect(db_path) as conn:
            return dict(conn.execute("SELECT host, count(*) FROM sessions GROUP BY host").fetchall())

    runner = CliRunner()
    only_pi = runner.invoke(cli, ["--db", str(db_path), "import", "--host", "pi", "--json"])
    assert only_pi.exit_code == 0 and hosts() == {"pi": 1}
    everything = runner.invoke(cli, ["--db", str(db_path), "import", "--json"], catch_exceptions=False)
    assert everything.exit_code == 0, everything.output
    assert hosts() == {"pi": 1, "opencode": 2, "gemini": 2}
    dumped = runner.invoke(cli, ["--db", str(db_path), "dump", "--source", "gemini", "--path",
                                 str(next((tmp_path / "gemini-home").rglob("session-*.jsonl"))), "--json"])  # fmt: skip
    assert dumped.exit_code == 0 and json.loads(dumped.output)["messages_added"] == 0
