"""`recall mcp`: serve recall's tools to agents over stdio, or over Streamable HTTP for a shared server.

Who may connect is decided in recall.http_guard (adr/0015): requests must be addressed to an IP
address or localhost (DNS rebinding gets 421, foreign web pages 403), any bind but 127.0.0.1, ::1 or
localhost needs a bearer token of at least 32 characters in ``RECALL_TOKEN``, and bodies over 10 MB
get 413. Nothing heavy is imported until the command runs.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from recall.cli.context import AppContext, pass_app

if TYPE_CHECKING:
    from mcp.server import MCPServer


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
@click.option(
    "--allow-host",
    "allowed",
    multiple=True,
    metavar="NAME",
    help="HTTP: also answer requests addressed to this DNS name (repeatable).",
)
@click.option(
    "--project",
    help="Bind the server to this project (default: RECALL_PROJECT): it changes or forgets another "
    "project's rows only when a call says project='*'.",
)
@pass_app
@click.pass_context
def mcp(
    ctx: click.Context,
    app: AppContext,
    use_http: bool,
    host: str,
    port: int,
    allowed: tuple[str, ...],
    project: str | None,
) -> None:
    """Serve recall's memory tools over MCP (stdio unless --http).

    Claude Code: `claude mcp add recall -- recall mcp`. With --http, any address but 127.0.0.1, ::1
    or localhost needs a bearer token of at least 32 characters in RECALL_TOKEN. A server given a
    project (--project or RECALL_PROJECT) is bound to it.
    """
    if not use_http and any(
        ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
        for name in ("host", "port", "allowed")
    ):
        raise click.UsageError("--host, --port and --allow-host apply to --http only")
    from recall.http_guard import TOKEN_ENV, check_token  # here: every command's start imports this module

    token = os.environ.get(TOKEN_ENV) or None
    if use_http:
        check_token(host, token)
    from recall.mcp_server import create_server
    from recall.project import pinned_project

    bound = pinned_project(project)
    server = create_server(app.memory.bind(bound) if bound else app.memory)
    if use_http:
        serve_http(server, host, port, token, allowed)
    else:
        server.run()


def serve_http(server: MCPServer, host: str, port: int, token: str | None, allowed: tuple[str, ...]) -> None:
    """Bind first, then say where on stderr: with ``--port 0`` the line names the port chosen."""
    from mcp.server.transport_security import TransportSecuritySettings

    from recall.http_guard import MAX_BODY_BYTES, HttpGuard

    mcp_app = server.streamable_http_app(
        max_request_body_size=MAX_BODY_BYTES,
        # HttpGuard checks Host and Origin for every bind and spelling; the SDK's check knows three.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    auth = "bearer token required" if token else "no token"
    guarded = HttpGuard(mcp_app, token=token, names=allowed)
    listen(guarded, host, port, "recall mcp: Streamable HTTP on {url}/mcp (" + auth + ")")


def listen(app: Any, host: str, port: int, said: str) -> None:
    """Bind, say ``said`` (its ``{url}`` filled in) on stderr, then serve ``app`` (also `recall serve`)."""
    import socket

    import uvicorn

    address = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it a response written in two parts (headers, then
    # body) waits for the client's delayed ACK, 40 ms a call on Linux (bench/serve_load.py).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    shown = f"[{address}]" if ":" in address else address
    click.echo(said.replace("{url}", f"http://{shown}:{sock.getsockname()[1]}"), err=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


COMMANDS = [mcp]
