"""The exception tree every edge translates.

    RecallError                 anything recall reports to a user or agent
    ├── InvalidInput            a value the caller can fix (bad kind, bad importance, empty content)
    ├── NotFound                no row with that kind and id
    ├── InvalidTransition       a decision status change the lifecycle forbids
    ├── StoreUnavailable        the database cannot be opened, is locked too long, or is too new
    ├── ConflictingSource       a dump whose session is already held under another host
    └── ModelUnavailable        the embedding model is missing or fails its checks

The core raises these; the CLI turns them into one line and exit 1, the MCP server into tool errors.
"""

from __future__ import annotations


class RecallError(Exception):
    """Base of every error recall reports; its message is written for the person or agent reading it."""


class InvalidInput(RecallError):
    pass


class NotFound(RecallError):
    pass


class InvalidTransition(RecallError):
    pass


class StoreUnavailable(RecallError):
    pass


class ConflictingSource(RecallError):
    pass


class ModelUnavailable(RecallError):
    pass
