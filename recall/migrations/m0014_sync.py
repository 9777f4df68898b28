"""What a machine remembers of its syncs with a team server (`recall sync`, adr/0025).

``sync_state``: per server, this machine's id (the prefix of every record's origin), the last
message pushed and the last change pulled; both move only after the server answered a batch, so a
sync killed halfway resumes where the server stopped. ``sync_links``: which local record is which
row on the server, and the ``updated_at`` it had when they last agreed, so only a record changed
since is pushed again.
"""

SQL = """
CREATE TABLE sync_state (
    remote TEXT PRIMARY KEY,
    machine TEXT NOT NULL,
    pushed_message_id INTEGER NOT NULL DEFAULT 0,
    pulled_seq INTEGER NOT NULL DEFAULT 0,
    profiles_at TEXT NOT NULL DEFAULT '',
    synced_at TEXT
);
CREATE TABLE sync_links (
    remote TEXT NOT NULL,
    kind TEXT NOT NULL,
    local_id INTEGER NOT NULL,
    server_id INTEGER NOT NULL,
    agreed_at TEXT NOT NULL,
    PRIMARY KEY (remote, kind, local_id),
    UNIQUE (remote, kind, server_id)
);
"""
