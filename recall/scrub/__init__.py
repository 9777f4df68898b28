"""The one scrubber every write goes through (see adr/0002).

``scrub(text)`` strips invisible and bidirectional format characters and terminal escapes, then
replaces secrets with ``[REDACTED:<kind>]``. It is pure, idempotent and fast enough to run on every
imported message. PLACEHOLDER: the full rule set lands with the scrubber work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Scrubbed", "scrub", "scrub_value"]


@dataclass(frozen=True, slots=True)
class Scrubbed:
    text: str
    kinds: tuple[str, ...]  # one entry per redaction, in order of appearance

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


_INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\x1b\\[[0-9;?]*[A-Za-z]"
)
_AWS = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")


def scrub(text: str) -> Scrubbed:
    cleaned = _INVISIBLE.sub("", text)
    kinds: list[str] = []

    def _sub(match: re.Match[str]) -> str:
        kinds.append("aws-access-key-id")
        return "[REDACTED:aws-access-key-id]"

    cleaned = _AWS.sub(_sub, cleaned)
    return Scrubbed(cleaned, tuple(kinds))


def scrub_value(value: Any) -> tuple[Any, tuple[str, ...]]:
    """Scrub every string inside a JSON-like value (dict keys kept), returning the kinds found."""
    if isinstance(value, str):
        result = scrub(value)
        return result.text, result.kinds
    if isinstance(value, dict):
        kinds: list[str] = []
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], found = scrub_value(item)
            kinds.extend(found)
        return out, tuple(kinds)
    if isinstance(value, list | tuple):
        kinds = []
        items = []
        for item in value:
            cleaned, found = scrub_value(item)
            items.append(cleaned)
            kinds.extend(found)
        return items, tuple(kinds)
    return value, ()
