"""Sessions whose parent has not arrived yet, indexed: every import transaction links them (adr/0035).

``_link_parents`` (recall.store.transcripts) runs in the last transaction of every source file and
looked at every session to find the few that name a parent not linked yet: a scan per file, so an
import of n sessions read n² rows (10,000 sessions: 10⁸). A partial index holds only those
sessions, so the same statement visits them alone.
"""

SQL = """
CREATE INDEX sessions_waiting_for_parent ON sessions (host, parent_external_id)
WHERE parent_id IS NULL AND parent_external_id IS NOT NULL;
"""
