"""Rebuild the one FTS5 index with the Porter stemmer in front of unicode61 (adr/0010).

``painting``, ``painted`` and ``paints`` are then one term, in the index and in every query, so
keyword mode finds what a question words in another form. The table keeps its name, columns,
rowid (``id * 8 + kind code``) and ``scope`` tokens: the triggers of m0001 name ``search_index``
only when they fire, so they keep feeding the new table. Every row of every indexed table is
written again here, with exactly the values those triggers write (a contentless table needs the
same values again to delete a row).

Scope tokens go through the stemmer too; that is safe: kind tokens stay distinct, and the only
Porter rule that can touch a project token (``p`` + lower-case hex, letters a-f) removes a final
``e``, which needs an odd number of hex digits to collide with another project (adr/0010).
"""

_TABLES = (
    # table, kind, code, content, detail, tags: the values of m0001's triggers
    ("decisions", "decision", 1, "content", "coalesce(detail, '')", "tags"),
    ("learnings", "learning", 2, "content", "coalesce(detail, '')", "tags"),
    ("breadcrumbs", "breadcrumb", 3, "content", "coalesce(detail, '')", "tags"),
    ("session_summaries", "session_summary", 4, "content", "title", "''"),
    ("messages", "message", 5, "content", "coalesce(tool_name, '')", "''"),
)

_REFILL = "\n".join(
    f"INSERT INTO search_index (rowid, content, detail, tags, scope) "
    f"SELECT id * 8 + {code}, {content}, {detail}, {tags}, 'k{kind} p' || hex(project) FROM {table};"
    for table, kind, code, content, detail, tags in _TABLES
)

SQL = f"""
DROP TABLE search_index;
CREATE VIRTUAL TABLE search_index USING fts5 (
    content, detail, tags, scope,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
{_REFILL}
"""
