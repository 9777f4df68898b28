"""Who may talk to `recall mcp --http`: when a token is needed, what a good one is, and which requests pass.

A server on 127.0.0.1 is still reachable from every web page the user opens: a page on
``evil.example`` whose name the attacker then points at 127.0.0.1 (DNS rebinding) talks to it as
the same origin. Such a request gives itself away by its ``Host`` (and, when a browser adds one, its
``Origin``): it names the attacker's domain. So every request, whatever address the server listens
on, must be addressed to a name that cannot be rebound: an IP literal, ``localhost`` in any case,
or a name the user listed. A browser page cannot send another host's IP literal as its ``Host``.

A token is required for any bind but the three plain loopback spellings (``127.0.0.1``, ``::1``,
``localhost``): ``127.0.0.2``, ``LOCALHOST`` or ``0:0:0:0:0:0:0:1`` are loopback too, but a user who
types them is doing something unusual, and a token costs nothing. Tokens are compared in constant
time, after hashing, so not even their length leaks.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall.errors import InvalidInput

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "RECALL_TOKEN"
MIN_TOKEN_CHARS = 32
MIN_DISTINCT_CHARS = 8  # a long run of one character is not a secret
MAX_BODY_BYTES = 10 * 1024 * 1024
MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
PLAIN_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})

_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\[\]\s:/?#@\\%]+)(?::(\d{1,5}))?")
_ORIGIN = re.compile(r"(https?)://(.+)")
_TOKEN_CHARS = re.compile(r"[!-~]+")  # visible ASCII: what an Authorization header carries as is


@dataclass(frozen=True, slots=True)
class Refusal:
    """The answer to a request the guard stops: status, a JSON body, and extra headers."""

    status: int
    error: str
    description: str
    headers: tuple[tuple[bytes, bytes], ...] = ()

    def body(self) -> bytes:
        return json.dumps({"error": self.error, "error_description": self.description}).encode()


def token_required(bind: str) -> bool:
    """Only the exact loopback spellings may go without a token (brackets around ``::1`` are syntax)."""
    return bind.strip("[]") not in PLAIN_LOOPBACK


def check_token(bind: str, token: str | None) -> None:
    """Refuse to start with no token where one is required, or with a token that is easy to guess."""
    if token is None:
        if token_required(bind):
            raise InvalidInput(
                f"refusing to listen on {bind} without a bearer token: set {TOKEN_ENV} to a random secret "
                f"of at least {MIN_TOKEN_CHARS} characters ({MAKE_TOKEN}), or listen on 127.0.0.1"
            )
        return
    if len(token) < MIN_TOKEN_CHARS:
        problem = f"is {len(token)} characters long; it needs at least {MIN_TOKEN_CHARS} random ones"
    elif not _TOKEN_CHARS.fullmatch(token):
        problem = "holds spaces or characters an HTTP header cannot carry"
    elif len(set(token)) < MIN_DISTINCT_CHARS:
        problem = "repeats too few characters to be a secret"
    else:
        return
    raise InvalidInput(f"{TOKEN_ENV} {problem}: make one with {MAKE_TOKEN}")


def addressed_safely(authority: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether a ``Host`` value (``name[:port]``) names this machine in a way DNS cannot rebind."""
    match = _AUTHORITY.fullmatch(authority)
    if match is None or (match.group(2) is not None and int(match.group(2)) > 65535):
        return False
    name = match.group(1)
    if name.startswith("["):
        return _is_ip(name[1:-1], version=6)
    lowered = name.lower()
    return lowered == "localhost" or lowered in names or _is_ip(name, version=4)


def origin_allowed(origin: str, names: frozenset[str] = frozenset()) -> bool:
    """An ``Origin`` sent by a browser: only pages served from a name ``addressed_safely`` accepts."""
    match = _ORIGIN.fullmatch(origin)
    return match is not None and addressed_safely(match.group(2), names)


class HttpGuard:
    """ASGI middleware in front of the MCP app: Host, then Origin, then the bearer token."""

    def __init__(self, app: ASGIApp, *, token: str | None, names: Iterable[str] = ()) -> None:
        self._app = app
        self._digest = None if token is None else _digest(token.encode())
        self._names = frozenset(name.lower() for name in names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        refusal = self.judge(scope["headers"])
        if refusal is None:
            await self._app(scope, receive, send)
        elif scope["type"] == "http":
            headers = [(b"content-type", b"application/json"), *refusal.headers]
            await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "http.response.body", "body": refusal.body()})
        else:  # a websocket: close it before it is accepted
            await send({"type": "websocket.close", "code": 1008})

    def judge(self, headers: Iterable[tuple[bytes, bytes]]) -> Refusal | None:
        """None when the request may pass; otherwise why not, as the client will be told."""
        values: dict[bytes, list[str]] = {}
        for name, value in headers:
            values.setdefault(name.lower(), []).append(value.decode("latin-1"))
        hosts = values.get(b"host", [])
        if len(hosts) != 1 or not addressed_safely(hosts[0], self._names):
            return Refusal(
                421,
                "misdirected_request",
                "this server answers requests addressed to an IP address or localhost (or a name given "
                "with --allow-host), which keeps web pages on other sites out",
            )
        if not all(origin_allowed(origin, self._names) for origin in values.get(b"origin", [])):
            return Refusal(403, "forbidden_origin", "requests from web pages on other sites are refused")
        if self._digest is not None and not self._authorised(values.get(b"authorization", [])):
            return Refusal(
                401,
                "unauthorized",
                f"send Authorization: Bearer <{TOKEN_ENV}>",
                ((b"www-authenticate", b'Bearer realm="recall"'),),
            )
        return None

    def _authorised(self, headers: list[str]) -> bool:
        if len(headers) != 1:
            return False
        scheme, _, given = headers[0].partition(" ")
        # Both sides hashed first: compare_digest then takes as long whatever the length of the guess.
        digest = _digest(given.strip().encode("latin-1"))
        return hmac.compare_digest(digest, self._digest or b"") and scheme.lower() == "bearer"


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def _is_ip(text: str, *, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False
