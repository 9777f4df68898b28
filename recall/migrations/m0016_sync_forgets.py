"""What a machine forgot that a team server still holds, until the next sync tells it (adr/0039).

``sync_forgets`` is a queue of tombstones, one per server: a forgotten record by its row on that
server (``server_id``, read from ``sync_links`` in the forget's own transaction), a forgotten
session or message by its digest (``recall.store.forgotten``: no text, no ids in the clear). A sync
sends them before anything else and deletes them once the server answered, so a killed sync sends
them again, and forgetting twice is a no-op there. A person's erasures write them (``forget``, one
row or by filter, a rejected extraction, duplicates merged away); a purge does not: it is this
machine's own retention and leaves the team's copy alone.

Deleting a record also drops its ``sync_links`` row, whatever deleted it (forget, purge, dedup, a
rejected extraction): SQLite may give the next record the same id, which must not inherit the link.
"""

_KINDS = (
    ("decisions", "decision"),
    ("learnings", "learning"),
    ("breadcrumbs", "breadcrumb"),
    ("session_summaries", "session_summary"),
)

SQL = """
CREATE TABLE sync_forgets (
    id INTEGER PRIMARY KEY,
    remote TEXT NOT NULL,
    kind TEXT NOT NULL,
    server_id INTEGER,
    digest TEXT,
    session_digest TEXT,
    forgotten_at TEXT NOT NULL
);
CREATE INDEX sync_forgets_remote ON sync_forgets (remote, id);
""" + "".join(
    f"""
CREATE TRIGGER {table}_sync_unlink AFTER DELETE ON {table} BEGIN
    DELETE FROM sync_links WHERE kind = '{kind}' AND local_id = OLD.id;
END;
"""
    for table, kind in _KINDS
)
SQL += "CREATE INDEX sync_links_local ON sync_links (kind, local_id);\n"
