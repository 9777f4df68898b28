"""Find every trigger in one pass per scanned character, then hand each hit to its rule.

CPython's ``re`` finds a literal first character with a tight C loop (~0.5 ns/char) but tests an
alternation or character set at every position (4-15 ns/char), and Python-level work per hit
costs far more than either. So all triggers (vendor prefixes like ``ghp_`` and context words like
``password``) are grouped by one of their characters into ``c(?=rest1 tail1 | rest2 tail2 | ...)``:
one cheap scan per character, each branch opening with its own literal so a mismatch costs one
comparison, and tails rejecting most hits before Python sees them.

Each scan costs a pass over the text plus a call into the regex engine (~14 ns) at every
occurrence of its character, whatever its branches, so the number of scans is what the cost
follows. A trigger is therefore found through the rarest character it holds among those in
:data:`SCANNED`, not necessarily its first (``xai-`` through ``a``, ``machine`` through ``h``),
and checked back with a look-behind. Sixteen scans cover the ~170 triggers; a scan per first
character took twenty, and a regex per rule would take ~70 (figures in adr/0002).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from recall.scrub.finding import VENDOR, Finding, Handler, Trigger

__all__ = ["SCANNED", "Scanner"]

# The characters scanned for, rarest first in the bundled transcripts (fixtures/transcripts).
# Each is here because some trigger holds no rarer one: "q~" (Azure), "eyj" (JWTs), "$2a$"
# (bcrypt), base64 middles such as "x0tfw" and "9lrv" ("v" and "0"), the stems "pass", "cret",
# "session" and "auth", the separators of vendor shapes, ...
# A trigger holding none of them is found through its first character, at the cost of a scan.
SCANNED = "$qvky.h-g0_:pcan"


class _Lazy:
    """A pattern compiled on its first use. A short command's process (``recall add``) scrubs a
    line or two, which tries a few of the ~170 trigger tails and needs only the scans of the
    characters its text holds; compiling everything up front was two thirds of building the
    scanner. From the first call on, ``match`` and ``search`` are the compiled pattern's own
    methods: the same regex decides, with no extra Python call per hit."""

    __slots__ = ("match", "search", "source")

    match: Callable[..., re.Match[str] | None]
    search: Callable[..., re.Match[str] | None]

    def __init__(self, source: str) -> None:
        self.source = source
        self.match = self._first_match
        self.search = self._first_search

    def _compile(self) -> re.Pattern[str]:
        pattern = re.compile(self.source)
        self.match, self.search = pattern.match, pattern.search
        return pattern

    def _first_match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self._compile().match(text, pos)

    def _first_search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self._compile().search(text, pos)


# A handler to call on a hit: where the hit is in its literal, the literal, the handler, and the
# tail its own trigger needs there (None: the hit was its own).
_Entry = tuple[int, str, Handler, _Lazy | None]


def _anchor(literal: str, scanned: str) -> int:
    """Where in ``literal`` its scan finds it: at its rarest scanned character, and at its last
    character only when no other is scanned (branches that share the character after the anchor
    share one comparison; branches anchored on their last character each cost a look-behind)."""
    best = (2 * len(scanned), 0)
    for index, char in enumerate(literal):
        rank = scanned.find(char)
        if rank >= 0:
            best = min(best, (rank + (len(scanned) if 0 < index == len(literal) - 1 else 0), index))
    return best[1]


class Scanner:
    """Compiled triggers; :meth:`find` returns every finding for a text and its lowercase twin."""

    def __init__(self, triggers: Iterable[Trigger], scanned: str = SCANNED) -> None:
        ordered = sorted(enumerate(triggers), key=lambda item: -len(item[1].literal))
        self.literals = tuple(trigger.literal for _, trigger in ordered)
        tails = {index: _Lazy(f"(?:{trigger.tail})") for index, trigger in ordered}
        anchors = {index: _anchor(trigger.literal, scanned) for index, trigger in ordered}
        families: dict[str, dict[str, list[str]]] = {}
        tables: dict[str, dict[str, tuple[_Entry, ...]]] = {}
        for index, trigger in ordered:
            literal, at = trigger.literal, anchors[index]
            char, following = literal[at], literal[at + 1 : at + 2]
            behind = f"(?<={re.escape(literal)})" if at else ""
            branch = f"{re.escape(literal[at + 2 :])}{behind}(?:{trigger.tail})(?P<t{index}>)"
            families.setdefault(char, {}).setdefault(following, []).append(branch)
            # A hit on a literal is also a hit on any trigger whose literal lies inside it around
            # the same character ("secret_" holds "cret", two rules share "key"); their tails are
            # checked first.
            tables.setdefault(char, {})[f"t{index}"] = tuple(
                (
                    anchors[other_index],
                    other.literal,
                    other.handler,
                    None if other_index == index else tails[other_index],
                )
                for other_index, other in ordered
                if at >= anchors[other_index] and literal.startswith(other.literal, at - anchors[other_index])
            )
        self._groups: list[tuple[str, _Lazy, dict[str, tuple[_Entry, ...]]]] = []
        for char, by_following in families.items():
            # Factoring by the character after the anchor makes a mismatch cost one comparison
            # per family rather than one per trigger; branches anchored on their last character
            # come last.
            alternatives = [
                f"{re.escape(following)}(?:{'|'.join(branches)})"
                for following, branches in sorted(by_following.items(), key=lambda item: item[0] == "")
            ]
            pattern = _Lazy(f"{re.escape(char)}(?=(?:{'|'.join(alternatives)}))")
            self._groups.append((char, pattern, tables[char]))

    @property
    def characters(self) -> str:
        """The characters scanned for, one scan each."""
        return "".join(char for char, _, _ in self._groups)

    def find(self, text: str, lowered: str) -> list[Finding]:
        found: list[Finding] = []
        for char, pattern, table in self._groups:
            if char not in lowered:  # memchr: skips scans for characters the text lacks
                continue
            match = pattern.search(lowered)
            while match is not None:
                position = match.start()
                count = len(found)
                for at, literal, handler, tail in table[match.lastgroup]:  # type: ignore[index]
                    start = position - at
                    if tail is None or tail.match(lowered, start + len(literal)):
                        handler(text, lowered, start, literal, found)
                # Hits inside a vendor token just found are parts of it ("sk-" repeated inside a
                # key); resuming after it keeps pathological texts linear. Hits inside a generic
                # value are still tried: "api_key=sk-..." must be reported as the vendor kind.
                resume = max([position + 1] + [f.end for f in found[count:] if f.rank == VENDOR])
                match = pattern.search(lowered, resume)
        return found
