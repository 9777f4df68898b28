"""Sessions and messages a user forgot, recognised by a digest so that no import stores them again.

A digest is a sha256 over the host, the session's id at that host and, for a message, its key:
enough to know the same session or message when its transcript is read again, and nothing of its
text (adr/0014). A subagent's session goes with its parent's: it is part of the same conversation.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass

from recall.transcript import Transcript


def session_digest(host: str, external_id: str) -> str:
    return _digest("session", host, external_id)


def message_digest(host: str, session_external_id: str, key: str) -> str:
    return _digest("message", host, session_external_id, key)


def _digest(*parts: str) -> str:
    joined = "\x1f".join(parts).encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(joined).hexdigest()


@dataclass(frozen=True, slots=True)
class ForgottenKeys:
    """What of one transcript was forgotten: the whole session, or some of its messages."""

    host: str
    external_id: str
    session: bool
    messages: frozenset[str]

    def skips_message(self, key: str) -> bool:
        return bool(self.messages) and message_digest(self.host, self.external_id, key) in self.messages


def forgotten_keys(conn: sqlite3.Connection, transcript: Transcript) -> ForgottenKeys:
    """One indexed look-up per transcript; a store that forgot nothing pays only that."""
    own = session_digest(transcript.host, transcript.external_id)
    parents = [own]
    if transcript.agent_id and transcript.parent_external_id:
        parents.append(session_digest(transcript.host, transcript.parent_external_id))
    marks = ", ".join("?" for _ in parents)
    session = conn.execute(
        f"SELECT 1 FROM forgotten WHERE kind = 'session' AND digest IN ({marks}) LIMIT 1", parents
    ).fetchone()
    messages = frozenset(
        row[0]
        for row in conn.execute(
            "SELECT digest FROM forgotten WHERE session_digest = ? AND kind = 'message'", (own,)
        )
    )
    return ForgottenKeys(transcript.host, transcript.external_id, session is not None, messages)
