"""`recall ui`: serve the web view on 127.0.0.1, bound before it says where, ready in well under a second.

The socket is bound first, so ``--port 0`` can name the port it got, and a port in use is one line.
The web package (Starlette, Jinja2) is imported only when the command runs; the database opens at
the first page, not at start.
"""

from __future__ import annotations

import json
import socket

import click

from recall.cli.context import AppContext, json_option, pass_app, project_option

HOST = "127.0.0.1"
DEFAULT_PORT = 8766


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="The port on 127.0.0.1 (0: any free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the overview in your web browser.")
@click.option("--read-only", is_flag=True, help="Show everything, change nothing: no action is served.")
@project_option
@json_option
@pass_app
def ui(
    app: AppContext, port: int, open_browser: bool, read_only: bool, project: str | None, as_json: bool
) -> None:
    """Browse sessions, decisions, search and health in a web browser, on this machine only.

    Serves http://127.0.0.1:8766/ until interrupted (Ctrl-C). Pages answer only requests addressed
    to an IP address or localhost; every action carries a token a page on another site cannot know.
    """
    import uvicorn

    from recall.web import create_app

    sock = _bind(port)
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    if as_json:
        click.echo(json.dumps({"url": url, "read_only": read_only, "database": str(app.memory.path)}))
    else:
        mode = "read-only" if read_only else "actions on"
        click.echo(f"recall ui: {url} ({mode}; {app.memory.path}); Ctrl-C stops it", err=True)
    web = create_app(app.memory, project=project, read_only=read_only, warm=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(web, log_level="warning"))
    server.run(sockets=[sock])


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        hint = "; pick another with --port, or --port 0 for any free one"
        raise click.ClickException(f"cannot listen on {HOST}:{port}: {exc.strerror}{hint}") from exc
    sock.listen(128)
    return sock


COMMANDS = [ui]
