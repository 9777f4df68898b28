"""kill -9 at any moment of `recall import`, `recall dump` or `recall embed`: the next import repairs.

Real processes on a generated transcript set. A watcher reads the database while the process
writes and freezes the process (SIGSTOP) the moment it reaches the state under test: partway
through a file written in several transactions, partway through the files, after the last file but
before the summaries, in the middle of a dump, in the middle of `recall embed`. The frozen process
is then killed with SIGKILL. The next `recall import` must leave the database equal to a clean
import of the same files (sessions, messages, summaries, keyword index), and `recall doctor` must
say that nothing is left to repair.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from recall.store.transcripts import ROWS_PER_TRANSACTION

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kill -9 is POSIX"),
]

SESSIONS = 24
MESSAGES = 60
BIG = ROWS_PER_TRANSACTION * 2 + 17  # the first file: written in three transactions
WORDS = [
    "sqlite",
    "wal",
    "lock",
    "import",
    "summary",
    "index",
    "vector",
    "cache",
    "retry",
    "timeout",
    "schema",
    "hook",
]
TIMEOUT = 240
Probe = Callable[[sqlite3.Connection], bool]


def _session_lines(rng: random.Random, project: str, count: int) -> list[str]:
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    start = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(hours=rng.randrange(1000))
    lines = []
    for n in range(count):
        user = n % 2 == 0
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
        if n == 3:
            text = "we decided to keep the " + text
        lines.append(
            json.dumps(
                {
                    "type": "user" if user else "assistant",
                    "uuid": f"{session_id}-{n}",
                    "sessionId": session_id,
                    "timestamp": (start + timedelta(seconds=n)).isoformat(),
                    "cwd": f"/home/dev/{project}",
                    "message": {"role": "user", "content": text}
                    if user
                    else {
                        "role": "assistant",
                        "id": f"msg-{session_id}-{n}",
                        "content": [{"type": "text", "text": text}],
                    },
                }
            )
        )
    return lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Claude Code sessions; the first in discovery order is big enough for several transactions."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(10)
    files = [("-home-dev-a", "big", BIG)] + [
        (f"-home-dev-p{n % 4}", f"s{n:02}", MESSAGES) for n in range(SESSIONS)
    ]
    for folder, name, count in files:
        (root / "projects" / folder).mkdir(parents=True, exist_ok=True)
        lines = _session_lines(rng, folder.removeprefix("-home-dev-"), count)
        (root / "projects" / folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _env(tmp_path: Path, *, model: bool = False) -> dict[str, str]:
    env = {**os.environ, "RECALL_HOME": str(tmp_path / "recall-home"), "HOME": str(tmp_path / "home")}
    if not model:
        env["RECALL_MODEL_DIR"] = str(tmp_path / "no-model")  # no embedding: repair, not model time
    return env


def _recall(db: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "recall", "--db", str(db), *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err.decode(errors="replace")
    return json.loads(out) if out.strip() else {}


def _import(db: Path, env: dict[str, str], corpus: Path) -> subprocess.Popen[bytes]:
    return _recall(db, env, "import", "--host", "claude", "--path", str(corpus), "--json")


def _kill_when(proc: subprocess.Popen[bytes], db: Path, probe: Probe) -> None:
    """Freeze ``proc`` as soon as ``probe`` holds on the database, check it still holds, kill -9."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"the process ended before the state under test: {proc.stderr.read().decode()[-300:]}"
            )  # type: ignore[union-attr]
        if _holds(db, probe):
            os.kill(proc.pid, signal.SIGSTOP)
            break
        time.sleep(0.003)
    else:
        pytest.fail("the state under test never came")
    held = _holds(db, probe)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert held, "the process moved past the state under test before it was frozen"


def _holds(db: Path, probe: Probe) -> bool:
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0.2)
        try:
            return probe(conn)
        finally:
            conn.close()
    except sqlite3.Error:  # not created or migrated yet, or a checkpoint in the way
        return False


def _count(conn: sqlite3.Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchone()[0])


def _state(db: Path) -> dict[str, Any]:
    """Everything that must match a clean import, by natural key (ids and write times may differ)."""
    conn = sqlite3.connect(db)
    try:
        indexed = {row[0] for row in conn.execute("SELECT id FROM search_index_docsize")}
        rows = {
            row[0]
            for row in conn.execute(
                "SELECT id * 8 + 5 FROM messages UNION ALL SELECT id * 8 + 4 FROM session_summaries "
                "UNION ALL SELECT id * 8 + 1 FROM decisions UNION ALL SELECT id * 8 + 2 FROM learnings "
                "UNION ALL SELECT id * 8 + 3 FROM breadcrumbs"  # extracted records are indexed too
            )
        }
        matches = conn.execute(
            "SELECT s.external_id, m.external_id FROM search_index f JOIN messages m ON f.rowid = m.id * 8 + 5 "
            "JOIN sessions s ON s.id = m.session_id WHERE search_index MATCH 'timeout AND retry' ORDER BY 1, 2"
        ).fetchall()
        return {
            "sessions": conn.execute(
                "SELECT host, external_id, project, title, cwd, started_at, ended_at FROM sessions ORDER BY 2"
            ).fetchall(),
            "messages": conn.execute(
                "SELECT s.external_id, m.external_id, m.ordinal, m.role, m.origin, m.content_hash, m.content "
                "FROM messages m JOIN sessions s ON s.id = m.session_id ORDER BY 1, 3"
            ).fetchall(),
            "summaries": conn.execute(
                "SELECT s.external_id, ss.title, ss.content, ss.provenance FROM session_summaries ss "
                "JOIN sessions s ON s.id = ss.session_id ORDER BY 1"
            ).fetchall(),
            "index": (indexed == rows, len(indexed), matches),
            "sources": conn.execute(
                "SELECT host, path, size, mtime_ns, sessions FROM source_files ORDER BY 2"
            ).fetchall(),
            "summaries_due": _count(conn, "SELECT count(*) FROM summaries_due"),
        }
    finally:
        conn.close()


@pytest.fixture(scope="module")
def clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("clean")
    db = folder / "clean.db"
    _finish(_import(db, _env(folder), corpus))
    state = _state(db)
    assert state["index"][0] and state["summaries_due"] == 0
    assert len(state["summaries"]) == SESSIONS + 1 and state["index"][2]
    return state


def _repaired(db: Path, env: dict[str, str], corpus: Path, clean: dict[str, Any]) -> dict[str, Any]:
    """Run the next import, check the database equals a clean import and doctor has nothing to repair."""
    summary = _finish(_import(db, env, corpus))
    assert summary["files"]["failed"] == 0
    assert _state(db) == clean
    doctor = subprocess.run(
        [sys.executable, "-m", "recall", "--db", str(db), "doctor", "--json"],
        env=env, capture_output=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    sections = {s["title"]: s["findings"] for s in json.loads(doctor.stdout)["sections"]}
    assert [f["level"] for f in sections["Repair"]] == ["ok"], sections["Repair"]
    return summary


PROBES: dict[str, Probe] = {
    # The big first file is half written: its session has messages, no file is stamped yet.
    "partway_through_a_file": lambda c: (
        _count(c, "SELECT count(*) FROM messages") > 0 and _count(c, "SELECT count(*) FROM source_files") == 0
    ),
    # Some files are stamped, others not read yet.
    "partway_through_the_files": lambda c: (
        SESSIONS // 3 <= _count(c, "SELECT count(*) FROM source_files") < SESSIONS
    ),
    # Every file is stamped; summaries are still being written.
    "before_the_summaries": lambda c: (
        _count(c, "SELECT count(*) FROM source_files") == SESSIONS + 1
        and _count(c, "SELECT count(*) FROM summaries_due") > 0
    ),
}


@pytest.mark.parametrize("moment", sorted(PROBES))
def test_an_import_killed_at_any_moment_is_repaired_by_the_next(
    moment: str, corpus: Path, clean: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "killed.db"
    env = _env(tmp_path)
    _kill_when(_import(db, env, corpus), db, PROBES[moment])
    cut = _state(db)
    assert cut != clean  # something is missing that the next import must bring back
    _repaired(db, env, corpus, clean)


def test_a_dump_killed_before_its_summary_is_repaired_by_the_next_import(
    corpus: Path, clean: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "dumped.db"
    env = _env(tmp_path)
    big = corpus / "projects" / "-home-dev-a" / "big.jsonl"
    dump = _recall(db, env, "dump", "--source", "claude", "--path", str(big), "--json")
    _kill_when(dump, db, lambda c: _count(c, "SELECT count(*) FROM messages") > 0)
    assert _state(db)["summaries"] == []
    _repaired(db, env, corpus, clean)


def test_an_embed_killed_partway_is_resumed_by_the_next_import(
    corpus: Path, clean: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "embedded.db"
    _finish(_import(db, _env(tmp_path), corpus))
    env = _env(tmp_path, model=True)
    _kill_when(_recall(db, env, "embed"), db, lambda c: _count(c, "SELECT count(*) FROM embeddings") > 0)
    conn = sqlite3.connect(db)
    before = _count(conn, "SELECT count(*) FROM embeddings")
    conn.close()
    summary = _repaired(db, env, corpus, clean)
    assert (
        summary["messages"]["added"] == 0 and summary["embedding"]["embedded"] > 0
    )  # nothing new, yet it embeds
    conn = sqlite3.connect(db)
    after = _count(conn, "SELECT count(*) FROM embeddings")
    orphans = _count(
        conn, "SELECT count(*) FROM embeddings e WHERE e.kind_code = 5 AND NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.id = e.row_id)",
    )  # fmt: skip
    conn.close()
    assert after > before and orphans == 0
