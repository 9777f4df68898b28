"""Entities read out of sessions and records without a language model (adr/0019).

What coding work touches is concrete and can be read from the text itself: the files a tool call
edited or read, the definitions an edit added, the packages a command installed or an edit
imported, the commands a session ran, the errors they failed with, the hosts and URLs mentioned.
This package holds the pure readers (text and tool calls in, ``Mention``s out); the store writes
what they find (``recall.store.entities``) and ``recall.connections`` answers questions about it.
"""

from recall.entities.mention import EntityType, Mention, Relation

__all__ = ["EntityType", "Mention", "Relation"]
