"""The pages a person reads: each one asks ``recall.Memory`` once or twice and fills a template.

Handlers are plain functions: Starlette runs them in its thread pool, so a slow query never stalls
the server's event loop. A ``project`` parameter names the scope (``*`` for every project); without
one, the project ``recall ui`` was started for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from recall.errors import InvalidInput, ModelUnavailable, RecallError
from recall.kinds import Kind, Ref
from recall.web.charts import activity_chart, bar_width
from recall.web.render import page

if TYPE_CHECKING:
    from recall.memory import Memory
    from recall.results import SearchResults
    from recall.session_view import LinkedRecord

MODES: tuple[Literal["hybrid", "keyword", "semantic"], ...] = ("hybrid", "keyword", "semantic")
SEARCH_KINDS = ("decision", "learning", "breadcrumb", "session_summary", "message")
SESSIONS_PER_PAGE = 50
SEARCH_LIMIT = 30
REVIEW_LIMIT = 100
CONNECTIONS_LIMIT = 20


def overview(request: Request) -> Response:
    scope = _scope(request)
    data = _memory(request).overview(scope)
    return page(
        request, "overview.html", {"scope": scope, "overview": data, "chart": activity_chart(data.activity)}
    )


def sessions(request: Request) -> Response:
    scope = _scope(request)
    listed = _memory(request).list(
        "session", project=scope, limit=SESSIONS_PER_PAGE, cursor=request.query_params.get("cursor") or None
    )
    return page(request, "sessions.html", {"scope": scope, "listed": listed})


def session(request: Request) -> Response:
    params = request.query_params
    view = _memory(request).session_view(request.path_params["id"], page=_number(params.get("page"), 1))
    return page(
        request,
        "session.html",
        {
            "view": view,
            "show_thinking": params.get("thinking") == "shown",
            "show_tools": params.get("tools") == "shown",
            "sourced": _sourced(view.records),
        },
    )


def message(request: Request) -> Response:
    found = _memory(request).locate_message(request.path_params["id"])
    url = f"/session/{found.session_id}?page={found.page}#message-{found.message_id}"
    return RedirectResponse(url, status_code=303)


def row(request: Request) -> Response:
    ref = Ref.parse(f"{request.path_params['kind']}#{request.path_params['id']}")
    if ref.kind in (Kind.SESSION, Kind.MESSAGE):  # they have pages of their own
        return RedirectResponse(f"/{ref.kind.value}/{ref.id}", status_code=303)
    memory = _memory(request)
    record = memory.get(ref)
    successors: tuple[Any, ...] = ()
    if (
        record.kind.value == "decision"
        and record.data["status"] == "active"
        and not request.app.state.read_only
    ):
        listed = memory.list("decision", project=record.project, status="active", limit=500)
        successors = tuple(other for other in listed.records if other.id != record.id)
    return page(request, "row.html", {"record": record, "successors": successors})


def decisions(request: Request) -> Response:
    scope = _scope(request)
    log = _memory(request).decision_log(scope, page=_number(request.query_params.get("page"), 1))
    changed = _number(request.query_params.get("changed"), 0)
    return page(request, "decisions.html", {"scope": scope, "log": log, "changed": changed})


def search(request: Request) -> Response:
    params = request.query_params
    scope, text = _scope(request), params.get("q", "")
    mode, kind = params.get("mode") or "hybrid", params.get("kind") or None
    context: dict[str, Any] = {"scope": scope, "q": text, "mode": mode, "kind": kind or "", "modes": MODES,
                               "kinds": SEARCH_KINDS, "results": None, "error": None}  # fmt: skip
    status = 200
    if text.strip():
        try:
            chosen = next((known for known in MODES if known == mode), None)
            if chosen is None:
                raise InvalidInput(f"unknown search mode {mode!r}; use one of: {', '.join(MODES)}")
            results = _memory(request).search(text, mode=chosen, project=scope, kind=kind, limit=SEARCH_LIMIT)
            context.update(results=results, bars=_bars(results))
        except RecallError as exc:
            status = 503 if isinstance(exc, ModelUnavailable) else 400
            context["error"] = str(exc)
    return page(request, "search.html", context, status=status)


def review(request: Request) -> Response:
    scope = _scope(request)
    items = _memory(request).review(project=scope, limit=REVIEW_LIMIT)
    return page(request, "review.html", {"scope": scope, "items": items, "limit": REVIEW_LIMIT})


def connections(request: Request) -> Response:
    scope, name = _scope(request), request.query_params.get("name", "").strip()
    found = _memory(request).connections(name, project=scope, limit=CONNECTIONS_LIMIT) if name else None
    return page(request, "connections.html", {"scope": scope, "name": name, "found": found})


def health(request: Request) -> Response:
    report, running = request.app.state.health.report()
    return page(request, "health.html", {"report": report, "running": running})


def forget_confirm(request: Request) -> Response:
    record = _memory(request).get(request.query_params.get("ref", ""))
    return page(request, "forget.html", {"record": record})


# -- helpers ---------------------------------------------------------------------------------------


def _memory(request: Request) -> Memory:
    memory: Memory = request.app.state.memory
    return memory


def _scope(request: Request) -> str | None:
    """The project asked for (``*``: every project), else the one the server was started for."""
    asked = request.query_params.get("project", "").strip()
    default: str | None = request.app.state.project
    return asked or default


def _sourced(records: Sequence[LinkedRecord]) -> dict[int, list[LinkedRecord]]:
    """Message id → the records it is a source of, to mark them on the page."""
    out: dict[int, list[LinkedRecord]] = {}
    for record in records:
        for message_id in record.sources:
            out.setdefault(message_id, []).append(record)
    return out


def _number(value: str | None, default: int) -> int:
    if value is None or value == "":
        return default
    if not value.isdigit():
        raise InvalidInput(f"expected a whole number, got {value!r}")
    return int(value)


def _bars(results: SearchResults) -> list[dict[str, float]]:
    """Each hit's score parts as bar widths. Semantic and hybrid scores and cosines lie in 0-1; a
    keyword score (bm25) has no fixed scale, so it is drawn against the best one of this search."""
    hits = results.hits
    best_keyword = max((hit.keyword_score or 0.0 for hit in hits), default=0.0)
    best = best_keyword if results.mode == "keyword" else 1.0
    return [
        {
            "score": bar_width(hit.score, best),
            "keyword": bar_width(hit.keyword_score, best_keyword),
            "meaning": bar_width(hit.cosine, 1.0),
        }
        for hit in hits
    ]
