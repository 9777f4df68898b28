"""recall: local-first memory for AI coding agents.

The library API is ``recall.Memory`` (recall.memory); everything it returns is in recall.results,
and rows are named ``kind#id`` (recall.kinds). Importing this package stays light on purpose (no
SQLAlchemy, numpy, onnxruntime or mcp): `recall --help` and agent hooks must start fast. Heavy
modules load when first used.
"""

from recall.errors import (
    ConflictingSource,
    InvalidInput,
    InvalidTransition,
    ModelUnavailable,
    NotFound,
    RecallError,
    StoreUnavailable,
)
from recall.kinds import Kind, Ref
from recall.memory import Memory
from recall.results import Page, Record, SearchResults, Stats

__version__ = "0.1.0"

__all__ = [
    "ConflictingSource",
    "InvalidInput",
    "InvalidTransition",
    "Kind",
    "Memory",
    "ModelUnavailable",
    "NotFound",
    "Page",
    "RecallError",
    "Record",
    "Ref",
    "SearchResults",
    "Stats",
    "StoreUnavailable",
    "__version__",
]
