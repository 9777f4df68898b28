"""Inputs and validation for the typed records: decisions, learnings, breadcrumbs.

Inputs are plain dataclasses without a provenance field: the store decides provenance from the
path a write takes (adr/0001). Validation happens here, once, so the CLI and MCP server share it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from recall.errors import InvalidInput
from recall.rowkinds import Confidence, RecordKind

MAX_CONTENT_CHARS = 20_000
_REDACTION = re.compile(r"\[redacted:([a-z0-9_-]+)\]")
MAX_DETAIL_CHARS = 100_000
# The caller's own fields (adr/0026): small enough that no one keeps a document in them.
MAX_EXTRA_BYTES = 4096
# Words that clear an expiry: `--valid-until none` on the command line (MCP passes null).
NO_EXPIRY = frozenset({"none", "never", "null"})


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A decision, learning or breadcrumb to add. There is deliberately no provenance field."""

    kind: RecordKind
    content: str
    project: str
    detail: str | None = None
    tags: tuple[str, ...] = ()
    confidence: str | None = None
    importance: int = 5
    valid_until: datetime | None = None
    source: str | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RecordChanges:
    """A correction in place; ``None`` leaves a field as it is, ``clear_valid_until`` removes the expiry."""

    content: str | None = None
    detail: str | None = None
    tags: tuple[str, ...] | None = None
    importance: int | None = None
    valid_until: datetime | None = None
    confidence: str | None = None
    source: str | None = None
    metadata: Mapping[str, Any] | None = None
    clear_valid_until: bool = False


def parse_kind(value: str, allowed: Iterable[RecordKind] = tuple(RecordKind)) -> RecordKind:
    """Accept ``decision``/``decisions`` and friends; name the valid kinds otherwise."""
    allowed = tuple(allowed)
    text = value.strip().lower().replace("-", "_")
    for kind in allowed:
        if text in (kind.value, kind.value + "s", kind.value.removesuffix("y") + "ies"):
            return kind
    if text == "summary" and RecordKind.SESSION_SUMMARY in allowed:
        return RecordKind.SESSION_SUMMARY
    raise InvalidInput(f"unknown kind {value!r}; use one of: {', '.join(k.value for k in allowed)}")


def normalise_tags(tags: Iterable[str] | str | None) -> list[str]:
    """Lower-case, trim, drop empties and duplicates, keep first-seen order.

    Redaction markers keep their case so they stay recognisable (tags are scrubbed first).
    """
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    seen: dict[str, None] = {}
    for tag in tags:
        for piece in str(tag).split(","):
            cleaned = _REDACTION.sub(r"[REDACTED:\1]", " ".join(piece.strip().lower().split()))
            if cleaned:
                seen.setdefault(cleaned, None)
    return list(seen)


def check_importance(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10:
        raise InvalidInput(f"importance must be a whole number from 1 to 10, got {value!r}")
    return value


def check_confidence(value: str | None) -> str:
    if value is None:
        return Confidence.MEDIUM.value
    text = str(value).strip().lower()
    try:
        return Confidence(text).value
    except ValueError:
        raise InvalidInput(f"confidence must be high, medium or low, got {value!r}") from None


def check_content(value: str, field: str = "content", limit: int = MAX_CONTENT_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{field} is {len(value):,} characters; the limit is {limit:,}")
    return value.strip()


def clears_expiry(value: str | datetime | None) -> bool:
    """Whether ``value`` asks to remove an expiry (``none``, ``never``, ``null``) rather than set one."""
    return isinstance(value, str) and value.strip().lower() in NO_EXPIRY


def parse_when(value: str | datetime | None) -> datetime | None:
    """Accept ISO dates/times and relative spans (``30m``, ``2h``, ``7d``, ``2w``) for expiry."""
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)
    text = value.strip()
    if not text or text.lower() in NO_EXPIRY:
        return None
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text[-1:].lower() in units and text[:-1].isdigit():
        return datetime.now(UTC) + timedelta(**{units[text[-1].lower()]: int(text[:-1])})
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"cannot read the time {value!r}; use an ISO date like 2026-12-31, "
            "a date and time like 2026-12-31T18:00, or a span like 2h, 3d, 1w"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def since_time(value: str | None) -> datetime | None:
    """A lower time bound: an ISO date, or a span back from now (``7d`` = seven days ago)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text[-1:].lower() in units and text[:-1].isdigit():
        return datetime.now(UTC) - timedelta(**{units[text[-1].lower()]: int(text[:-1])})
    return parse_when(text)


def record_values(new: NewRecord) -> dict[str, Any]:
    """The column values for a new record, validated."""
    values: dict[str, Any] = {
        "project": check_content(new.project, "project", 500),
        "content": check_content(new.content),
        "detail": check_content(new.detail, "detail", MAX_DETAIL_CHARS) if new.detail else None,
        "tags": list(new.tags),  # normalised by the writer, after scrubbing
        "importance": check_importance(new.importance),
    }
    if new.kind in (RecordKind.DECISION, RecordKind.LEARNING):
        values["confidence"] = check_confidence(new.confidence)
    elif new.confidence is not None:
        raise InvalidInput("confidence applies to decisions and learnings only")
    values["valid_until"] = parse_when(new.valid_until)
    if new.source is not None:
        values["source"] = check_source(new.source)
    if new.metadata is not None:
        values["meta"] = check_metadata(new.metadata)
    return values


def check_source(value: str) -> str | None:
    """Where the caller says a record came from: free text, at most ``MAX_EXTRA_BYTES``; empty clears it."""
    if not isinstance(value, str):
        raise InvalidInput(f"source must be text, got {type(value).__name__}")
    text = value.strip()
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_EXTRA_BYTES:
        raise InvalidInput(f"source is over {MAX_EXTRA_BYTES:,} bytes; keep a link or a name, not a document")
    return text or None


def check_metadata(value: Mapping[str, Any] | str) -> dict[str, Any]:
    """A small JSON object the caller keeps with a record (at most ``MAX_EXTRA_BYTES`` as JSON)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InvalidInput(
                f'metadata is not valid JSON ({exc}); give an object such as {{"ticket": "ENG-12"}}'
            ) from None
    if not isinstance(value, Mapping):
        raise InvalidInput(
            f'metadata must be a JSON object such as {{"ticket": "ENG-12"}}, got {type(value).__name__}'
        )
    try:
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must hold only JSON values: {exc}") from None
    if len(encoded.encode("utf-8", errors="surrogatepass")) > MAX_EXTRA_BYTES:
        raise InvalidInput(f"metadata is over {MAX_EXTRA_BYTES:,} bytes as JSON; keep a few short fields")
    result: dict[str, Any] = json.loads(encoded)
    return result


def change_values(kind: RecordKind, changes: RecordChanges) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if changes.content is not None:
        values["content"] = check_content(changes.content)
    if changes.detail is not None:
        values["detail"] = (
            check_content(changes.detail, "detail", MAX_DETAIL_CHARS) if changes.detail else None
        )
    if changes.tags is not None:
        values["tags"] = list(changes.tags)
    if changes.importance is not None:
        values["importance"] = check_importance(changes.importance)
    if changes.confidence is not None:
        if kind not in (RecordKind.DECISION, RecordKind.LEARNING):
            raise InvalidInput("confidence applies to decisions and learnings only")
        values["confidence"] = check_confidence(changes.confidence)
    if changes.clear_valid_until:
        values["valid_until"] = None
    elif changes.valid_until is not None:
        values["valid_until"] = parse_when(changes.valid_until)
    if changes.source is not None:
        values["source"] = check_source(changes.source)
    if changes.metadata is not None:
        values["meta"] = check_metadata(changes.metadata)
    if not values:
        raise InvalidInput(
            "nothing to change: give at least one of content, detail, tags, importance, valid_until, "
            "source, metadata"
        )
    return values
