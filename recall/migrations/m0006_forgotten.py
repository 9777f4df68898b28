"""What a user forgot, so no import stores it again; and a vacuum owed by files from before (adr/0014).

``forgotten`` holds one row per forgotten session or message: a sha256 over its host, its
session's id at that host and, for a message, its key. That recognises the same session or message
in a transcript still on disk and keeps nothing of its text. ``session_digest`` is the session's
digest on every row, so one indexed look-up finds what to skip in a transcript.

Until this step SQLite left deleted text in free space (``PRAGMA secure_delete`` was off), so a
database that already holds rows owes one ``VACUUM``: ``vacuum_pending`` says so, and the first
forget, purge or rescrub pays it and clears the row.
"""

SQL = """
CREATE TABLE forgotten (
    digest TEXT PRIMARY KEY,
    session_digest TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('session', 'message')),
    forgotten_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX forgotten_session ON forgotten (session_digest);

CREATE TABLE vacuum_pending (reason TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO vacuum_pending (reason)
SELECT 'free space written before secure_delete'
WHERE EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM decisions)
   OR EXISTS (SELECT 1 FROM learnings) OR EXISTS (SELECT 1 FROM breadcrumbs);
"""
