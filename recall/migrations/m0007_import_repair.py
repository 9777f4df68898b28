"""What finishing a killed import, dump or embed needs to find cheaply (adr/0016).

``summaries_due`` is the queue of sessions whose summary must be written or refreshed. A session
joins it in the same transaction that gives it new or changed messages, and leaves it in the
transaction that writes its summary, so a process killed between the two leaves the session queued
and the next import writes the summary. ``generation`` grows each time the session is queued
again, so a summary built from older messages does not take a newer entry off the queue. Databases
from before this step may hold top-level sessions that lost their summary to such a crash; they
are queued here.

``messages_embeddable`` indexes the messages that get a vector (recall.search.semantic: text
written by a person, an agent or a compaction; its WHERE must stay the query's). Counting them is
then an index scan, so an import can tell whether vectors are pending, e.g. after a killed
`recall embed`, without reading every message.
"""

SQL = """
CREATE TABLE summaries_due (
    session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL DEFAULT 1
);
INSERT INTO summaries_due (session_id)
SELECT s.id FROM sessions s
WHERE s.parent_external_id IS NULL
  AND NOT EXISTS (SELECT 1 FROM session_summaries ss WHERE ss.session_id = s.id)
  AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id);
CREATE INDEX messages_embeddable ON messages (id)
WHERE kind = 'text' AND origin IN ('human', 'agent', 'compaction');
"""
