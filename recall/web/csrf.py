"""Forms carry a token a page on another site cannot know; the browser's cookie says which one.

Each browser gets a random nonce in an HttpOnly, SameSite=Strict cookie; its forms carry
``HMAC(server secret, nonce)``. A page on another origin can neither read our pages (no CORS) nor
compute the token: even if it plants its own nonce cookie (cookies ignore ports, so any page on
``localhost`` can), it lacks the secret, which lives only in this server process and changes at
every start. An action also needs an ``Origin`` (when the browser sends one) naming this very
server, which refuses a page on another local port before its token is even looked at.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request

COOKIE = "recall_csrf"
FIELD = "csrf_token"


class Csrf:
    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    @staticmethod
    def nonce(request: Request) -> tuple[str, bool]:
        """The browser's nonce, and whether it is new (then the response must set the cookie)."""
        given = request.cookies.get(COOKIE, "")
        if len(given) == 43 and given.replace("-", "").replace("_", "").isalnum():
            return given, False
        return secrets.token_urlsafe(32), True

    def token(self, nonce: str) -> str:
        return hmac.new(self._secret, nonce.encode(), hashlib.sha256).hexdigest()

    def refusal(self, request: Request, submitted: str) -> str | None:
        """Why an action must be refused, or None when its origin and token are this server's own."""
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
            return "this action came from a page on another site or port; use recall's own page"
        nonce = request.cookies.get(COOKIE)
        if not nonce or not hmac.compare_digest(self.token(nonce), submitted):
            return "this form has expired (recall ui was restarted, or cookies are off); reload the page and try again"
        return None
