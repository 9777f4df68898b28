"""Tokens of vendors with no rule of their own, known by their shape: ``<prefix>_<generated body>``.

Most credentials issued today carry a short vendor prefix so that scanners can find them
(``dckr_pat_``, ``lsv2_pt_``, ``pscale_pw_``, ``tskey-auth-``, Mapbox ``sk.``). This layer finds the
shape without knowing the vendor: a head of one to four short single-case segments, then a body
that reads as generated (see :func:`recall.scrub.shape.machine_made`).

The same shape is worn by harmless things, which decide the rules below: API object ids
(``msg_01…``, ``toolu_01…``, ``cus_…``, ``chatcmpl-…``: 14-29 characters), hashes behind a word
(``sha512-…``, ``main-<sha>``), publishable keys (``pk_live_``) and long identifiers. So a head
that says what the token is for (``pat``, ``sk``, ``key``, ``secret``, ...) needs a body of 16
characters, a head with a digit in it (a code like ``sq0atp``, not a word) 20, any other head 28
(32 for a hex body; ids run 14-29 and are mostly under 28) and must not name an id; no head may
name a hash, a cache or a public key.

The scan fires once per chain, at the separator after its first segment, and only when at least
16 token characters follow, so prose and code cost a failed comparison or two per ``-`` or ``_``.
Chains joined by dots are judged on the long runs :mod:`.generated` finds (:func:`dotted_token`).
"""

from __future__ import annotations

import re

from recall.scrub.finding import SHAPE, Finding, Trigger
from recall.scrub.shape import is_hex, is_placeholder, is_uuid, machine_made

__all__ = ["PREFIXED_KINDS", "PREFIXED_TRIGGERS", "dotted_token", "head_like"]

KIND = "vendor-token"
_HEAD_MAX = 12
_CHAIN = re.compile(r"[A-Za-z0-9]{1,1024}(?:[_.+-]{1,4}[A-Za-z0-9]{1,1024}){0,48}={0,2}")
_SEGMENT = re.compile(r"[A-Za-z0-9]+")

# Head segments that never belong to a secret: hashes, cache keys and public halves.
_NEVER = frozenset(
    (
        *("sha", "sha1", "sha2", "sha224", "sha256", "sha384", "sha512", "sha3", "md5", "blake2b"),
        *("blake3", "crc32", "xxh64", "hash", "digest", "checksum", "integrity", "etag", "cache", "nonce"),
        *("pk", "pub", "public", "publishable", "anon", "example"),
    )
)
# First segments of ids and version-control names, which only a head naming a secret overrides.
_IDS = frozenset(
    (
        *("msg", "toolu", "srvtoolu", "tool", "call", "chatcmpl", "cmpl", "req", "request", "resp"),
        *("response", "agent", "run", "thread", "asst", "file", "batch", "org", "proj", "project"),
        *("user", "usr", "cus"),
        *("cust", "pi", "ch", "sub", "evt", "event", "prod", "price", "acct", "in", "inv", "txn", "seti"),
        *("pm", "src", "card", "po", "tr", "re", "cs", "ii", "il", "si", "plan", "ord", "order", "item"),
        *("trace", "span", "job", "task", "ft", "ftjob", "vs", "step", "modr", "dpl", "prj", "team"),
        *("id", "obj", "ref", "rev", "commit", "hash", "digest", "build", "cache", "etag", "blob", "tree"),
        *("nonce", "uuid", "guid", "uid", "oid", "chunk", "img", "image", "layer", "pod", "node", "tag"),
        *("artifact", "release", "version", "ver", "v", "main", "master", "dev", "develop", "feature"),
        *("fix", "hotfix", "branch", "pr", "ci", "test", "tmp", "temp", "sandbox", "snapshot", "backup"),
    )
)
# Id words that mark an id wherever they stand in the head (``agent_msg_01…``).
_ID_PARTS = frozenset(("msg", "toolu", "srvtoolu", "call", "req", "resp", "id", "uuid"))
# Heads that say the token is a credential, as a whole segment or as part of one.
_MARK_WORDS = frozenset(("sk", "rk", "pt", "pw", "at", "st", "sa", "tk", "tkn", "ak", "bot", "svc", "live"))
_MARK_PARTS = ("key", "pat", "api", "tok", "sec", "pass", "pwd", "auth", "cred", "priv")


def _marked(segment: str) -> bool:
    lowered = segment.lower()
    if lowered in _MARK_WORDS or lowered.startswith("sk") or lowered.endswith(("sk", "ak")):
        return True
    return any(part in lowered for part in _MARK_PARTS)


def head_like(segment: str, first: bool) -> bool:
    """A vendor prefix segment: one case, short; the first starts with a letter."""
    if segment != segment.lower() and segment != segment.upper():
        return False
    if first:
        return segment[0].isalpha() and 2 <= len(segment) <= _HEAD_MAX
    if segment.isdigit():
        return False  # a number (a version, an id) starts the body
    return len(segment) <= 6 or (segment.isalpha() and len(segment) <= _HEAD_MAX)


def is_token(segments: list[str]) -> bool:
    """Do these segments (a chain split at its separators) make a vendor-style token?"""
    head = 0
    while head < min(4, len(segments) - 1) and head_like(segments[head], head == 0):
        head += 1
    if not head or any(s.lower() in _NEVER for s in segments[:head]):
        return False
    body = segments[head:]
    text = "".join(body)
    marked = any(_marked(s) for s in segments[:head])
    if len(body) == 5 and is_uuid("-".join(body)):
        return marked
    if not marked and (segments[0].lower() in _IDS or any(s.lower() in _ID_PARTS for s in segments[:head])):
        return False
    if all(is_hex(s) for s in body):
        return len(text) >= (16 if marked else 32)
    coded = any(not s.isalpha() for s in segments[:head])  # "sq0atp", "lsv2": a code, not a word
    if len(text) < (16 if marked else 20 if coded else 28):
        return False
    return machine_made(text) or any(len(s) >= 12 and machine_made(s) for s in body)


def _vendor_shape(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    start = position
    while (
        start > 0 and position - start < _HEAD_MAX and text[start - 1].isascii() and text[start - 1].isalnum()
    ):
        start -= 1
    if start and text[start - 1] == "\\" and text[start] in "nrt":
        start += 1  # the letter of a "\n" escape in JSON-encoded text
    chain = _CHAIN.match(text, start)
    if chain is None or chain.end() <= position + 1:
        return
    token = chain.group()
    segments = _SEGMENT.findall(token)
    if is_token(segments) and not is_placeholder(token):
        out.append(Finding(start, chain.end(), KIND, SHAPE))


def _trigger(separator: str) -> Trigger:
    # At least 16 chain characters after the separator (checked first: it fails fast), and a head
    # of 2-12 characters before it that starts the chain (one look-behind per length).
    heads = "|".join(
        rf"(?<=(?<![a-z0-9_.+-])[a-z][a-z0-9]{{{n - 1}}}{re.escape(separator)})"
        for n in range(2, _HEAD_MAX + 1)
    )
    return Trigger(separator, _vendor_shape, rf"(?=[a-z0-9_.+-]{{16}})(?:{heads})")


def dotted_token(text: str, start: int, end: int) -> Finding | None:
    """The finding for a chain joined by dots (``sk.``, ``hvs.``, ``dt0c01.``), if it is a token.

    Dots end sentences and join attribute names, so scanning every dot costs more than it finds;
    dotted chains are judged here instead, on the long runs :mod:`.generated` finds anyway.
    """
    token = text[start:end]
    if not is_token(_SEGMENT.findall(token)) or is_placeholder(token):
        return None
    return Finding(start, end, KIND, SHAPE)


PREFIXED_TRIGGERS: tuple[Trigger, ...] = (_trigger("_"), _trigger("-"))
PREFIXED_KINDS: frozenset[str] = frozenset((KIND,))
