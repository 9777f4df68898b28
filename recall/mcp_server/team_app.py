"""`recall serve`'s HTTP app: the MCP server and the sync calls, each request as one team member.

In front of both, the guards of `recall mcp --http` (recall.http_guard: Host and Origin, 10 MB
bodies) and then the member's own bearer token, looked up by its digest (recall.pg.team). The
member rides along in the ASGI scope, so each MCP tool call gets that person's ``Memory``
(their projects only, writing as them) and each sync call runs as them. TLS is a reverse proxy's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings

from recall.errors import RecallError
from recall.http_guard import MAX_BODY_BYTES, HttpGuard, Refusal
from recall.mcp_server import RecallServer
from recall.team.server import dispatch

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from recall.memory import Memory
    from recall.pg.team import Member
    from recall.team.server import TeamServer

MEMBER = "recall.member"  # the ASGI scope key the authenticated member travels under


class TeamMcpServer(RecallServer):
    """The recall MCP server whose tools each run on the calling member's ``Memory``."""

    def __init__(self, team: TeamServer) -> None:
        super().__init__(team.memory)
        self.team = team

    def memory_for_request(self, request: Any) -> Memory:
        member = None if request is None else request.scope.get(MEMBER)
        if member is None:  # never reached behind TeamApp, which refuses requests without a member
            raise RecallError("this team server answers only requests carrying a member's token")
        return self.team.memory_for(member)


class TeamApp:
    """ASGI: Host/Origin guard, member token, then ``/sync/*`` here and everything else to MCP."""

    def __init__(self, team: TeamServer, *, names: tuple[str, ...] = ()) -> None:
        self.team = team
        mcp = TeamMcpServer(team)
        self._mcp = mcp.streamable_http_app(
            max_request_body_size=MAX_BODY_BYTES,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._guard = HttpGuard(self._mcp, token=None, names=names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._mcp(scope, receive, send)
            return
        refusal = self._guard.judge(scope["headers"])
        member = None
        if refusal is None:
            member = await anyio.to_thread.run_sync(self.team.authenticate, _bearer(scope["headers"]))
            if member is None:
                refusal = Refusal(
                    401,
                    "unauthorized",
                    "send Authorization: Bearer <your token> (`recall serve token add NAME --projects ...`)",
                    ((b"www-authenticate", b'Bearer realm="recall"'),),
                )
        if refusal is not None:
            if scope["type"] == "http":
                await _send(send, refusal.status, json.loads(refusal.body()), refusal.headers)
            return
        assert member is not None
        scope[MEMBER] = member
        if scope["type"] == "http" and str(scope.get("path", "")).startswith("/sync/"):
            await self._sync(scope, receive, send, member)
        else:
            await self._mcp(scope, receive, send)

    async def _sync(self, scope: Scope, receive: Receive, send: Send, member: Member) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_BODY_BYTES:
                await _send(
                    send, 413, {"error": "too_large", "error_description": "at most 10 MB per request"}
                )
                return
            if not message.get("more_body"):
                break
        path = scope["path"] + (
            "?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else ""
        )
        try:
            parsed = json.loads(body) if body else None
            answer = await anyio.to_thread.run_sync(
                dispatch, self.team, member, scope["method"], path, parsed
            )
        except (ValueError, RecallError) as exc:
            await _send(send, 400, {"error": "bad_request", "error_description": str(exc)})
            return
        await _send(send, 200, answer)


def _bearer(headers: Any) -> str | None:
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


async def _send(send: Send, status: int, data: Any, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = json.dumps(data, default=str).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def team_app(team: TeamServer, names: tuple[str, ...] = ()) -> ASGIApp:
    return TeamApp(team, names=names)
