"""Secrets in HTTP headers: ``Authorization`` schemes and cookies.

Matching runs on the lowercased text (same length as the original) so one pattern serves
``Authorization`` and ``authorization``; values are read back from the original text.
"""

from __future__ import annotations

import base64
import binascii
import re

from recall.scrub.finding import CONTEXT, Finding, Trigger
from recall.scrub.names import classify_name
from recall.scrub.shape import is_placeholder, is_uuid, looks_random, machine_made

__all__ = ["HEADER_KINDS", "HEADER_TRIGGERS"]

_BEARER = re.compile(r"bearer[ \t]+(?P<s>[a-z0-9._~+/=-]{8,})")
_BASIC = re.compile(r"basic[ \t]+(?P<s>[a-z0-9+/]{8,}={0,2})(?![\w+/=.-])")
# After "authorization": any scheme but those with rules of their own, then the value. The
# trigger's tail is this up to the value's eighth character, so only a header that has a value
# reaches Python ("Authorization: `Bearer ${token}`" in code is most of them).
_AUTHORIZATION_HEAD = (
    r"\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?(?!bearer|basic|digest|negotiate|ntlm|aws4)(?:[a-z][a-z0-9-]*[ \t]+)?"
)
_AUTHORIZATION = re.compile(rf"authorization{_AUTHORIZATION_HEAD}(?P<s>[^\s\"',;\\]{{8,}})")


def _after_authorization(lowered: str, start: int) -> bool:
    return lowered.find("authoriz", max(0, start - 48), start) >= 0


def _bearer(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _BEARER.match(lowered, position)
    if match is None:
        return
    start, end = match.span("s")
    value = text[start:end]
    if looks_random(value, 8 if _after_authorization(lowered, position) else 16):
        out.append(Finding(start, end, "bearer-token", CONTEXT))


def _basic(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _BASIC.match(lowered, position)
    if match is None:
        return
    start, end = match.span("s")
    value = text[start:end]
    if _decodes_to_userpass(value) or (_after_authorization(lowered, position) and looks_random(value)):
        out.append(Finding(start, end, "basic-auth", CONTEXT))


def _decodes_to_userpass(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.partition(b":")
    return bool(colon and user and password) and decoded.isascii()


def _authorization(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _AUTHORIZATION.match(lowered, position)
    if match is not None:
        start, end = match.span("s")
        if looks_random(text[start:end], 8):
            out.append(Finding(start, end, "authorization-header", CONTEXT))


# A Cookie or Set-Cookie header, a cookie jar line, or a ``cookie=`` option: ``name=value`` pairs.
_COOKIE = re.compile(r"cookie\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?")
_PAIR = re.compile(r"[ \t]*(?P<n>[^\s=;,\"'\\]{1,128})=(?P<v>[^\s;,\"'\\]{1,4096})")
_ATTRIBUTES = frozenset(
    ("path", "domain", "expires", "max-age", "samesite", "priority", "version", "comment")
)


def _cookie(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    """Every cookie value that is generated or named like a secret; attributes are left alone."""
    header = _COOKIE.match(lowered, position)
    if header is None:
        return
    position = header.end()
    for _ in range(64):
        pair = _PAIR.match(text, position)
        if pair is None:
            return
        name, value = pair.group("n"), pair.group("v")
        generated = len(value) >= 12 and machine_made(value) and not is_uuid(value)
        named = classify_name(name) is not None and looks_random(value)
        if (generated or named) and name.lower() not in _ATTRIBUTES and not is_placeholder(value):
            out.append(Finding(*pair.span("v"), "cookie", CONTEXT))
        position = pair.end()
        if text.startswith(";", position):
            position += 1


HEADER_TRIGGERS: tuple[Trigger, ...] = (
    Trigger("bearer", _bearer, r"[ \t]+[a-z0-9._~+/=-]{8}"),
    Trigger("basic", _basic, r"[ \t]+[a-z0-9+/]{8}"),
    Trigger("authorization", _authorization, rf"{_AUTHORIZATION_HEAD}[^\s\"',;\\]{{8}}"),
    Trigger("cookie", _cookie, r"\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?[^\s=;]+="),
)
HEADER_KINDS: frozenset[str] = frozenset(("bearer-token", "basic-auth", "authorization-header", "cookie"))
