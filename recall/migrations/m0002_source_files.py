"""Source files already imported, so an unchanged file is skipped by size and modification time."""

SQL = """
CREATE TABLE source_files (
    host TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    imported_at TEXT NOT NULL,
    sessions INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (host, path)
);
"""
