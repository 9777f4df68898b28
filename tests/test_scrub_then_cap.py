"""Normalise, scrub, then cap: a secret that a cap cuts through leaves nothing of itself behind.

Each secret is placed so that the cap (tool output, tool-call gist, ``--tool-text-cap``, the
memory ceiling) falls inside it, then imported through a real adapter, the real CLI and a real
SQLite file; the check reads every row and every term of the keyword index (adr/0013).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.store import Store
from recall.store import caps as caps_module
from recall.store.caps import cap, scrub_then_cap
from recall.transcript import Cut, MessageKind, Origin, Role, Transcript, TranscriptMessage

WINDOW = 8
# Built at run time so the repository holds no literal key: a GitHub token, 36 characters of body.
SECRET = "gh" + "p_" + "Zq8Lm2Xv7Rt4Kp9Wd3Hs6Nb1Fy5Jc0Ga8UeT"


def _windows(secret: str) -> set[str]:
    return {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


def _stored_texts(db_path: Path) -> Iterator[str]:
    """Every value of every table, and every term of the keyword index, lower-cased as FTS5 keeps them."""
    conn = sqlite3.connect(db_path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                yield repr(row)
        conn.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, search_index, 'row')")
        yield " ".join(term for (term,) in conn.execute("SELECT term FROM temp.terms"))
    finally:
        conn.close()


def _assert_no_fragment(db_path: Path, secret: str = SECRET) -> None:
    windows = _windows(secret) | {w.lower() for w in _windows(secret)}
    for text in _stored_texts(db_path):
        kept = sorted(w for w in windows if w in text)
        assert not kept, f"fragments of the secret survived: {kept[:3]}"


def _write_session(path: Path, call_command: str, result_text: str) -> Path:
    """A Claude Code transcript: one Bash call and its output."""
    stamp = "2026-01-02T03:04:05.000Z"
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": call_command}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": result_text}
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": stamp, "cwd": "/nowhere/app",
         "message": {"role": "user", "content": "check the deploy"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": stamp,
         "message": {"id": "m1", "role": "assistant", "model": "x", "content": [call]}},
        {"type": "user", "uuid": "u2", "sessionId": "s1", "timestamp": stamp,
         "message": {"role": "user", "content": [result]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _import(db_path: Path, transcript: Path, *options: str) -> dict[str, Any]:
    outcome = CliRunner().invoke(
        cli,
        ["--db", str(db_path), "import", "--host", "claude", "--path", str(transcript), "--json", *options],
        catch_exceptions=False,
    )
    assert outcome.exit_code == 0, outcome.output
    return json.loads(outcome.output)


def _straddling(limit: int, prefix: str = "") -> str:
    """Text in which ``limit`` falls in the middle of the secret."""
    lead = limit - len(prefix) - len(SECRET) // 2
    return prefix + "log " + "x" * (lead - 5) + " " + SECRET + " done"


def test_a_secret_cut_by_the_tool_output_cap_leaves_no_fragment(tmp_path: Path, db_path: Path) -> None:
    transcript = _write_session(tmp_path / "s1.jsonl", "make deploy", _straddling(2000))
    report = _import(db_path, transcript)
    assert report["redactions"] == {"github-token": 1}
    _assert_no_fragment(db_path)


def test_a_secret_cut_by_the_tool_call_gist_leaves_no_fragment(tmp_path: Path, db_path: Path) -> None:
    command = _straddling(240, prefix="Bash: ")[len("Bash: ") :]  # the gist keeps 240 characters
    transcript = _write_session(tmp_path / "s1.jsonl", command, "ok")
    report = _import(db_path, transcript)
    assert report["redactions"] == {"github-token": 1}
    _assert_no_fragment(db_path)


def test_a_secret_cut_by_a_smaller_tool_text_cap_leaves_no_fragment(tmp_path: Path, db_path: Path) -> None:
    transcript = _write_session(tmp_path / "s1.jsonl", _straddling(100, "Bash: ")[6:], _straddling(100))
    report = _import(db_path, transcript, "--tool-text-cap", "100")
    assert report["redactions"] == {"github-token": 2}
    _assert_no_fragment(db_path)
    with Store(db_path) as store, store.reading() as conn:
        for (content,) in conn.execute(
            "SELECT content FROM messages WHERE kind IN ('tool_call', 'tool_result')"
        ):
            assert len(content.split("\n[…")[0]) <= 100  # the cap still holds


def test_a_secret_at_the_memory_ceiling_leaves_no_fragment(
    store: Store, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caps_module, "CEILING", 500)  # the ceiling works the same at any size
    text = "x " * 200 + "y" * 80 + " " + SECRET + " and more after it " * 20
    assert text.index(SECRET) < 500 < text.index(SECRET) + len(SECRET)
    message = TranscriptMessage("m1", Role.USER, text, origin=Origin.HUMAN, kind=MessageKind.TEXT)
    store.import_transcripts([Transcript("claude", "s1", (message,), cwd="/nowhere/app")])
    _assert_no_fragment(db_path)
    with store.reading() as conn:
        (content,) = conn.execute("SELECT content FROM messages").fetchone()
    assert content.startswith("x x x") and "more characters cut]" in content


def test_each_part_is_cut_after_its_own_scrub() -> None:
    call, result = "Bash: deploy --token " + SECRET, "x" * 30 + " " + SECRET
    text = f"{call}\n\n{result}"
    cuts = (Cut(0, len(call), 50), Cut(len(call) + 2, len(text), 40))
    stored = scrub_then_cap(text, cuts)
    assert stored.kinds == ("github-token", "github-token")
    # The call is longer than 50 characters raw but not once its key is redacted: it is kept whole.
    assert stored.text == (
        "Bash: deploy --token [REDACTED:github-token]\n\n" + "x" * 30 + " \n[… 23 more characters cut]"
    )


def test_a_cut_never_splits_a_redaction_marker() -> None:
    text = "a" * 10 + "[REDACTED:github-token] tail"
    assert cap(text, 15) == "a" * 10 + "\n[… 28 more characters cut]"
