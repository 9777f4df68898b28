"""Messages written in bulk are put in the keyword index by one statement, not one per row (adr/0046).

The row trigger of m0001 costs an import about half of what writing a message costs: each firing
runs the FTS5 insert as its own nested statement. While ``message_index_deferred`` holds a row, the
trigger leaves new messages to the writer, which indexes everything it inserted with one
``INSERT ... SELECT`` of exactly the trigger's values (a contentless index must be given the same
values again to delete a row) and empties the table before its transaction ends. The table is
empty at every commit, so any other writer (a migration, a sync, the sqlite3 shell) is indexed by
the trigger as before; a rolled-back transaction takes its row with it.
"""

SQL = """
CREATE TABLE message_index_deferred (by_writer INTEGER NOT NULL);
DROP TRIGGER messages_index_insert;
CREATE TRIGGER messages_index_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM message_index_deferred) BEGIN
    INSERT INTO search_index (rowid, content, detail, tags, scope) VALUES (new.id * 8 + 5, new.content, coalesce(new.tool_name, ''), '', 'kmessage p' || hex(new.project));
END;
"""
