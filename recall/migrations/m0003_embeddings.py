"""Embedding vectors, stored compactly and tied to the exact model that made them (adr/0006).

A vector is int8 with one float scale per row (388 bytes for 384 dimensions instead of 1,536), and
points at the ``embedding_models`` row naming the model id and the sha256 of its file: vectors of
another model are never compared. ``content_hash`` is the hash of the text that was embedded, so a
corrected record is noticed and embedded again. Deleting or editing a row drops its vectors.
"""


def _drop_vectors(table: str, code: int, watched: str) -> str:
    return f"""
CREATE TRIGGER {table}_vectors_delete AFTER DELETE ON {table} BEGIN
    DELETE FROM embeddings WHERE kind_code = {code} AND row_id = old.id;
END;
CREATE TRIGGER {table}_vectors_update AFTER UPDATE OF {watched} ON {table} BEGIN
    DELETE FROM embeddings WHERE kind_code = {code} AND row_id = old.id;
END;
"""


SQL = f"""
CREATE TABLE embedding_models (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    model_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (model_id, model_hash)
);

CREATE TABLE embeddings (
    seq INTEGER PRIMARY KEY,  -- grows with every insert: a process refreshes its in-memory index from here
    kind_code INTEGER NOT NULL,
    row_id INTEGER NOT NULL,
    model_key INTEGER NOT NULL REFERENCES embedding_models(id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    scale REAL NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_key, kind_code, row_id)
);
CREATE INDEX embeddings_row ON embeddings (kind_code, row_id);

{_drop_vectors("decisions", 1, "content, detail, tags")}
{_drop_vectors("learnings", 2, "content, detail, tags")}
{_drop_vectors("breadcrumbs", 3, "content, detail, tags")}
{_drop_vectors("session_summaries", 4, "content, title")}
{_drop_vectors("messages", 5, "content")}
"""
