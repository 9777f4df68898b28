"""Notes wait in ``vectors_due`` like records (m0010): a note written without the model loaded
(`recall note write`, an MCP server with no model yet) is embedded by the next meaning search.

Notes already stored without a vector are queued by this step.
"""

SQL = """
CREATE TRIGGER notes_vectors_due_insert AFTER INSERT ON notes BEGIN
    INSERT OR IGNORE INTO vectors_due (kind_code, row_id) VALUES (6, new.id);
END;
CREATE TRIGGER notes_vectors_due_update AFTER UPDATE OF content, path ON notes BEGIN
    INSERT OR IGNORE INTO vectors_due (kind_code, row_id) VALUES (6, new.id);
END;
CREATE TRIGGER notes_vectors_due_delete AFTER DELETE ON notes BEGIN
    DELETE FROM vectors_due WHERE kind_code = 6 AND row_id = old.id;
END;
INSERT OR IGNORE INTO vectors_due (kind_code, row_id)
SELECT 6, n.id FROM notes n
WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.kind_code = 6 AND e.row_id = n.id);
"""
