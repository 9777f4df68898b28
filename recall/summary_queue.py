"""The queue of sessions whose summary must be written (``summaries_due``, m0006) and what drains it.

The transaction that gives a top-level session new or changed messages queues it; writing the
summary takes it off in the same transaction as the summary. So an import or dump killed in
between leaves the session queued, the next import writes its summary (adr/0016), and
`recall doctor` can say whether anything is left to do by counting the queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall.store import Store
    from recall.summary import DraftAhead, SummaryDraft


def summaries_due(store: Store) -> int:
    """How many sessions wait for their summary to be written or refreshed."""
    with store.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM summaries_due").fetchone()[0])


SUMMARIES_PER_TRANSACTION = 20  # an import queues one per session: 400 sessions took 400 transactions


def write_due_summaries(store: Store, ahead: Mapping[int, DraftAhead] | None = None) -> int:
    """Write the summary of every queued session; returns how many were written.

    This is also what finishes the summaries of an import or dump that was killed before it wrote
    them. Summaries are built before the write lock is taken and written ``SUMMARIES_PER_TRANSACTION``
    to a transaction: a transaction costs a commit, which an import of many small sessions paid once
    per session (adr/0035). Twenty summaries hold the lock for a few milliseconds. ``ahead`` holds
    summaries the read-ahead worker drafted for sessions an import created, with the queue
    generation the import left: one still queued at that generation and under the same title has
    not changed since, and its draft is the one a read of the store would make (adr/0045).
    """
    with store.reading() as conn:
        due = [row[0] for row in conn.execute("SELECT session_id FROM summaries_due ORDER BY session_id")]
    written = 0
    for start in range(0, len(due), SUMMARIES_PER_TRANSACTION):
        drafts = [
            _draft(store, session_id, made=(ahead or {}).get(session_id))
            for session_id in due[start : start + SUMMARIES_PER_TRANSACTION]
        ]
        with store.transaction() as writer:
            for session_id, generation, draft in filter(None, drafts):
                if draft is None:
                    if generation is not None:
                        writer.summary_done(session_id, generation)
                elif store.write_summary_in(writer, session_id, draft, due_generation=generation) is not None:
                    written += 1
    return written


def _draft(
    store: Store, session_id: int, title: str | None = None, made: DraftAhead | None = None
) -> tuple[int, int | None, SummaryDraft | None] | None:
    """(session, its queue generation, its summary: None when it has no messages); None when the
    session is gone. ``made`` is a draft made ahead at a generation (see ``write_due_summaries``)."""
    from recall.summary import build_summary

    with store.reading() as conn:
        row = conn.execute(
            "SELECT s.title, d.generation FROM sessions s "
            "LEFT JOIN summaries_due d ON d.session_id = s.id WHERE s.id = ?",
            (session_id,),
        ).fetchone()
    if row is None:
        return None
    if (
        made is not None
        and title is None
        and (made.generation, made.title) == (row["generation"], row["title"])
    ):
        return session_id, row["generation"], made.draft
    messages = store.session_messages(session_id)
    draft = build_summary(title or row["title"], messages) if messages else None
    return session_id, row["generation"], draft


def summarise_session(store: Store, session_id: int, *, title: str | None = None) -> int | None:
    """Write or refresh a session's derived summary (no language model) and take the session off
    the queue; the summary id, or None when the session has no messages.

    The summary is built before the write lock is taken; a session queued again meanwhile (it got
    new messages) stays queued. The queue holds only top-level sessions: subagents, forks and
    resumes are not summarised on their own.
    """
    found = _draft(store, session_id, title)
    if found is None:
        return None
    _, generation, draft = found
    if draft is None:
        if generation is not None:
            with store.transaction() as writer:
                writer.summary_done(session_id, generation)
        return None
    return store.write_summary(session_id, draft, due_generation=generation)
