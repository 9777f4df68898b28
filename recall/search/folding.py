"""A session summary folds into its session's message in a result list (adr/0022).

A summary repeats its session's first request and decision lines, so a query that finds one often
finds the other, and the list shows the same words twice. When a message of the summary's session
is in the results, the summary leaves the list and the message carries its ref
(``extra["summary"]``); the freed place goes to the next result. A summary whose session has no
message in the list stays: it is then the only sign of that session.
"""

from __future__ import annotations

from collections.abc import Iterable

from recall.results import Hit
from recall.rowkinds import RecordKind

_SUMMARY = RecordKind.SESSION_SUMMARY.value
_MESSAGE = RecordKind.MESSAGE.value


def fold_summaries(ranked: Iterable[Hit], limit: int) -> list[Hit]:
    """The first ``limit`` results of ``ranked`` (best first) with summaries folded into their messages."""
    out: list[Hit] = []
    if limit <= 0:
        return out
    listed: dict[int, Hit] = {}  # session id -> its best message in the list
    summaries: dict[int, Hit] = {}  # session id -> its summary in the list, no message of it yet
    # The list is full as soon as it holds ``limit``: no further hit is asked for, so a lazy
    # ``ranked`` (keyword mode's) never reads rows it would not show.
    for hit in ranked:
        session = hit.extra.get("session_id")
        if hit.kind == _SUMMARY and isinstance(session, int):
            if session in listed:
                _attach(listed[session], hit)
                continue
            summaries[session] = hit
        elif hit.kind == _MESSAGE and isinstance(session, int) and session not in listed:
            listed[session] = hit
            summary = summaries.pop(session, None)
            if summary is not None:
                out.remove(summary)
                _attach(hit, summary)
        out.append(hit)
        if len(out) >= limit:
            break
    return out


def _attach(message: Hit, summary: Hit) -> None:
    message.extra["summary"] = f"{_SUMMARY}#{summary.id}"
