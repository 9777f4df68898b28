"""Sessions, messages, the typed records, session summaries, and one FTS5 index over all of them.

The index is contentless (``content=''``): the text lives once, in its table. Its rowid is
``id * 8 + kind code`` (recall.models.KIND_CODES) and its ``scope`` column holds two tokens, the
kind (``k<kind>``) and the project (``p`` + hex of the name), so kind and project filters run inside
the FTS query itself. Triggers keep the index in step with every insert, update and delete.
"""

_COMMON = """
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    provenance TEXT NOT NULL CHECK (provenance IN ('verbatim', 'user_authored', 'extracted', 'derived'))
"""


def _index_triggers(
    table: str, kind: str, code: int, watched: str, content: str, detail: str, tags: str
) -> str:
    def values(row: str) -> str:
        return (
            f"{row}.id * 8 + {code}, {content.format(r=row)}, {detail.format(r=row)}, "
            f"{tags.format(r=row)}, 'k{kind} p' || hex({row}.project)"
        )

    return f"""
CREATE TRIGGER {table}_index_insert AFTER INSERT ON {table} BEGIN
    INSERT INTO search_index (rowid, content, detail, tags, scope) VALUES ({values("new")});
END;
CREATE TRIGGER {table}_index_delete AFTER DELETE ON {table} BEGIN
    INSERT INTO search_index (search_index, rowid, content, detail, tags, scope)
    VALUES ('delete', {values("old")});
END;
CREATE TRIGGER {table}_index_update AFTER UPDATE OF {watched}, project ON {table} BEGIN
    INSERT INTO search_index (search_index, rowid, content, detail, tags, scope)
    VALUES ('delete', {values("old")});
    INSERT INTO search_index (rowid, content, detail, tags, scope) VALUES ({values("new")});
END;
"""


_RECORD_TEXT = ("content, detail, tags", "{r}.content", "coalesce({r}.detail, '')", "{r}.tags")

SQL = f"""
CREATE TABLE sessions (
    {_COMMON},
    host TEXT NOT NULL,
    external_id TEXT NOT NULL,
    parent_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    parent_external_id TEXT,
    agent_id TEXT,
    title TEXT,
    cwd TEXT,
    git_branch TEXT,
    model TEXT,
    started_at TEXT,
    ended_at TEXT,
    source_path TEXT,
    meta TEXT NOT NULL DEFAULT '{{}}',
    UNIQUE (host, external_id)
);
CREATE INDEX sessions_project ON sessions (project, started_at);

CREATE TABLE messages (
    {_COMMON},
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    external_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    origin TEXT NOT NULL CHECK (origin IN ('human', 'agent', 'tool', 'injected', 'compaction')),
    kind TEXT NOT NULL CHECK (kind IN ('text', 'tool_call', 'tool_result', 'thinking')),
    tool_name TEXT,
    content TEXT NOT NULL,
    timestamp TEXT,
    content_hash TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{{}}',
    UNIQUE (session_id, external_id)
);
CREATE INDEX messages_project ON messages (project);
CREATE INDEX messages_session_order ON messages (session_id, ordinal);

CREATE TABLE decisions (
    {_COMMON},
    content TEXT NOT NULL,
    detail TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'reverted')),
    superseded_by INTEGER REFERENCES decisions(id) ON DELETE SET NULL,
    confidence TEXT NOT NULL DEFAULT 'medium' CHECK (confidence IN ('high', 'medium', 'low')),
    importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL
);
CREATE INDEX decisions_project ON decisions (project, status, created_at);

CREATE TABLE learnings (
    {_COMMON},
    content TEXT NOT NULL,
    detail TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    confidence TEXT NOT NULL DEFAULT 'medium' CHECK (confidence IN ('high', 'medium', 'low')),
    importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL
);
CREATE INDEX learnings_project ON learnings (project, importance, created_at);

CREATE TABLE breadcrumbs (
    {_COMMON},
    content TEXT NOT NULL,
    detail TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    valid_until TEXT,
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL
);
CREATE INDEX breadcrumbs_project ON breadcrumbs (project, created_at);

CREATE TABLE session_summaries (
    {_COMMON},
    session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    importance INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    meta TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX session_summaries_project ON session_summaries (project, created_at);
CREATE UNIQUE INDEX session_summaries_session ON session_summaries (session_id);

CREATE VIRTUAL TABLE search_index USING fts5 (
    content, detail, tags, scope,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);
{_index_triggers("decisions", "decision", 1, *_RECORD_TEXT)}
{_index_triggers("learnings", "learning", 2, *_RECORD_TEXT)}
{_index_triggers("breadcrumbs", "breadcrumb", 3, *_RECORD_TEXT)}
{_index_triggers("session_summaries", "session_summary", 4, "content, title", "{r}.content", "{r}.title", "''")}
{_index_triggers("messages", "message", 5, "content, tool_name", "{r}.content", "coalesce({r}.tool_name, '')", "''")}
"""
