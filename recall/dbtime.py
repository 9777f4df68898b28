"""The one text format of every stored timestamp.

Apart from ``recall.store.writer`` (which re-exports both names) so that reads, searches and briefs
can compare times without importing the writer and, with it, the scrubber (issue 16: whole
commands within 0.4 s).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_db_time(value: datetime | None) -> str | None:
    """One text format for every timestamp, so SQL comparisons and sorting are plain string ops."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")
