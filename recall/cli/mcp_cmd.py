"""`recall mcp`: serve recall's tools to agents over stdio, or over Streamable HTTP for a shared server.

An HTTP server that listens beyond loopback hands the whole store to anyone who can reach the port,
so it starts only with a bearer token in ``RECALL_TOKEN``; with a token set, every request must send
``Authorization: Bearer <token>`` or gets 401. Nothing heavy is imported until the command runs.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from typing import TYPE_CHECKING

import click

from recall.cli.context import AppContext, pass_app

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "RECALL_TOKEN"
_UNAUTHORISED = b'{"error": "unauthorized", "error_description": "send Authorization: Bearer <RECALL_TOKEN>"}'


@click.command()
@click.option("--http", "use_http", is_flag=True, help="Serve Streamable HTTP (at /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="HTTP: the port (0: any free one).",
)
@pass_app
@click.pass_context
def mcp(ctx: click.Context, app: AppContext, use_http: bool, host: str, port: int) -> None:
    """Serve recall's memory tools over MCP (stdio unless --http).

    Claude Code: `claude mcp add recall -- recall mcp`. Beyond loopback, --http needs a bearer
    token in RECALL_TOKEN.
    """
    if not use_http and any(ctx.get_parameter_source(name).name != "DEFAULT" for name in ("host", "port")):
        raise click.UsageError("--host and --port apply to --http only")
    token = os.environ.get(TOKEN_ENV) or None
    if use_http and token is None and not is_loopback(host):
        raise click.ClickException(
            f"refusing to listen on {host} without a bearer token: set {TOKEN_ENV} to a long random secret "
            f"(clients then send 'Authorization: Bearer <token>'), or listen on 127.0.0.1"
        )
    from recall.mcp_server import create_server

    server = create_server(app.memory)
    if use_http:
        serve_http(server, host, port, token)
    else:
        server.run()


def is_loopback(host: str) -> bool:
    """Only ``localhost`` and loopback addresses count; any other name might resolve anywhere."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_http(server: MCPServer, host: str, port: int, token: str | None) -> None:
    """Bind first, then say where on stderr: with ``--port 0`` the line names the port chosen."""
    import socket

    import uvicorn

    address = host.strip("[]")
    app: ASGIApp = server.streamable_http_app(host=address)
    if token is not None:
        app = BearerGate(app, token)
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    shown = f"[{address}]" if ":" in address else address
    auth = "bearer token required" if token else "no token"
    click.echo(
        f"recall mcp: Streamable HTTP on http://{shown}:{sock.getsockname()[1]}/mcp ({auth})", err=True
    )
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


class BearerGate:
    """ASGI middleware: an HTTP request passes only with ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="recall"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _UNAUTHORISED})
            return
        await self._app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        header = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        scheme, _, given = header.partition(b" ")
        # compare_digest takes as long for a near miss as for a wild guess.
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)


COMMANDS = [mcp]
