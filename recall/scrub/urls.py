"""Secrets in URLs: userinfo (``scheme://user:password@host`` of any scheme) and webhook paths.

Query parameters (``?token=``, ``&X-Goog-Signature=``, ``&sig=``) are assignments and are judged
with them (:mod:`.context`); what is left here is the URL's own structure.
"""

from __future__ import annotations

import re

from recall.scrub.finding import CONTEXT, Finding, Trigger
from recall.scrub.shape import is_hex, is_placeholder, is_uuid, looks_random, machine_made

__all__ = ["URL_KINDS", "URL_TRIGGERS"]

# userinfo: "user:password@" (the password may hold "@", "#" and "?": people do not encode them)
# or a lone token used as the user, as in "https://<token>@github.com".
_USERINFO = re.compile(
    r"://(?:(?P<u>[^\s:/?#@\"'<>\[\]\\]*):(?P<s>[^\s/\"'<>\[\]\\]+)|(?P<t>[\w.~-]{20,}))@(?=[\w\[])"
)
_PLACEHOLDERS = frozenset(
    ("password", "pass", "passwd", "pwd", "secret", "pw", "p", "x", "token", "changeme")
)


def _userinfo(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _USERINFO.match(text, position)
    if match is None:
        return
    if match.group("t") is not None:
        start, end = match.span("t")
        if looks_random(text[start:end], 20):
            out.append(Finding(start, end, "url-password", CONTEXT))
        return
    start, end = match.span("s")
    value = text[start:end]
    if value.lower() not in _PLACEHOLDERS and not is_placeholder(value):
        out.append(Finding(start, end, "url-password", CONTEXT))


# A webhook URL is its own credential: whoever has the path can post. Teams
# (``webhookb2/<uuid>@<uuid>/IncomingWebhook/<hex>/<uuid>``), Discord (``webhooks/<id>/<token>``),
# Slack (``hooks.slack.com/services/T…/B…/<token>``) and most others put generated segments after
# a path segment or a host named for hooks.
_HOOK = r"s?(?:b\d)?(?:\.[\w.-]{1,100})?/"
_HOOK_PATH = re.compile(rf"hook{_HOOK}(?P<s>[^\s?#\"'<>\\]{{16,2048}})")
_SEGMENTS = re.compile(r"[^/@]+")
_SPACE = re.compile(r"[\s\"'<>]")


def _generated(segment: str) -> bool:
    """A segment its issuer made: a key, a UUID, a workspace id like Slack's ``T0ABC12DEF``.

    All digits is a public id (Discord's channel), left for the vendor rule's kind to name.
    """
    if segment.isdigit():
        return False
    if is_uuid(segment) or (len(segment) >= 8 and segment.isupper() and machine_made(segment)):
        return True
    return len(segment) >= 16 and (is_hex(segment) or machine_made(segment))


def _webhook(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    scheme = lowered.rfind("://", max(0, position - 256), position)
    if scheme < 0 or _SPACE.search(lowered, scheme, position):
        return  # a path in prose or code, not part of a URL
    match = _HOOK_PATH.match(lowered, position)
    if match is None:
        return
    path = text[match.start("s") : match.end("s")].rstrip(".,;:)")
    first = next((m for m in _SEGMENTS.finditer(path) if _generated(m.group())), None)
    if first is not None and not is_placeholder(path):  # from the first generated segment on
        start = match.start("s") + first.start()
        out.append(Finding(start, match.start("s") + len(path), "webhook-url", CONTEXT))


URL_TRIGGERS: tuple[Trigger, ...] = (
    Trigger("://", _userinfo, r"(?:[^\s:/?#@\"'<>\[\]\\]*:[^\s/\"'<>\[\]\\]+|[a-z0-9_.~-]{20,})@"),
    Trigger("hook", _webhook, rf"{_HOOK}[^\s?#\"'<>\\]{{16}}"),
)
URL_KINDS: frozenset[str] = frozenset(("url-password", "webhook-url"))
