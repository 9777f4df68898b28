"""Extraction: lineage of extracted records, their source messages, review, rejections, progress.

* ``extraction_lineage``: one row per extracted decision, learning or breadcrumb (``kind_code`` as in
  recall.models.KIND_CODES): the rule and its version that produced it, a 0-1 confidence, the content
  fingerprint, the session it came from, whether a person accepted it, and the decisions it conflicts
  with (a JSON list of ids).
* ``record_sources``: the messages a record came from. Any record may have sources (a near-duplicate
  of a user's own record gains them), so this is separate from the lineage.
* ``extraction_rejections``: fingerprints a person rejected, per project and kind, never created again.
* ``extraction_progress``: per session, the last message ordinal extraction has read.
* ``plan_closures``: plan items a session completed or dropped, so a breadcrumb for that item from an
  earlier session expires whatever order the sessions are imported in.

Deleting a record deletes its lineage and sources (triggers); deleting a message deletes it as a
source (foreign key).
"""


def _cleanup(table: str, code: int) -> str:
    return f"""
CREATE TRIGGER {table}_lineage_delete AFTER DELETE ON {table} BEGIN
    DELETE FROM extraction_lineage WHERE kind_code = {code} AND record_id = old.id;
    DELETE FROM record_sources WHERE kind_code = {code} AND record_id = old.id;
END;
"""


SQL = f"""
CREATE TABLE extraction_lineage (
    kind_code INTEGER NOT NULL CHECK (kind_code IN (1, 2, 3)),
    record_id INTEGER NOT NULL,
    rule TEXT NOT NULL,
    rule_version INTEGER NOT NULL,
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    fingerprint TEXT NOT NULL,
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    review TEXT NOT NULL DEFAULT 'pending' CHECK (review IN ('pending', 'accepted')),
    conflicts_with TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (kind_code, record_id)
);
CREATE INDEX extraction_lineage_fingerprint ON extraction_lineage (fingerprint);
CREATE INDEX extraction_lineage_session ON extraction_lineage (session_id);

CREATE TABLE record_sources (
    kind_code INTEGER NOT NULL CHECK (kind_code IN (1, 2, 3)),
    record_id INTEGER NOT NULL,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (kind_code, record_id, message_id)
) WITHOUT ROWID;
CREATE INDEX record_sources_message ON record_sources (message_id);

CREATE TABLE extraction_rejections (
    project TEXT NOT NULL,
    kind_code INTEGER NOT NULL CHECK (kind_code IN (1, 2, 3)),
    fingerprint TEXT NOT NULL,
    rejected_at TEXT NOT NULL,
    PRIMARY KEY (project, kind_code, fingerprint)
) WITHOUT ROWID;

CREATE TABLE extraction_progress (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    last_ordinal INTEGER NOT NULL,
    extracted_at TEXT NOT NULL
);

CREATE TABLE plan_closures (
    project TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    closed_at TEXT NOT NULL,
    session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    PRIMARY KEY (project, fingerprint)
) WITHOUT ROWID;
{_cleanup("decisions", 1)}
{_cleanup("learnings", 2)}
{_cleanup("breadcrumbs", 3)}
"""
