"""Long generated strings with no prefix and no context: ``EAAG…``, ``AKID…``, ``oy2…`` keys pasted
into a table, a call or a sentence.

Nothing marks these but their make-up, and the scan engine needs a literal to look for, so this
layer is the one pass of its own: one ``bytes.translate`` maps letters and digits to ``a`` and
everything else to a space (one byte per character, so indexes carry over), and ``find`` jumps to
runs of 32 or more. Almost no text has such runs; the few that appear are judged in Python.

A run counts when it has upper case, lower case and digits, reads as generated
(:func:`recall.scrub.shape.machine_made`), is not hex (hashes), and stands alone: not a piece of a
base64 blob (``+``, ``/`` or ``=`` beside it), not after a hash name (``sha512-``, ``h1:``), not a
chain the shape layer judges (``-``, ``_`` or ``.`` beside it), not a known binary header
(``AAAA`` keys, ``MII`` certificates, ``iVBOR`` images).
"""

from __future__ import annotations

import re

from recall.scrub.finding import RUN, Finding
from recall.scrub.shape import is_hex, is_placeholder, machine_made

__all__ = ["GENERATED_KINDS", "generated_runs"]

KIND = "generated-token"
_SHORTEST, _LONGEST = 32, 1024
_SHORTEST_ONE_CASE = 40  # base32 and base36 ids run to 32 (Nix store paths); keys in one case are longer
_ALNUM = bytes(0x61 if chr(i).isascii() and chr(i).isalnum() else 0x20 for i in range(256))
_NEEDLE = b"a" * _SHORTEST
_NEIGHBOURS = frozenset("+/=-_.%~")
_BINARY = ("AAAA", "MII", "iVBOR", "R0lGOD", "JVBER", "UEsDB", "eyJ", "LS0t")
_ID_PREFIX = re.compile(r"[A-Za-z]{1,4}")
_HASHED = ("h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "base64,", "integrity ", "digest ")


def _wrapped_line(text: str, start: int, end: int) -> bool:
    """A whole line of 64 or 76 characters: one line of a wrapped base64 body (PEM, MIME)."""
    before, after = text[max(0, start - 2) : start], text[end : end + 2]
    return end - start in (64, 76) and before.endswith(("\n", "\\n")) and after.startswith(("\n", "\\n"))


def _judge(text: str, start: int, end: int) -> bool:
    run = text[start:end]
    if not (_SHORTEST <= len(run) <= _LONGEST):
        return False
    if text[start - 1 : start] in _NEIGHBOURS or text[end : end + 1] in _NEIGHBOURS:
        return False
    if run.startswith(_BINARY) or run.isdigit():
        return False
    head = _ID_PREFIX.match(run)
    if is_hex(run[head.end() if head else 0 :]) or _wrapped_line(text, start, end):
        return False  # an id like Twilio's AC<hex>, or a line of a wrapped base64 body
    if text[max(0, start - 12) : start].lower().endswith(_HASHED):
        return False
    one_case = run.lower() == run or run.upper() == run
    if (one_case and len(run) < _SHORTEST_ONE_CASE) or not any(c.isdigit() for c in run):
        return False
    return machine_made(run) and not is_placeholder(run)


def generated_runs(text: str) -> list[Finding]:
    """Findings for every standalone generated run of 32-1024 letters and digits."""
    mapped = text.encode("ascii", "replace").translate(_ALNUM)
    found: list[Finding] = []
    start = mapped.find(_NEEDLE)
    while start >= 0:
        end = mapped.find(b" ", start)
        end = len(mapped) if end < 0 else end
        first = start + 1 if start and text[start - 1] == "\\" and text[start] in "nrt" else start
        if _judge(text, first, end):  # a run after a "\n" escape starts after its letter
            found.append(Finding(first, end, KIND, RUN))
        start = mapped.find(_NEEDLE, end)
    return found


GENERATED_KINDS: frozenset[str] = frozenset((KIND,))
