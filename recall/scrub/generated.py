"""Long generated strings with no prefix and no context: ``EAAG…``, ``AKID…``, ``oy2…``, ``AIza…``
keys pasted into a table, a call or a sentence.

Nothing marks these but their make-up, and the scan engine needs a literal to look for, so this
layer is the one pass of its own: one ``bytes.translate`` maps letters, digits, ``-``, ``_`` and
``.`` (base64url and dotted tokens) to ``a`` and everything else to a space (one byte per character, so
indexes carry over), and ``find`` jumps to runs of 32 or more. Few texts have such runs; the few
that appear are judged in Python.

A run counts when it has upper case, lower case and digits, reads as generated
(:func:`recall.scrub.shape.machine_made`), is not hex (hashes), and stands alone: not a piece of a
base64 blob (``+``, ``/`` or ``=`` beside it), not after a hash name (``sha512-``, ``h1:``), not a
prefixed chain (``msg_01…``, ``com.example.Name``: the shape layer judges those), not an id with a
hex body (``AC<hex>``) or a line of a wrapped base64 body, not a known binary header (SSH keys,
``MII`` certificates, ``iVBOR`` images).
"""

from __future__ import annotations

import re

from recall.scrub.encoded import decode_base64
from recall.scrub.finding import RUN, Finding
from recall.scrub.prefixed import dotted_token, head_like
from recall.scrub.shape import is_hex, is_placeholder, machine_made

__all__ = ["GENERATED_KINDS", "generated_runs"]

KIND = "generated-token"
_SHORTEST, _LONGEST = 32, 1024
_SHORTEST_ONE_CASE = 40  # base32 and base36 ids run to 32 (Nix store paths); keys in one case are longer
# Letters, digits, "-", "_" and "." (base64url and dotted tokens) map to "a"; the rest to a space.
_TOKEN = bytes(
    0x61 if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "-_.") else 0x20 for i in range(256)
)
_NEEDLE = b"a" * _SHORTEST
_NEIGHBOURS = frozenset("+/=%~")
_SEPARATORS = re.compile(r"[-_.]+")
_OWNER = re.compile(r"(?<![\w:])\d{6,12}:$")
_BINARY = (
    *("AAAAB3Nza", "AAAAC3Nza", "AAAAE2VjZHNh", "MII"),  # SSH keys, certificates
    *("iVBOR", "R0lGOD", "JVBER", "UEsDB", "eyJ", "LS0t"),  # PNG, GIF, PDF, zip, JSON, PEM
)
_ID_PREFIX = re.compile(r"[A-Za-z]{1,4}")
_DIGIT = re.compile(r"\d")
_NAMED = re.compile(r"\.[a-z]{2,24}$")
_HEXISH = re.compile(r"[0-9a-f]+(?:[-_.][0-9a-f]+)*|[0-9A-F]+(?:[-_.][0-9A-F]+)*")
_HASHED = ("h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", "base64,", "integrity ", "digest ")


def _wrapped_line(text: str, start: int, end: int) -> bool:
    """A whole line of 64 or 76 characters: one line of a wrapped base64 body (PEM, MIME)."""
    before, after = text[max(0, start - 2) : start], text[end : end + 2]
    return end - start in (64, 76) and before.endswith(("\n", "\\n")) and after.startswith(("\n", "\\n"))


def _judge(text: str, start: int, end: int) -> bool:
    if text[start - 1 : start] in _NEIGHBOURS or text[end : end + 1] in _NEIGHBOURS:
        return False
    if _NAMED.search(text, start, end):
        return False  # a host or file name: "<id>.apps.googleusercontent.com", "<hash>.js"
    run = "".join(_SEPARATORS.split(text[start:end]))
    if not (_SHORTEST <= len(run) <= _LONGEST):
        return False
    if run.startswith(_BINARY) or run.isdigit():
        return False
    head = _ID_PREFIX.match(run)
    if is_hex(run[head.end() if head else 0 :]) or _wrapped_line(text, start, end):
        return False  # an id like Twilio's AC<hex>, or a line of a wrapped base64 body
    if text[max(0, start - 12) : start].lower().endswith(_HASHED):
        return False
    one_case = run.lower() == run or run.upper() == run
    if (one_case and len(run) < _SHORTEST_ONE_CASE) or _DIGIT.search(run) is None:
        return False
    if not machine_made(run) or is_placeholder(run):
        return False
    return decode_base64(text[start:end]) is None  # base64 of text: the encoded layer reads it


def _run_finding(text: str, start: int, end: int) -> Finding | None:
    if _HEXISH.fullmatch(text, start, end):  # SHAs and UUIDs, most of the runs there are
        return None
    head = _SEPARATORS.split(text[start:end], 1)
    if len(head) > 1 and head_like(head[0], first=True):  # a prefixed chain: the shape layer's
        return dotted_token(text, start, end) if "." in text[start:end] else None
    if not _judge(text, start, end):
        return None
    owner = _OWNER.search(text, max(0, start - 16), start)  # Telegram's "<bot id>:<secret>"
    return Finding(owner.start() if owner else start, end, KIND, RUN)


def generated_runs(text: str) -> list[Finding]:
    """Findings for every standalone generated run of 32-1024 letters and digits."""
    mapped = text.encode("ascii", "replace").translate(_TOKEN)
    found: list[Finding] = []
    start = mapped.find(_NEEDLE)
    while start >= 0:
        end = mapped.find(b" ", start)
        end = len(mapped) if end < 0 else end
        # A run after a "\n" escape in JSON-encoded text starts after the escape's letter.
        first = start + 1 if start and text[start - 1] == "\\" and text[start] in "nrt" else start
        first += len(text[first:end]) - len(text[first:end].lstrip("-_."))
        finding = _run_finding(text, first, first + len(text[first:end].rstrip("-_.")))
        if finding is not None:
            found.append(finding)
        start = mapped.find(_NEEDLE, end)
    return found


GENERATED_KINDS: frozenset[str] = frozenset((KIND,))
