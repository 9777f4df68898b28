"""`recall serve`: the team server on PostgreSQL (MCP over HTTP plus sync), and its tokens.

`recall serve --db postgresql://... [--host] [--port]` serves MCP at /mcp and sync at /sync/*;
every request carries a member's token (`recall serve token add NAME --projects a,b` prints a new
one as its last line; `list`, `revoke NAME`). Only a digest of each token is stored. TLS is left
to a reverse proxy in front (README). Nothing heavy is imported until a command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app

if TYPE_CHECKING:
    from recall.team.server import TeamServer

db_option = click.option(
    "--db",
    "db_url",
    envvar="RECALL_DB",
    help="The PostgreSQL database: postgresql://user@host/name (env RECALL_DB).",
)


def _team(app: AppContext, db_url: str | None) -> TeamServer:
    from recall.memory import Memory
    from recall.team.server import TeamServer

    memory = Memory(db_url) if db_url else app.memory
    return TeamServer(memory)


@click.group(invoke_without_command=True)
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8766, show_default=True, help="0: any free port."
)
@click.option(
    "--allow-host",
    "allowed",
    multiple=True,
    metavar="NAME",
    help="Also answer requests addressed to this name.",
)
@pass_app
@click.pass_context
def serve(
    ctx: click.Context, app: AppContext, db_url: str | None, host: str, port: int, allowed: tuple[str, ...]
) -> None:
    """Serve a team memory on PostgreSQL: MCP at /mcp and sync at /sync, one token per person.

    Put a reverse proxy with TLS in front of it when it is reached over a network.
    """
    ctx.meta["serve_db"] = db_url
    if ctx.invoked_subcommand is not None:
        return
    from recall.cli.mcp_cmd import listen
    from recall.mcp_server.team_app import team_app

    team = _team(app, db_url)
    team.memory.open()  # migrate and connect before saying where we listen
    tokens = len([t for t in team.tokens() if t["revoked_at"] is None])
    listen(
        team_app(team, allowed),
        host,
        port,
        "recall serve: team server on {url}/mcp, sync at {url}/sync " + f"({tokens} live tokens)",
    )


@serve.group()
def token() -> None:
    """Tokens: one per person, opening the projects named."""


@token.command("add")
@click.argument("name")
@click.option(
    "--projects", required=True, help="Comma-separated projects the token opens ('*': every project)."
)
@db_option
@pass_app
@click.pass_context
def token_add(ctx: click.Context, app: AppContext, name: str, projects: str, db_url: str | None) -> None:
    """Make a token for NAME; it is printed once, as the last line, and stored only as a digest."""
    from recall.pg.team import parse_projects

    team = _team(app, db_url or ctx.meta.get("serve_db"))
    scopes = parse_projects(projects)
    made = team.add_token(name, scopes)
    click.echo(f"token for {name.strip()} (projects: {', '.join(scopes)}); it is shown only now:", err=True)
    click.echo(made)


@token.command("list")
@db_option
@json_option
@pass_app
@click.pass_context
def token_list(ctx: click.Context, app: AppContext, db_url: str | None, as_json: bool) -> None:
    """The tokens issued: name, projects, when made and revoked (never the token)."""
    rows = _team(app, db_url or ctx.meta.get("serve_db")).tokens()
    if as_json:
        emit_json({"tokens": rows})
        return
    for row in rows:
        state = f"revoked {row['revoked_at']}" if row["revoked_at"] else "live"
        click.echo(f"{row['name']}\t{','.join(row['projects'])}\t{row['created_at']}\t{state}")
    if not rows:
        click.echo("no tokens yet: recall serve token add NAME --projects a,b")


@token.command("revoke")
@click.argument("name")
@db_option
@pass_app
@click.pass_context
def token_revoke(ctx: click.Context, app: AppContext, name: str, db_url: str | None) -> None:
    """Revoke every live token of NAME; their next request gets 401."""
    count = _team(app, db_url or ctx.meta.get("serve_db")).revoke(name)
    click.echo(f"revoked {count} token{'s' if count != 1 else ''} of {name}")


COMMANDS = [serve]
