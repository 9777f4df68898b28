"""The web view's application: routes, errors as pages, the Host/Origin guard and strict headers.

``create_app`` builds a Starlette app over one ``recall.Memory``. In front of it sits the same
guard as ``recall mcp --http`` (recall.http_guard: requests addressed to an IP literal or
``localhost`` only, no foreign ``Origin``), then headers that forbid scripts, framing and caching.
With ``read_only`` the action routes are never added, so no request can change anything.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from recall.errors import InvalidInput, InvalidTransition, NotFound, RecallError
from recall.http_guard import HttpGuard
from recall.web import actions, pages
from recall.web.csrf import Csrf
from recall.web.health import HealthCheck
from recall.web.render import SECURITY_HEADERS, environment, page

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from recall.memory import Memory

log = logging.getLogger(__name__)

_STATUS = {InvalidInput: 400, NotFound: 404, InvalidTransition: 409}
HEALTH_DELAY = 3.0  # seconds after start: the first pages someone opens get the machine


def create_app(
    memory: Memory, *, project: str | None = None, read_only: bool = False, warm: bool = False
) -> ASGIApp:
    """The web view over ``memory``; ``project`` is the scope of pages that name none. With ``warm``
    a thread opens the store and compiles the templates as the server starts, and the first health
    check starts a little later (it reads the whole file), so the first pages pay for none of them."""
    routes = [
        Route("/", pages.overview),
        Route("/sessions", pages.sessions),
        Route("/session/{id:int}", pages.session),
        Route("/message/{id:int}", pages.message),
        Route("/row/{kind:str}/{id:int}", pages.row),
        Route("/decisions", pages.decisions),
        Route("/search", pages.search),
        Route("/review", pages.review),
        Route("/connections", pages.connections),
        Route("/health", pages.health),
        Mount("/static", StaticFiles(packages=[("recall.web", "static")]), name="static"),
    ]
    if not read_only:
        routes += [
            Route("/forget", pages.forget_confirm),
            Route("/actions/supersede", actions.supersede, methods=["POST"]),
            Route("/actions/revert", actions.revert, methods=["POST"]),
            Route("/actions/forget", actions.forget, methods=["POST"]),
            Route("/actions/accept", actions.accept, methods=["POST"]),
            Route("/actions/reject", actions.reject, methods=["POST"]),
        ]
    app = Starlette(
        routes=routes,
        exception_handlers={RecallError: _recall_error, HTTPException: _http_error, Exception: _crash},
        lifespan=_warming if warm else None,
    )
    app.state.memory = memory
    app.state.project = project
    app.state.read_only = read_only
    app.state.csrf = Csrf()
    app.state.health = HealthCheck(memory.path, Path.cwd())
    return HttpGuard(SecurityHeaders(app), token=None)


@asynccontextmanager
async def _warming(app: Starlette) -> AsyncIterator[None]:
    """Once the server has loaded (its own imports done), warm up on a thread of its own."""
    threading.Thread(target=_warm_up, args=(app,), name="recall-ui-warm-up", daemon=True).start()
    yield


def _warm_up(app: Starlette) -> None:
    try:
        app.state.memory.open()
    except RecallError as exc:  # the first page says so, in one line
        log.warning("recall ui: %s", exc)
    for name in environment().list_templates():
        environment().get_template(name)
    later = threading.Timer(HEALTH_DELAY, app.state.health.start)
    later.daemon = True
    later.start()


class SecurityHeaders:
    """Adds the strict headers to every response, error pages and static files included."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in present
                ]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self._app(scope, receive, with_headers)


async def _recall_error(request: Request, exc: Exception) -> Response:
    status = next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), 503)
    return page(request, "error.html", {"status": status, "message": str(exc)}, status=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "no such page here", 405: "this page does not take that kind of request"}.get(
        exc.status_code, exc.detail
    )
    if (
        exc.status_code == 404
        and request.app.state.read_only
        and request.url.path.startswith(("/actions/", "/forget"))
    ):
        message = "recall ui runs read-only: nothing can be changed from here"
    return page(
        request, "error.html", {"status": exc.status_code, "message": message}, status=exc.status_code
    )


async def _crash(request: Request, exc: Exception) -> Response:
    log.exception("recall ui failed on %s", request.url.path)
    message = f"recall ui failed ({type(exc).__name__}); the terminal running it shows why"
    return page(request, "error.html", {"status": 500, "message": message}, status=500)
