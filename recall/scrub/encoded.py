"""Base64 blobs whose decoded text holds a secret: Kubernetes Secret data, Docker auth configs,
``echo <blob> | base64 -d > .env``.

Decoding every base64 run would cost a pass over all text; instead the scan looks for what a
secret-bearing text turns into when encoded. Base64 maps each 3 bytes to 4 characters, so a word
like ``password`` appears in one of three spellings depending on where it falls, each with a
stable middle that does not depend on its neighbours (``cGFzc3dvcm``, ``Bhc3N3b3Jk``,
``YXNzd29yZ``). Those middles are the triggers; each holds a character the scan engine looks
for anyway, so they add branches to its scans rather than scans (see :mod:`.scan`). A hit
decodes the whole run and scans the decoded text with the same scanner; if that finds a secret,
the blob is redacted whole.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from recall.scrub.finding import CONTEXT, Finding, Handler, Trigger

__all__ = ["ENCODED_KINDS", "decode_base64", "encoded_triggers"]

KIND = "base64-secret"
# Words that secret-bearing text contains, in the spellings config files use.
_WORDS = ("password", "PASSWORD", "secret", "SECRET", "token", "TOKEN", "auth", "PRIVATE", "_KEY", "_URL=")
_MIN_MIDDLE = 4
_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,65536}={0,2}")
_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_MAX_BACK = 65536
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def _middles(word: str) -> set[str]:
    """The characters of ``word``'s base64 that do not depend on the bytes around it, per offset."""
    data = word.encode()
    out = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data + b"\0\0").decode()
        middle = encoded[-(-shift * 8 // 6) : (shift + len(data)) * 8 // 6]
        if len(middle) >= _MIN_MIDDLE:
            out.add(middle)  # configs are encoded with the standard alphabet, not base64url
    return out


def decode_base64(run: str) -> str | None:
    """The text a base64 run stands for, or None when it does not begin as text (a random key,
    an image): its first 48 bytes must be nearly all printable."""
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(
            padded, altchars=b"-_" if ("-" in body or "_" in body) else None, validate=True
        )
    except (binascii.Error, ValueError):
        return None
    head = raw[:48]
    if len(head.translate(None, _TEXT_BYTES)) > len(head) // 10:
        return None
    return raw.decode("utf-8", "replace")


def encoded_triggers(holds_secret: Callable[[str], bool]) -> tuple[Trigger, ...]:
    """Triggers for blobs, judged by ``holds_secret`` on the decoded text (the scanner itself)."""
    spellings: dict[str, set[str]] = {}  # lowercased middle -> the exact middles it stands for
    for word in _WORDS:
        for middle in _middles(word):
            spellings.setdefault(middle.lower(), set()).add(middle)

    def handle(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
        end = position + len(literal)
        if not any(text.startswith(middle, end - len(middle)) for middle in spellings[literal]):
            return
        start = position
        while start > 0 and position - start < _MAX_BACK and text[start - 1] in _RUN_CHARS:
            start -= 1
        if start and text[start - 1] == "\\" and text[start] in "nrt":
            start += 1
        run = _RUN.match(text, start)
        if run is None or run.end() < end:
            return
        decoded = decode_base64(run.group())
        if decoded is not None and holds_secret(decoded):
            out.append(Finding(start, run.end(), KIND, CONTEXT))

    handler: Handler = handle
    return tuple(Trigger(literal, handler, "[a-z0-9+/_-]") for literal in spellings)


ENCODED_KINDS: frozenset[str] = frozenset((KIND,))
