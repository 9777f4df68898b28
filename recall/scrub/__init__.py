"""The one scrubber every write goes through (see adr/0002).

``scrub(text)`` strips invisible and bidirectional format characters and terminal escapes, then
replaces secrets with ``[REDACTED:<kind>]``. It is pure, idempotent and fast enough to run on every
imported message: one scan per scanned character finds every layer's triggers together and only
hits reach Python (:mod:`.scan`). The layers, from most to least specific:

- vendor rules, one per known token format (:mod:`.tokens`);
- vendor-style shapes, for vendors with no rule (:mod:`.prefixed`);
- secret-bearing places: assignments and key/value pairs (:mod:`.context`), headers and cookies
  (:mod:`.headers`), URLs (:mod:`.urls`), command lines and credential files (:mod:`.flags`);
- secrets stated in sentences (:mod:`.prose`) and base64 blobs hiding any of the above
  (:mod:`.encoded`);
- long generated strings standing alone (:mod:`.generated`), the one layer with a pass of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from recall.scrub.invisible import strip_invisible
from recall.scrub.scan import Scanner
from recall.scrub.shape import is_uuid

if TYPE_CHECKING:
    from recall.scrub.finding import Finding

__all__ = ["KINDS", "Scrubbed", "make_scrubber", "scrub", "scrub_short", "scrub_value"]

# The layers are imported when the first scanner is built, not with this package: a command that
# only reads (a keyword search strips invisible characters from its query) does not pay for their
# compiled patterns, a fifth of `recall search`'s instructions (adr/0035).
_generated_runs: Callable[[str], list[Finding]] | None = None


def __getattr__(name: str) -> frozenset[str]:
    if name == "KINDS":
        return _kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _kinds() -> frozenset[str]:
    """Every kind a redaction may name (``KINDS``)."""
    from recall.scrub.context import CONTEXT_KINDS
    from recall.scrub.encoded import ENCODED_KINDS
    from recall.scrub.flags import FLAG_KINDS
    from recall.scrub.generated import GENERATED_KINDS
    from recall.scrub.headers import HEADER_KINDS
    from recall.scrub.prefixed import PREFIXED_KINDS
    from recall.scrub.prose import PROSE_KINDS
    from recall.scrub.tokens import TOKEN_KINDS
    from recall.scrub.urls import URL_KINDS

    return (
        TOKEN_KINDS | PREFIXED_KINDS | CONTEXT_KINDS | HEADER_KINDS | URL_KINDS | FLAG_KINDS | PROSE_KINDS
    ) | (ENCODED_KINDS | GENERATED_KINDS)


def _build_scanner(without: frozenset[str]) -> Scanner:
    """Every layer's triggers in one scanner; blobs are judged by the scanner they belong to."""
    global _generated_runs
    from recall.scrub.context import CONTEXT_TRIGGERS
    from recall.scrub.encoded import encoded_triggers
    from recall.scrub.flags import FLAG_TRIGGERS
    from recall.scrub.generated import generated_runs
    from recall.scrub.headers import HEADER_TRIGGERS
    from recall.scrub.prefixed import PREFIXED_TRIGGERS
    from recall.scrub.prose import PROSE_TRIGGERS
    from recall.scrub.tokens import token_triggers
    from recall.scrub.urls import URL_TRIGGERS

    _generated_runs = generated_runs

    def holds_secret(decoded: str) -> bool:
        cleaned = strip_invisible(decoded)
        return bool(scanner.find(cleaned, _lowercase(cleaned)))

    scanner = Scanner(
        token_triggers(without)
        + PREFIXED_TRIGGERS
        + CONTEXT_TRIGGERS
        + HEADER_TRIGGERS
        + URL_TRIGGERS
        + FLAG_TRIGGERS
        + PROSE_TRIGGERS
        + encoded_triggers(holds_secret)
    )
    return scanner


@cache
def _scanner() -> Scanner:
    """Built on first use: compiling the scans is most of this package's import cost."""
    return _build_scanner(frozenset())


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """The cleaned text and what was redacted; invisible characters removed are not reported."""

    text: str
    kinds: tuple[str, ...]  # one entry per redaction, in order of appearance

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def _lowercase(text: str) -> str:
    """``text`` with its ASCII letters in lowercase and every index unchanged, so spans found in it
    apply to ``text``.

    Every trigger and tail is ASCII, and the classes they use (``\\w``, ``\\s``, ``\\d``) never
    tell a letter's two cases apart, so other letters may keep their case: only the two code points
    whose lowercase is ASCII are mapped (U+0130, whose lowercase is two characters, and U+212A).
    Lowering the UTF-8 bytes touches ASCII letters alone, and on text with other letters (a quarter
    of messages) costs a third of ``str.lower``, which maps every character through Unicode tables.
    """
    if text.isascii():
        return text.lower()
    if "\u0130" in text or "\u212a" in text:
        text = text.replace("\u0130", "i").replace("\u212a", "k")
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _redactions(scanner: Scanner, text: str) -> list[list[Any]]:
    """Non-overlapping ``[start, end, kind]`` spans, earliest first.

    At one start the lowest rank names the kind (see :mod:`.finding`). Overlaps are merged rather
    than dropped so no part of either match survives, which keeps scrub idempotent.
    """
    assert _generated_runs is not None  # set with the scanner
    found = scanner.find(text, _lowercase(text)) + _generated_runs(text)
    merged: list[list[Any]] = []
    for start, end, kind, _ in sorted(found, key=lambda f: (f.start, f.rank)):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    return merged


def scrub(text: str) -> Scrubbed:
    """Return ``text`` without invisible characters and with every secret replaced."""
    return _scrub_with(_scanner(), text)


# Short strings recur throughout an import: a message's ``parent_uuid`` is the previous message's
# ``uuid``, a result repeats its call's id, and tool names, models, branches and folders come back
# in every session. ``scrub`` is pure, so a remembered result is the result.
SHORT = 128
_scrub_remembered = lru_cache(maxsize=16_384)(scrub)


def scrub_short(text: str) -> Scrubbed:
    """``scrub(text)``, remembered for short strings."""
    return _scrub_remembered(text) if len(text) <= SHORT else scrub(text)


def make_scrubber(without: frozenset[str]) -> Callable[[str], Scrubbed]:
    """A scrubber that lacks the vendor rules of the kinds in ``without``.

    For measuring only (bench/scrub_bench.py): how well the other layers catch the tokens of
    vendors the rules do not know. Everything recall writes goes through :func:`scrub`.
    """
    scanner = _build_scanner(without)
    return lambda text: _scrub_with(scanner, text)


def _scrub_with(scanner: Scanner, text: str) -> Scrubbed:
    if len(text) == 36 and is_uuid(text) and (text == text.lower() or text == text.upper()):
        # No rule takes a bare UUID in one case for a secret (a session id, a message's parent: a
        # third of the strings an import scrubs), and none can: each trigger made of hex digits and
        # dashes needs a longer run or a space. tests/test_scrub_uuid.py holds the scanner to it.
        return Scrubbed(text, ())
    return _scanned(scanner, text)


def _scanned(scanner: Scanner, text: str) -> Scrubbed:
    cleaned = strip_invisible(_without_lone_surrogates(text))
    spans = _redactions(scanner, cleaned)
    if not spans:
        return Scrubbed(cleaned, ())
    parts: list[str] = []
    position = 0
    for start, end, kind in spans:
        parts += (cleaned[position:start], "[REDACTED:", kind, "]")
        position = end
    parts.append(cleaned[position:])
    return Scrubbed("".join(parts), tuple(kind for _, _, kind in spans))


def _without_lone_surrogates(text: str) -> str:
    """Lone surrogates (undecodable bytes in argv, broken JSON escapes) cannot be stored as UTF-8:
    they become U+FFFD, while valid surrogate pairs are joined into their character."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def scrub_value(value: Any) -> tuple[Any, tuple[str, ...]]:
    """Scrub every string inside a JSON-like value, returning the kinds found.

    Dict keys are kept, but they give their values context: ``{"password": "hunter2"}`` has no
    secret in any single string, yet the pair is one.
    """
    if isinstance(value, str):
        result = scrub_short(value)
        return result.text, result.kinds
    if isinstance(value, dict):
        from recall.scrub.context import judge_pair

        kinds: list[str] = []
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], found = scrub_value(item)
            if not found and isinstance(key, str) and isinstance(item, str):
                kind = judge_pair(key, out[key])
                if kind is not None:
                    out[key], found = f"[REDACTED:{kind}]", (kind,)
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
