"""Normalise, scrub, then cap: how the write path shortens text without keeping part of a secret.

Adapters used to cut tool output to 2,000 characters before the store scrubbed it, so a key that
straddled the cut was stored minus its last characters: too short for its rule, still a key. Now
text arrives whole with the parts it may lose marked (:class:`recall.transcript.Cut`); each part
is scrubbed whole and only then cut (adr/0013).

A ceiling guards memory and time against absurd payloads (a 50 MB log pasted into a tool call):
text beyond it is dropped *before* scrubbing, so the last word kept may be the first part of a
secret; that word is dropped too, after scrubbing, so what is kept is whole words only.
"""

from __future__ import annotations

from collections.abc import Sequence

from recall.scrub import SHORT, Scrubbed, scrub, scrub_short
from recall.transcript import Cut

__all__ = ["CEILING", "cap", "scrub_then_cap"]

CEILING = 1_000_000  # characters scrubbed of any one text; the rest is dropped, marked as cut
_MARKER = "[REDACTED:"
_WORD_SEARCH = 4096  # how far back the ceiling looks for a break between words


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker that says how much was cut.

    A cut never splits a ``[REDACTED:<kind>]`` marker: it moves to the marker's start.
    """
    return _shortened(text, limit, 0)


def _shortened(text: str, limit: int | None, dropped: int) -> str:
    """``text`` cut to ``limit`` (None: not cut); ``dropped`` characters were cut before."""
    keep = len(text) if limit is None else min(len(text), max(limit, 0))
    opened = text.rfind(_MARKER, 0, keep + len(_MARKER) - 1)  # a marker that starts before the cut
    if keep < len(text) and opened >= 0 and text.find("]", opened) >= keep:
        keep = opened
    cut = len(text) - keep + dropped
    return f"{text[:keep]}\n[… {cut:,} more characters cut]" if cut else text


def _scrub_bounded(text: str) -> tuple[Scrubbed, int]:
    """``text`` scrubbed up to the ceiling, and how many characters were dropped."""
    if len(text) <= CEILING:
        return scrub(text), 0
    result = scrub(text[:CEILING])
    kept = result.text
    floor = max(0, len(kept) - _WORD_SEARCH)
    cut = max(kept.rfind(" ", floor), kept.rfind("\n", floor))
    kept = kept[: cut if cut > 0 else floor]  # the last word may be the start of a secret
    return Scrubbed(kept, result.kinds), len(text) - CEILING + len(result.text) - len(kept)


def scrub_then_cap(text: str, cuts: Sequence[Cut] = ()) -> Scrubbed:
    """Scrub ``text`` part by part and cut each marked part to its limit afterwards.

    Parts are scrubbed apart (a cut part and the text around it are separate blocks: a tool call,
    its output, the prose between), so each part's cut applies to what its scrub left. Short text
    with nothing to cut (a tool's name, a folder, a model, a branch) is scrubbed once per import.
    """
    if not cuts and len(text) <= SHORT:
        return scrub_short(text)
    parts: list[tuple[str, int | None]] = []
    position = 0
    for start, end, limit in sorted(cuts):
        parts += [(text[position:start], None), (text[start:end], limit)]
        position = end
    parts.append((text[position:], None))
    pieces: list[str] = []
    kinds: list[str] = []
    for part, keep in parts:
        if part:
            result, dropped = _scrub_bounded(part)
            pieces.append(_shortened(result.text, keep, dropped))
            kinds.extend(result.kinds)
    return Scrubbed("".join(pieces), tuple(kinds))
