"""HTML out of templates, with every stored value escaped and every page sent with strict headers.

Stored text comes from transcripts and may hold HTML or script, so Jinja2 autoescapes everything
and no template marks a value safe. The Content-Security-Policy allows no script at all and styles
only from this server, so even a mistake in escaping could not run anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from recall.web.csrf import COOKIE, FIELD

PLURALS = {
    "session": "sessions",
    "message": "messages",
    "decision": "decisions",
    "learning": "learnings",
    "breadcrumb": "breadcrumbs",
    "session_summary": "session summaries",
}
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # no-referrer would make browsers send `Origin: null` on forms
    "cache-control": "no-store",
}


@cache
def environment() -> Environment:
    """Built once, at the first page; templates compile on first use and stay compiled."""
    env = Environment(
        loader=PackageLoader("recall.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(when=when, day=day, number=number, clip=clip)
    env.globals.update(query=query, scope_param=scope_param, plurals=PLURALS)
    return env


def page(request: Request, template: str, context: Mapping[str, Any], status: int = 200) -> HTMLResponse:
    """A full page; forms on it get this browser's CSRF token (and the cookie, the first time)."""
    state = request.app.state
    nonce, new = state.csrf.nonce(request)
    html = (
        environment()
        .get_template(template)
        .render(
            request=request,
            read_only=state.read_only,
            csrf_field=FIELD,
            csrf_token=state.csrf.token(nonce),
            **context,
        )
    )
    response = HTMLResponse(html, status_code=status)
    if new:
        response.set_cookie(COOKIE, nonce, httponly=True, samesite="strict", path="/")
    return response


def query(path: str, **params: Any) -> str:
    """``path`` with the given query parameters, leaving out the empty ones."""
    kept = {name: value for name, value in params.items() if value not in (None, "", False)}
    return f"{path}?{urlencode(kept)}" if kept else path


def scope_param(project: str | None) -> str:
    """How a link names a scope: a project's name, or ``*`` for every project."""
    return "*" if project is None else project


def when(value: str | None) -> str:
    """A stored ISO 8601 UTC time as ``YYYY-MM-DD HH:MM``."""
    return "" if not value else f"{value[:10]} {value[11:16]}".strip()


def day(value: str | None) -> str:
    return "" if not value else value[:10]


def number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def clip(text: str | None, limit: int = 240) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
