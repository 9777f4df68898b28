"""Notes: markdown documents addressed by a path inside a project (``notes/architecture.md``).

A note is searched with everything else: it joins the one FTS5 index as kind code 6 (rowid
``id * 8 + 6``, scope token ``knote``), its path in the ``detail`` column so a search for a file
name finds it, and its vectors go with it like any record's (m0003). The path is unique per
project: writing a path again replaces the note.
"""

SQL = """
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    provenance TEXT NOT NULL CHECK (provenance IN ('verbatim', 'user_authored', 'extracted', 'derived')),
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (project, path)
);

CREATE TRIGGER notes_index_insert AFTER INSERT ON notes BEGIN
    INSERT INTO search_index (rowid, content, detail, tags, scope)
    VALUES (new.id * 8 + 6, new.content, new.path, '', 'knote p' || hex(new.project));
END;
CREATE TRIGGER notes_index_delete AFTER DELETE ON notes BEGIN
    INSERT INTO search_index (search_index, rowid, content, detail, tags, scope)
    VALUES ('delete', old.id * 8 + 6, old.content, old.path, '', 'knote p' || hex(old.project));
END;
CREATE TRIGGER notes_index_update AFTER UPDATE OF content, path, project ON notes BEGIN
    INSERT INTO search_index (search_index, rowid, content, detail, tags, scope)
    VALUES ('delete', old.id * 8 + 6, old.content, old.path, '', 'knote p' || hex(old.project));
    INSERT INTO search_index (rowid, content, detail, tags, scope)
    VALUES (new.id * 8 + 6, new.content, new.path, '', 'knote p' || hex(new.project));
END;

CREATE TRIGGER notes_vectors_delete AFTER DELETE ON notes BEGIN
    DELETE FROM embeddings WHERE kind_code = 6 AND row_id = old.id;
END;
CREATE TRIGGER notes_vectors_update AFTER UPDATE OF content, path ON notes BEGIN
    DELETE FROM embeddings WHERE kind_code = 6 AND row_id = old.id;
END;
"""
