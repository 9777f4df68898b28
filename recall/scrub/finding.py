"""The records detectors exchange with the scan engine, kept apart so neither imports the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["CONTEXT", "GENERIC", "PROSE", "RUN", "SHAPE", "VENDOR", "Finding", "Handler", "Trigger"]

# Ranks: when two findings start at the same place the lower rank names the kind, so
# "password=ghp_..." is a github-token, "password=dckr_pat_..." a vendor-token (a shape with no
# vendor rule) and "--password=x" a secret-flag, not an assignment; a value stated in prose
# ("the password is ...") or a bare generated string only when nothing else claims it.
VENDOR, SHAPE, CONTEXT, GENERIC, PROSE, RUN = 0, 1, 2, 3, 4, 5


class Finding(NamedTuple):
    """A span of the (invisible-stripped) text to replace with ``[REDACTED:<kind>]``."""

    start: int
    end: int
    kind: str
    rank: int


# Called with (text, lowered text, position of the trigger literal, the literal, output list).
Handler = Callable[[str, str, int, str, list[Finding]], None]


@dataclass(frozen=True, slots=True)
class Trigger:
    """A lowercase literal that marks a possible secret, and the handler that judges it.

    The handler gets the literal's position; vendor rules start there, context rules (a name
    containing "password") look around it.

    ``tail`` is a regex the lowercased text must match right after the literal. It is checked
    inside the scan (in C), so common words like "token" only reach Python when they are
    followed by something like ``= value``.
    """

    literal: str
    handler: Handler
    tail: str = ""
