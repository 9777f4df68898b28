"""What a person can change from the web view: a decision's status, an extracted record's review,
forgetting a row.

Every action is a POST carrying the page's CSRF token and, when the browser sends one, an
``Origin`` naming this server (recall.web.csrf); each calls ``recall.Memory`` once. With
``--read-only`` none of these routes exists.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from recall.errors import InvalidInput
from recall.web.csrf import FIELD
from recall.web.render import page, query

if TYPE_CHECKING:
    from recall.memory import Memory

Action = Callable[[Request], Awaitable[Response]]


def guarded(handler: Callable[[Request, FormData], Response]) -> Action:
    """Check origin and token, then run ``handler`` in the thread pool (Memory's calls block)."""

    async def action(request: Request) -> Response:
        form = await request.form()
        refusal = request.app.state.csrf.refusal(request, str(form.get(FIELD, "")))
        if refusal is not None:
            return page(request, "error.html", {"status": 403, "message": refusal}, status=403)
        response: Response = await run_in_threadpool(handler, request, form)
        return response

    return action


def _decision_moved(request: Request, form: FormData, move: str) -> Response:
    memory: Memory = request.app.state.memory
    ref = str(form.get("ref", ""))
    if move == "supersede":
        by = str(form.get("by", "")).strip()
        moved = memory.supersede(ref, by=by or None)
    else:
        moved = memory.revert(ref)
    url = query("/decisions", project=moved.project, changed=moved.id) + f"#decision-{moved.id}"
    return RedirectResponse(url, status_code=303)


def _supersede(request: Request, form: FormData) -> Response:
    return _decision_moved(request, form, "supersede")


def _revert(request: Request, form: FormData) -> Response:
    return _decision_moved(request, form, "revert")


def _reviewed(request: Request, form: FormData, verdict: str) -> Response:
    """Accept or reject the records named, then back to the queue they were in."""
    memory: Memory = request.app.state.memory
    refs = [str(ref) for ref in form.getlist("ref")]
    if not refs:
        raise InvalidInput("tick at least one record to accept or reject")
    if verdict == "accept":
        memory.accept(refs)
    else:
        memory.reject(refs)
    return RedirectResponse(query("/review", project=str(form.get("project", ""))), status_code=303)


def _accept(request: Request, form: FormData) -> Response:
    return _reviewed(request, form, "accept")


def _reject(request: Request, form: FormData) -> Response:
    return _reviewed(request, form, "reject")


def _forget(request: Request, form: FormData) -> Response:
    memory: Memory = request.app.state.memory
    report = memory.forget(str(form.get("ref", "")))
    return page(request, "forgotten.html", {"report": report})


supersede = guarded(_supersede)
revert = guarded(_revert)
forget = guarded(_forget)
accept = guarded(_accept)
reject = guarded(_reject)
