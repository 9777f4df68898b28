"""Entities and their links: what each session, message and record touched (adr/0019).

``entities`` holds one row per project, type and name (a file relative to the project root, a
command's stable part, an error's shape, ...) with ``key``, the lower-cased word a lookup starts from
(a file's base name, a command's program, an error's class). ``entity_links`` says how something
touched an entity (edited, read, ran, failed_on, installed, imported, mentions) and when. A link
belongs to exactly one message or record and goes with it: every owner is a foreign key with
ON DELETE CASCADE, so any path that forgets a session, message or record removes its links, and an
entity left without links is removed by a trigger. ``entity_scans`` remembers, per session, the last
message connected, so each import reads only messages new to a session; ``entity_record_scans`` does
the same for records written before this step.
"""

SQL = """
CREATE TABLE entities (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    provenance TEXT NOT NULL CHECK (provenance = 'extracted'),
    type TEXT NOT NULL CHECK (type IN ('file', 'symbol', 'package', 'command', 'error', 'host', 'url')),
    name TEXT NOT NULL,
    key TEXT NOT NULL,
    UNIQUE (project, type, name)
);
CREATE INDEX entities_key ON entities (key, project);

CREATE TABLE entity_links (
    id INTEGER PRIMARY KEY,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation TEXT NOT NULL
        CHECK (relation IN ('edited', 'read', 'ran', 'failed_on', 'installed', 'imported', 'mentions')),
    at TEXT NOT NULL,
    session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    decision_id INTEGER REFERENCES decisions(id) ON DELETE CASCADE,
    learning_id INTEGER REFERENCES learnings(id) ON DELETE CASCADE,
    breadcrumb_id INTEGER REFERENCES breadcrumbs(id) ON DELETE CASCADE,
    via_id INTEGER REFERENCES entities(id) ON DELETE SET NULL,
    detail TEXT,
    CHECK ((message_id IS NOT NULL) + (decision_id IS NOT NULL) + (learning_id IS NOT NULL)
           + (breadcrumb_id IS NOT NULL) = 1)
);
-- Newest first per entity, covering what connections read (sessions, via) without the table.
CREATE INDEX entity_links_entity ON entity_links (entity_id, at, session_id, via_id);
-- The few links of records, apart from the many of messages.
CREATE INDEX entity_links_records ON entity_links (entity_id) WHERE message_id IS NULL;
CREATE INDEX entity_links_session ON entity_links (session_id, relation, entity_id);
CREATE INDEX entity_links_via ON entity_links (via_id) WHERE via_id IS NOT NULL;
CREATE UNIQUE INDEX entity_links_message ON entity_links (message_id, entity_id, relation)
    WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX entity_links_decision ON entity_links (decision_id, entity_id, relation)
    WHERE decision_id IS NOT NULL;
CREATE UNIQUE INDEX entity_links_learning ON entity_links (learning_id, entity_id, relation)
    WHERE learning_id IS NOT NULL;
CREATE UNIQUE INDEX entity_links_breadcrumb ON entity_links (breadcrumb_id, entity_id, relation)
    WHERE breadcrumb_id IS NOT NULL;

CREATE TRIGGER entity_links_prune AFTER DELETE ON entity_links BEGIN
    DELETE FROM entities WHERE id = old.entity_id
        AND NOT EXISTS (SELECT 1 FROM entity_links WHERE entity_id = old.entity_id);
END;

CREATE TABLE entity_scans (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL
);

CREATE TABLE entity_record_scans (
    kind TEXT PRIMARY KEY,
    row_id INTEGER NOT NULL
);
"""
