"""What the seed systems offer that recall lacked: expiry on every typed kind, a caller's ``source``
and ``metadata`` on records, and a per-project profile (adr/0026, adr/0027).

``valid_until`` joins decisions and learnings (breadcrumbs had it from the start): an expired row
leaves search and the briefs and stays in the file until ``recall purge --expired``. ``source`` (a
free-form origin such as a URL or a ticket) and ``metadata`` (a small JSON object, stored in
``meta`` like a session's) are the caller's own fields, scrubbed like every text. ``profiles`` holds one value per project and key (stack,
conventions, build/test/lint commands, people and owners, notes); it is user_authored by
construction and not in the keyword index: the briefs show it whole.
"""

SQL = """
ALTER TABLE decisions ADD COLUMN valid_until TEXT;
ALTER TABLE learnings ADD COLUMN valid_until TEXT;
ALTER TABLE decisions ADD COLUMN source TEXT;
ALTER TABLE learnings ADD COLUMN source TEXT;
ALTER TABLE breadcrumbs ADD COLUMN source TEXT;
ALTER TABLE decisions ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
ALTER TABLE learnings ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
ALTER TABLE breadcrumbs ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';

-- Every search drops expired records before ranking (recall.search.filters): few rows expire, so a
-- partial index finds them without reading the tables.
CREATE INDEX decisions_expiry ON decisions (valid_until) WHERE valid_until IS NOT NULL;
CREATE INDEX learnings_expiry ON learnings (valid_until) WHERE valid_until IS NOT NULL;
CREATE INDEX breadcrumbs_expiry ON breadcrumbs (valid_until) WHERE valid_until IS NOT NULL;

CREATE TABLE profiles (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    provenance TEXT NOT NULL CHECK (provenance = 'user_authored'),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    UNIQUE (project, key)
);
"""
