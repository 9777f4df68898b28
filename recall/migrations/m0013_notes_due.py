"""Notes wait in ``vectors_due`` like every other record written without the model (m0010, adr/0029).

m0012 made notes a record kind (code 6) after m0010 queued the others; a note saved by `recall
note` or a hook is embedded by the next semantic or hybrid search. Notes pending now are queued.
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
