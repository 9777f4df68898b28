"""Looking for text on disk, byte by byte, in every file of a database's folder.

A canary is a word that exists nowhere else. The keyword index keeps words lower-cased, stemmed and
prefix-compressed (a term shares its first bytes with the term before it on the page), so a file is
searched for a canary's tail, which survives all three: canaries end in ``zq`` (no stemming rule
touches it) or are hex, and their random middle shares a prefix with no other word.
"""

from __future__ import annotations

import secrets
import sqlite3
import string
from pathlib import Path

TAIL = 12


def plain_canary() -> str:
    """An ordinary-looking word, unique to one test run."""
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(18)) + "zq"


def secret_canary() -> str:
    """40 hex characters: shaped like an API key or a git SHA, which the scrubber keeps (a SHA)."""
    return secrets.token_hex(20)


def _tail(canary: str) -> bytes:
    return canary[-TAIL:].encode()


def leftovers(folder: Path, *canaries: str) -> dict[str, list[str]]:
    """``{file name: canaries found in it}`` over every file in ``folder`` (database, -wal, -shm,
    vector snapshots, anything else recall left there)."""
    found: dict[str, list[str]] = {}
    for path in sorted(folder.iterdir()):
        if path.is_file():
            data = path.read_bytes()
            hits = [canary for canary in canaries if _tail(canary) in data]
            if hits:
                found[path.name] = hits
    return found


def index_leftovers(db_path: Path, *canaries: str) -> list[str]:
    """Canaries whose words are still in the keyword index's own pages (deleted or not)."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        blocks = b"".join(bytes(row[0]) for row in conn.execute("SELECT block FROM search_index_data"))
    finally:
        conn.close()
    return [canary for canary in canaries if _tail(canary) in blocks]
