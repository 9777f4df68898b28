"""One vocabulary for what recall stores, and one way to name a stored row: ``kind#id``.

Every edge (CLI, MCP, hooks, web view) reads kinds and ids through this module, so ``learning#1``
printed by a search is accepted by ``recall show``, ``recall forget`` and every MCP tool alike. The
names the Recall tool shape uses are aliases: ``decisions``, ``learnings``, ``breadcrumbs``,
``messages``, ``sessions`` and ``loa`` (its name for session summaries).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Self

from recall.errors import InvalidInput

if TYPE_CHECKING:
    from recall.rowkinds import RecordKind


class Kind(StrEnum):
    """Every kind of row a person or agent can name: the searchable record kinds plus sessions."""

    DECISION = "decision"
    LEARNING = "learning"
    BREADCRUMB = "breadcrumb"
    SESSION_SUMMARY = "session_summary"
    MESSAGE = "message"
    SESSION = "session"
    NOTE = "note"

    @property
    def record(self) -> RecordKind | None:
        """The searchable record kind, or None for sessions (they are found through their messages)."""
        from recall.rowkinds import RecordKind  # SQLModel loads only when a row is about to be read

        return None if self is Kind.SESSION else RecordKind(self.value)


TYPED: tuple[Kind, ...] = (Kind.DECISION, Kind.LEARNING, Kind.BREADCRUMB)  # written by people and agents
SEARCHABLE: tuple[Kind, ...] = (*TYPED, Kind.SESSION_SUMMARY, Kind.MESSAGE, Kind.NOTE)
READABLE: tuple[Kind, ...] = (*SEARCHABLE, Kind.SESSION)

_ALIASES: dict[str, Kind] = {
    **{kind.value: kind for kind in Kind},
    **{kind.value + "s": kind for kind in Kind},
    "breadcrumbs": Kind.BREADCRUMB,
    "summary": Kind.SESSION_SUMMARY,
    "summaries": Kind.SESSION_SUMMARY,
    "session_summaries": Kind.SESSION_SUMMARY,
    "loa": Kind.SESSION_SUMMARY,
}
_REF = re.compile(r"^\s*([A-Za-z_-]+)\s*#\s*(\d+)\s*$")


def parse_kind(value: str | Kind, allowed: Iterable[Kind] = READABLE) -> Kind:
    """Accept a kind by its name or an alias, in any case; name the accepted kinds otherwise."""
    choices = tuple(allowed)
    kind = value if isinstance(value, Kind) else _ALIASES.get(str(value).strip().lower().replace("-", "_"))
    if kind is None or kind not in choices:
        raise InvalidInput(f"unknown kind {value!r}; use one of: {', '.join(k.value for k in choices)}")
    return kind


def kind_names(kinds: Iterable[Kind]) -> str:
    return ", ".join(kind.value for kind in kinds)


@dataclass(frozen=True, slots=True)
class Ref:
    """A stored row's name, printed as ``kind#id`` everywhere."""

    kind: Kind
    id: int

    def __str__(self) -> str:
        return f"{self.kind.value}#{self.id}"

    @classmethod
    def parse(
        cls, value: str | int, kind: str | Kind | None = None, allowed: Iterable[Kind] = READABLE
    ) -> Self:
        """Read ``kind#id``, or a bare id when ``kind`` is given; a ref's own kind must agree with ``kind``."""
        choices = tuple(allowed)
        text = str(value).strip()
        match = _REF.match(text)
        if match is not None:
            named = parse_kind(match.group(1), choices)
            if kind is not None and parse_kind(kind, choices) is not named:
                raise InvalidInput(f"{text} is a {named.value}, not a {parse_kind(kind, choices).value}")
            return cls(named, int(match.group(2)))
        if kind is None:
            if text.isdigit():
                raise InvalidInput(
                    f"id {text} needs its kind: give the kind too, or write it as kind#id (decision#{text})"
                )
            raise InvalidInput(f"cannot read {text!r} as a row's name; write it as kind#id, e.g. decision#3")
        if not text.isdigit():
            raise InvalidInput(f"an id is a whole number or kind#id (e.g. decision#3), got {text!r}")
        return cls(parse_kind(kind, choices), int(text))
