"""Records written without the embedding model wait in ``vectors_due`` (adr/0029).

`recall add`, hooks and an import run with ``--embed-budget 0`` write a record without loading the
model. Triggers queue every decision, learning, breadcrumb and session summary when it is written
or its text changes, and take it off when a vector for it is stored or the row goes; the next
semantic or hybrid search, whose model is loaded anyway, embeds what is queued before it searches.
The queue holds ids only, never text. Messages are not queued: an import can hold tens of thousands,
and `recall embed` or the next import embeds them. Records that are pending when this step runs
are queued by it.
"""

_CODES = {"decisions": 1, "learnings": 2, "breadcrumbs": 3, "session_summaries": 4}
_WATCHED = {
    "decisions": "content, detail",
    "learnings": "content, detail",
    "breadcrumbs": "content, detail",
    "session_summaries": "content, title",
}


def _queue(table: str, code: int, watched: str) -> str:
    return f"""
CREATE TRIGGER {table}_vectors_due_insert AFTER INSERT ON {table} BEGIN
    INSERT OR IGNORE INTO vectors_due (kind_code, row_id) VALUES ({code}, new.id);
END;
CREATE TRIGGER {table}_vectors_due_update AFTER UPDATE OF {watched} ON {table} BEGIN
    INSERT OR IGNORE INTO vectors_due (kind_code, row_id) VALUES ({code}, new.id);
END;
CREATE TRIGGER {table}_vectors_due_delete AFTER DELETE ON {table} BEGIN
    DELETE FROM vectors_due WHERE kind_code = {code} AND row_id = old.id;
END;
INSERT OR IGNORE INTO vectors_due (kind_code, row_id)
SELECT {code}, t.id FROM {table} t
WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.kind_code = {code} AND e.row_id = t.id);
"""


SQL = """
CREATE TABLE vectors_due (
    seq INTEGER PRIMARY KEY,  -- queue order: the newest rows are embedded first
    kind_code INTEGER NOT NULL,
    row_id INTEGER NOT NULL,
    UNIQUE (kind_code, row_id)
);
CREATE TRIGGER embeddings_vectors_due_done AFTER INSERT ON embeddings BEGIN
    DELETE FROM vectors_due WHERE kind_code = new.kind_code AND row_id = new.row_id;
END;
""" + "".join(_queue(table, code, _WATCHED[table]) for table, code in _CODES.items())
