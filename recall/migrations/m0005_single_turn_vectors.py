"""Message vectors become single-turn vectors (adr/0011).

Until this step a message was embedded together with the two turns before it; now each message is
embedded alone and the in-memory index mixes it with its neighbours' vectors at load time. A vector
of the old windowed text would be mixed with its neighbours a second time, so message vectors are
dropped here and embedded again as single turns (the next import's budget, or ``recall embed``).
Vectors of decisions, learnings, breadcrumbs and summaries are unchanged.
"""

SQL = """
DELETE FROM embeddings WHERE kind_code = 5;
"""
