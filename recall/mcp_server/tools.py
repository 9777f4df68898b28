"""recall's MCP tools: each a small function over the library API (``recall.Memory``).

A tool reads its ``Memory`` from the server (``ctx``), calls one API method and returns the result
as structured content (its model in recall.mcp_server.models) plus readable text. ``kind`` is the
word for what a row is; the Recall tool shape's own words keep working (``type`` in memory_add,
``table`` in memory_get and memory_search, and its kind names such as ``decisions`` or ``loa``).
An id is a number with a kind, or a ``kind#id`` ref on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from recall.errors import InvalidInput, NotFound, RecallError
from recall.mcp_server import models as out
from recall.mcp_server.render import (
    connections_text,
    missing,
    record_text,
    records_text,
    review_text,
    search_text,
    stats_text,
)
from recall.sources import DUMP_SOURCES

if TYPE_CHECKING:
    from collections.abc import Callable

    from recall.brief import BriefItem
    from recall.memory import Memory
    from recall.profile import Profile
    from recall.results import Hit, Record

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
EDITING = ToolAnnotations(  # an append twice appends twice
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

KINDS_TEXT = "decision, learning, breadcrumb, session_summary, message, note or session"
ProjectArg = Annotated[
    str | None,
    Field(
        description="Project name. Default: the server's project (RECALL_PROJECT, else its folder); '*' for every project."
    ),
]
KindArg = Annotated[str | None, Field(description=f"The row's kind: {KINDS_TEXT}.")]
TableArg = Annotated[str | None, Field(description="Same as kind (the Recall tool shape's name for it).")]
IdArg = Annotated[
    int | str, Field(description="The row's id (give kind too), or its ref such as 'decision#3'.")
]
Limit = Annotated[int, Field(ge=1, le=100)]
TagsArg = Annotated[
    list[str] | None,
    Field(description="Only decisions, learnings and breadcrumbs carrying ALL of these tags."),
]
ChangeProjectArg = Annotated[
    str | None,
    Field(
        description="The row's project; '*' lets a server bound to one project change another project's rows."
    ),
]
DumpSource = Literal[DUMP_SOURCES]  # type: ignore[valid-type]  # every host recall reads, grok, jcode, omp, mcp


@dataclass(frozen=True, slots=True)
class ToolSpec:
    fn: Callable[..., Any]
    title: str
    annotations: ToolAnnotations


def memory(ctx: Context) -> Memory:
    """The ``Memory`` of the server answering this call."""
    server: Any = ctx.mcp_server
    chooser = getattr(server, "memory_for_request", None)
    if chooser is not None:  # a team server: the calling member's memory (recall.mcp_server.team_app)
        chosen: Memory = chooser(ctx.request_context.request)
        return chosen
    found: Memory = server.memory
    return found


def reply(result: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=result.model_dump(mode="json")
    )


def one_of(**given: str | None) -> str | None:
    """The one value given among synonyms (``kind``, ``table``, ``type``); two that differ are refused."""
    values = {name: value for name, value in given.items() if value is not None}
    if len(set(values.values())) > 1:
        raise InvalidInput(f"{' and '.join(values)} name the same thing; give one of them")
    return next(iter(values.values()), None)


@contextmanager
def errors() -> Iterator[None]:
    """Core errors reach the agent as tool errors carrying the core's own, actionable message."""
    try:
        yield
    except RecallError as exc:
        raise ToolError(str(exc)) from exc


def hit_model(hit: Hit) -> out.SearchHit:
    extra = {key: value for key, value in hit.extra.items() if key != "detail"}
    return out.SearchHit(
        ref=hit.ref,
        kind=hit.kind,
        id=hit.id,
        project=hit.project,
        created_at=str(hit.created_at),
        provenance=hit.provenance,
        score=round(hit.score, 4),
        preview=hit.preview,
        keyword_rank=hit.keyword_rank,
        cosine=None if hit.cosine is None else round(hit.cosine, 4),
        extra=extra,
    )


def record_model(record: Record | None) -> out.Record | None:
    return None if record is None else out.Record.model_validate(record.to_dict())


def entries(items: tuple[BriefItem, ...]) -> list[out.BriefEntry]:
    return [out.BriefEntry.model_validate(item) for item in items]


# -- finding ------------------------------------------------------------------------------------


def memory_search(
    ctx: Context,
    query: Annotated[str, Field(description="Words to find; any text is safe.")],
    project: ProjectArg = None,
    kind: Annotated[str | None, Field(description="Only this kind of record.")] = None,
    table: TableArg = None,
    bias_type: Annotated[str | None, Field(description="Prefer this kind without excluding others.")] = None,
    limit: Limit = 10,
    tags: TagsArg = None,
) -> Annotated[CallToolResult, out.SearchResult]:
    """Find stored memory by keywords: decisions, learnings, breadcrumbs, session summaries and past \
messages. Use it when you know words the memory would contain (a file or function name, an error \
message, a library). Deliberate syntax works too: AND, OR, NOT, prefix*, "exact phrase". With no \
keyword hit and no kind filter it retries as a meaning search. For questions in your own words use \
memory_hybrid_search; to brief a subagent use context_for_agent; at session start use memory_recall."""
    with errors():
        found = memory(ctx).search(
            query, mode="keyword", project=project, kind=one_of(kind=kind, table=table), bias=bias_type,
            limit=limit, retry_as_hybrid=True, tags=tags,
        )  # fmt: skip
    result = out.SearchResult(
        query=found.query,
        project=found.project,
        mode=found.mode,
        retried_as_hybrid=found.retried_as_hybrid,
        results=[hit_model(hit) for hit in found.hits],
    )
    return reply(result, search_text(result))


def memory_hybrid_search(
    ctx: Context,
    query: Annotated[str, Field(description="A question or description in plain words.")],
    project: ProjectArg = None,
    limit: Limit = 10,
    min_score: Annotated[float, Field(ge=0, le=1, description="Drop results scoring below this.")] = 0,
    tags: TagsArg = None,
) -> Annotated[CallToolResult, out.SearchResult]:
    """Find memory by meaning and keywords together. Scores run from 0 to 1 relative to this \
query's best matches (1: the best keyword and the best meaning match); each hit's cosine is its \
absolute similarity. Use it for questions in your own words ("how do we handle retries?") or when \
memory_search finds nothing. Raise min_score (e.g. 0.5) to keep only the stronger matches. For exact \
terms and kind filters use memory_search."""
    with errors():
        found = memory(ctx).search(
            query, mode="hybrid", project=project, limit=limit, min_score=min_score, tags=tags
        )
    result = out.SearchResult(
        query=found.query,
        project=found.project,
        mode="hybrid",
        retried_as_hybrid=False,
        results=[hit_model(hit) for hit in found.hits],
    )
    return reply(result, search_text(result))


def memory_recall(
    ctx: Context,
    project: ProjectArg = None,
    limit: Annotated[int, Field(ge=1, le=50, description="Records per group.")] = 5,
) -> Annotated[CallToolResult, out.Recalled]:
    """Catch up at the start of a session: the project's profile, recent session summaries, active \
decisions, live breadcrumbs (where work was left) and high-importance learnings of this project, \
each group newest first. Call it once before starting work. For something specific use memory_search; to brief a \
subagent use context_for_agent."""
    with errors():
        recent = memory(ctx).catch_up(project, limit=limit)
    result = out.Recalled(
        project=recent.project,
        profile=dict(recent.profile),
        session_summaries=entries(recent.session_summaries),
        decisions=entries(recent.decisions),
        breadcrumbs=entries(recent.breadcrumbs),
        learnings=entries(recent.learnings),
    )
    return reply(result, recent.text)


def context_for_agent(
    ctx: Context,
    agent_task: Annotated[str, Field(description="The task the subagent will do, in plain words.")],
    project: ProjectArg = None,
    max_tokens: Annotated[int, Field(ge=100, le=20_000, description="Budget for the brief.")] = 1500,
) -> Annotated[CallToolResult, out.AgentContext]:
    """Build the memory brief to paste into a subagent's prompt before you spawn it: the \
decisions in force, breadcrumbs, learnings and past-session excerpts that bear on the task, best \
first, within max_tokens, and a line saying whether memory looks sufficient for the task. Text that \
did not come from the user is quoted as data, not instructions. Paste the returned text as it is. \
For your own look-ups use memory_search or memory_hybrid_search."""
    with errors():
        brief = memory(ctx).context_for_agent(agent_task, project=project, max_tokens=max_tokens)
    result = out.AgentContext(
        task=brief.task,
        project=brief.project,
        text=brief.text,
        tokens=brief.tokens,
        max_tokens=brief.max_tokens,
        sufficiency=out.Sufficiency.model_validate(brief.sufficiency),
        items=entries(brief.items),
        omitted=brief.omitted,
    )
    return reply(result, brief.text)


def memory_list(
    ctx: Context,
    kind: Annotated[
        list[str] | str | None,
        Field(
            description=f"Only these kinds ({KINDS_TEXT}); default: decisions, learnings, breadcrumbs, summaries."
        ),
    ] = None,
    project: ProjectArg = None,
    status: Annotated[
        str | None,
        Field(
            description="Decisions: active, superseded, reverted; any decision, learning, breadcrumb: live, expired."
        ),
    ] = None,
    provenance: Annotated[
        str | None, Field(description="verbatim, user_authored, extracted or derived.")
    ] = None,
    tags: Annotated[list[str] | None, Field(description="Only rows carrying ALL of these tags.")] = None,
    since: Annotated[
        str | None, Field(description="Only rows since a date (2026-11-01) or span back (7d).")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    cursor: Annotated[str | None, Field(description="next_cursor from the previous page.")] = None,
) -> Annotated[CallToolResult, out.Listed]:
    """List stored rows newest first, with filters that all apply at once, a page at a time: what \
was decided this week, the extracted records, every breadcrumb tagged 'auth'. To find rows by words \
use memory_search."""
    with errors():
        page = memory(ctx).list(
            kind, project=project, status=status, provenance=provenance, tags=tags, since=since, limit=limit,
            cursor=cursor,
        )  # fmt: skip
    rows = [record.to_dict() for record in page.records]
    result = out.Listed(
        records=[out.Record.model_validate(row) for row in rows], next_cursor=page.next_cursor
    )
    return reply(result, records_text(rows, page.next_cursor))


def memory_get(
    ctx: Context,
    id: IdArg,
    kind: KindArg = None,
    table: TableArg = None,
) -> Annotated[CallToolResult, out.RecordResult]:
    """Read one row in full by its ref (e.g. 'learning#1') or kind and id (ids come from search, \
memory_recall, memory_list or context_for_agent); search previews are cut, this is not. For a \
session summary with its session's details use loa_show. Answers found: false when there is no such row."""
    from recall.kinds import Ref

    with errors():
        ref = Ref.parse(id, one_of(kind=kind, table=table))
        record = memory(ctx).find(ref)
    row = record.to_dict() if record else None
    result = out.RecordResult(
        found=record is not None, ref=str(ref), kind=ref.kind.value, id=ref.id, record=record_model(record)
    )
    return reply(result, record_text(str(ref), row))


def loa_show(
    ctx: Context,
    id: Annotated[int | str, Field(description="The session summary's id or ref (session_summary#id).")],
) -> Annotated[CallToolResult, out.SessionSummaryShown]:
    """Read one session summary in full (title, first request, files touched, commands run, lines \
stating decisions or learnings) with its session's details. Ids come from memory_recall or from \
search results of kind session_summary. Answers found: false when there is no such summary."""
    from recall.kinds import Kind, Ref

    with errors():
        ref = Ref.parse(id, Kind.SESSION_SUMMARY, (Kind.SESSION_SUMMARY,))
        summary = memory(ctx).find(ref)
        session_id = summary.data.get("session_id") if summary else None
        session = memory(ctx).find(Ref(Kind.SESSION, session_id)) if session_id is not None else None
    result = out.SessionSummaryShown(
        found=summary is not None,
        ref=str(ref),
        id=ref.id,
        summary=record_model(summary),
        session=record_model(session),
    )
    return reply(result, record_text(str(ref), summary.to_dict() if summary else None))


def memory_stats(ctx: Context) -> Annotated[CallToolResult, out.Stats]:
    """What the memory holds: counts per kind and project, the database path and size, the \
embedding model with embedded and pending rows, and whether the keyword index is complete. Use it \
to diagnose empty or odd search results; to find records use memory_search."""
    with errors():
        data = memory(ctx).stats()
    result = out.Stats.model_validate(data.to_dict())
    return reply(result, stats_text(result))


# -- writing ------------------------------------------------------------------------------------


def memory_add(
    ctx: Context,
    content: Annotated[
        str, Field(description="The decision, learning or state of work, in one or two sentences.")
    ],
    kind: Annotated[str | None, Field(description="decision, learning or breadcrumb.")] = None,
    type: Annotated[
        str | None, Field(description="Same as kind (the Recall tool shape's name for it).")
    ] = None,
    detail: Annotated[str | None, Field(description="Why (for decisions), or background.")] = None,
    project: Annotated[str | None, Field(description="Project name. Default: the server's project.")] = None,
    tags: Annotated[list[str] | None, Field(description="Short topic words, e.g. ['sqlite', 'ci'].")] = None,
    confidence: Annotated[
        Literal["high", "medium", "low"] | None, Field(description="Decisions and learnings only.")
    ] = None,
    importance: Annotated[int, Field(ge=1, le=10, description="10 = must not be forgotten.")] = 5,
    valid_until: Annotated[
        str | None,
        Field(
            description="When it expires and leaves search and the briefs, e.g. 2026-12-31, "
            "2026-12-31T18:00, 8h, 3d, 1w (breadcrumbs especially)."
        ),
    ] = None,
    source: Annotated[
        str | None, Field(description="Where it came from: a URL, a ticket, a document (at most 4 KB).")
    ] = None,
    metadata: Annotated[
        dict[str, Any] | None, Field(description="A small JSON object kept with it (at most 4 KB).")
    ] = None,
    force: Annotated[
        bool, Field(description="Add even when a live record of the same kind already says the same.")
    ] = False,
) -> Annotated[CallToolResult, out.Added]:
    """Remember something for later sessions: a decision (what was settled; put the why in detail), \
a learning (a gotcha, fix or fact that will matter again) or a breadcrumb (where work was left; set \
valid_until so it expires). Returns the new ref and what the scrubber redacted; when a live record of \
the same kind already says it, that record is refreshed instead and returned with refreshed set \
(force=true adds anyway). To \
correct a record use memory_update, to replace a decision add the new one and supersede the old one \
with decision_update."""
    with errors():
        chosen = one_of(kind=kind, type=type)
        if chosen is None:
            raise InvalidInput("say what to remember: kind is decision, learning or breadcrumb")
        record = memory(ctx).add(
            chosen, content, project=project, detail=detail, tags=tags, confidence=confidence,
            importance=importance, valid_until=valid_until, source=source, metadata=metadata, force=force,
        )  # fmt: skip
    result = out.Added(
        ref=str(record.ref),
        kind=record.kind.value,
        id=record.id,
        record=record_model(record),  # type: ignore[arg-type]
        redacted=dict(record.redacted),
        refreshed=out.Likeness.model_validate(record.refreshed) if record.refreshed is not None else None,
    )
    if record.refreshed is None:
        return reply(result, f"stored {record.ref} in project {record.project}{redacted_text(record)}")
    alike = ", ".join(f"{key} {value}" for key, value in record.refreshed.items() if value is not None)
    text = (
        f"not added: {record.ref} in project {record.project} already says this ({alike}); it was "
        f"refreshed instead. Its content: {record.data.get('content')!r}. Pass force=true to add anyway."
    )
    return reply(result, text)


def redacted_text(record: Record) -> str:
    """The scrubber's work, said where the agent reads the answer (the Recall tool shape promises it)."""
    if not record.redacted:
        return ""
    return "; redacted before storing: " + ", ".join(f"{n} {kind}" for kind, n in record.redacted.items())


def memory_update(
    ctx: Context,
    id: IdArg,
    kind: KindArg = None,
    table: TableArg = None,
    content: Annotated[str | None, Field(description="New text.")] = None,
    detail: Annotated[str | None, Field(description="New detail; an empty string clears it.")] = None,
    tags: Annotated[list[str] | None, Field(description="Replaces all tags.")] = None,
    importance: Annotated[int | None, Field(ge=1, le=10)] = None,
    valid_until: Annotated[
        str | None,
        Field(description="New expiry (ISO or 8h, 3d); null removes it; leave it out to keep it."),
    ] = "",
    source: Annotated[str | None, Field(description="Where it came from; an empty string clears it.")] = None,
    metadata: Annotated[
        dict[str, Any] | None, Field(description="Replaces the metadata object (at most 4 KB).")
    ] = None,
    project: ChangeProjectArg = None,
) -> Annotated[CallToolResult, out.RecordResult]:
    """Correct a decision, learning or breadcrumb in place: only the fields you pass change; \
created_at is kept, updated_at refreshed, and the record is re-indexed. Use it to fix wording, tags \
or importance, or to extend or clear an expiry. When a decision is replaced by a new one, add the new one \
and use decision_update so the history stays. Answers found: false when there is no such record."""
    from recall.kinds import TYPED, Ref

    with errors():
        ref = Ref.parse(id, one_of(kind=kind, table=table), TYPED)
        try:
            record: Record | None = memory(ctx).update(
                ref, content=content, detail=detail, tags=tags, importance=importance,
                valid_until="none" if valid_until is None else valid_until or None, source=source,
                metadata=metadata, project=project,
            )  # fmt: skip
        except NotFound:
            record = None
    result = out.RecordResult(
        found=record is not None, ref=str(ref), kind=ref.kind.value, id=ref.id, record=record_model(record)
    )
    return reply(result, f"{ref} corrected" if record else missing(str(ref)))


def memory_forget(
    ctx: Context,
    id: IdArg,
    kind: Annotated[
        str | None,
        Field(
            description=f"What to forget: {KINDS_TEXT}; a session takes its messages, summary and subagents."
        ),
    ] = None,
    table: TableArg = None,
    project: ChangeProjectArg = None,
) -> Annotated[CallToolResult, out.Forgotten]:
    """Forget one row for good (no undo): a decision, learning, breadcrumb, session summary, \
message or whole session. Its text leaves every file recall keeps, and a forgotten session or \
message is never imported again. A decision that was replaced should be superseded with \
decision_update instead, so its history stays. Answers found: false when there is no such row."""
    with errors():
        report = memory(ctx).forget(id, one_of(kind=kind, table=table), project=project)
    result = out.Forgotten(
        found=report.found,
        ref=report.ref,
        kind=report.kind,
        id=report.id,
        deleted=report.deleted,
        skipped_on_import=report.skipped_on_import,
        source_path=report.source_path,
    )
    return reply(result, report.message if report.found else missing(report.ref))


def memory_forget_many(
    ctx: Context,
    tags: Annotated[list[str] | None, Field(description="Records carrying all of these tags.")] = None,
    older_than_days: Annotated[
        float | None, Field(ge=1, description="Records created more than this many days ago.")
    ] = None,
    project: ProjectArg = None,
    confirm: Annotated[
        int | None, Field(description="The number of matches a call without confirm reported.")
    ] = None,
) -> Annotated[CallToolResult, out.ForgottenMany]:
    """Delete the decisions, learnings and breadcrumbs that match ALL the filters (every tag \
listed). A call without confirm deletes nothing: it answers how many match, with a sample; call \
again with confirm set to that number to delete them. Every project takes project='*'. No undo: for \
one row use memory_forget."""
    with errors():
        report = memory(ctx).forget_many(
            tags=tags, older_than_days=older_than_days, project=project, confirm=confirm
        )
    result = out.ForgottenMany(
        matched=report.matched,
        confirmed=report.confirmed,
        deleted=report.deleted,
        total=report.total,
        sample=[out.ForgetMatch.model_validate(match) for match in report.sample],
    )
    return reply(result, report.message)


def decision_update(
    ctx: Context,
    id: Annotated[int | str, Field(description="The decision's id or ref (decision#id).")],
    action: Annotated[
        Literal["supersede", "revert"],
        Field(description="supersede: replaced by a newer decision; revert: undone, nothing replaces it."),
    ],
    superseded_by: Annotated[
        int | str | None, Field(description="supersede only: the id or ref of the decision that replaces it.")
    ] = None,
    project: ChangeProjectArg = None,
) -> Annotated[CallToolResult, out.DecisionChanged]:
    """Move an active decision through its lifecycle: supersede it (a newer decision replaces it; \
pass that decision's id in superseded_by) or revert it (undone, nothing replaces it). Only active \
decisions change. The decision stays stored and searchable but ranks lower and leaves the \
session-start brief. To fix a decision's wording use memory_update. Answers found: false when there \
is no such decision."""
    from recall.kinds import Kind, Ref

    with errors():
        ref = Ref.parse(id, Kind.DECISION, (Kind.DECISION,))
        if action == "revert" and superseded_by is not None:
            raise InvalidInput(
                "superseded_by goes with action=supersede; a reverted decision has no successor"
            )
        api = memory(ctx)
        if api.find(ref) is None:
            record = None
        elif action == "supersede":
            record = api.supersede(ref, by=superseded_by, project=project)
        else:
            record = api.revert(ref, project=project)
    result = out.DecisionChanged(
        found=record is not None, ref=str(ref), id=ref.id, action=action, record=record_model(record)
    )
    done = {"supersede": "superseded", "revert": "reverted"}[action]
    return reply(result, f"{ref} {done}" if record else missing(str(ref)))


def memory_dump(
    ctx: Context,
    title: Annotated[str, Field(description="A short title for the session.")],
    project: Annotated[
        str | None, Field(description="Project name. Default: from the session's folder.")
    ] = None,
    session_id: Annotated[
        str | None, Field(description="The host's session id; reuse it to add to the same session.")
    ] = None,
    source: Annotated[
        DumpSource,
        Field(
            description="claude, cursor, codex, opencode, pi, gemini: recall reads that host's own "
            "transcript; mcp (your own session), grok, jcode, omp: the messages you pass."
        ),
    ] = "mcp",
    messages: Annotated[
        list[out.DumpMessage] | None,
        Field(description="source=mcp, grok, jcode or omp only: the session's messages, in order."),
    ] = None,
) -> Annotated[CallToolResult, out.Dumped]:
    """Store the session that is ending, with a summary, so later sessions can find it. With \
source=mcp (or grok, jcode, omp, hosts recall has no reader for) pass the messages ({role, content, \
timestamp?}); with claude, cursor, codex, opencode, pi or gemini recall reads that host's own \
transcript of this project from disk (the newest one, or session_id). Dumping the same session \
again adds only what is missing. To record one decision or learning use memory_add."""
    raw = [message.model_dump(exclude_none=True) for message in messages] if messages else None
    with errors():
        done = memory(ctx).dump(
            title=title, source=source, project=project, session_id=session_id, messages=raw
        )
    summary_ref = f"session_summary#{done.summary_id}"
    result = out.Dumped.model_validate({**done.to_dict(), "summary_ref": summary_ref})
    text = (
        f"session#{done.session_id} stored in project {done.project}: {done.messages_added} new "
        f"messages, {summary_ref} (loa_show shows it)"
    )
    return reply(result, text)


def memory_review(
    ctx: Context,
    action: Annotated[
        Literal["list", "accept", "reject"],
        Field(description="list: what awaits review; accept: keep records; reject: delete them for good."),
    ] = "list",
    records: Annotated[
        list[str] | None,
        Field(description="accept/reject: the records' refs, as list shows them (decision#12)."),
    ] = None,
    project: ProjectArg = None,
    limit: Annotated[int, Field(ge=1, le=200, description="list: at most this many.")] = 20,
) -> Annotated[CallToolResult, out.Reviewed]:
    """Review the decisions, learnings and breadcrumbs recall extracted from past transcripts \
(provenance extracted). list shows those awaiting review, most confident first, each with the \
messages it came from; accept keeps records (they then enter memory_recall and context_for_agent \
whatever their confidence); reject deletes them and recall never extracts the same wording again. \
Ask the user before rejecting or accepting on their behalf. To read one record use memory_get."""
    api = memory(ctx)
    with errors():
        if action == "list":
            if records:
                raise InvalidInput("records goes with action=accept or action=reject")
            items = api.review(project=project, limit=limit)
            result = out.Reviewed(
                action=action,
                project=api.scope(project),
                records=[out.ReviewEntry.model_validate(item.to_dict()) for item in items],
                done=[],
            )
            return reply(result, review_text(result))
        if not records:
            raise InvalidInput(f"name the records to {action}, e.g. records=['decision#12']")
        if action == "accept":
            done = [str(r.ref) for r in api.accept(records, project=project)]
        else:
            done = list(api.reject(records, project=project))
    result = out.Reviewed(action=action, project=api.scope(project), records=[], done=done)
    return reply(result, f"{action}ed " + ", ".join(done))


def profile_get(ctx: Context, project: ProjectArg = None) -> Annotated[CallToolResult, out.ProfileOut]:
    """Read the project's profile: the page a person keeps about it (stack, conventions, the \
build, test and lint commands, people and owners, notes). memory_recall and context_for_agent \
already start with it; call this for the whole page. To change it use profile_set."""
    with errors():
        page = memory(ctx).profile(project)
    result = profile_out(page)
    return reply(result, page.text)


def profile_set(
    ctx: Context,
    key: Annotated[
        str,
        Field(
            description="stack, conventions, build, test, lint, people, owners, notes, or a short word of your own."
        ),
    ],
    value: Annotated[
        str | None, Field(description="The new value (at most 2,000 characters); null removes the key.")
    ],
    project: ProjectArg = None,
) -> Annotated[CallToolResult, out.ProfileOut]:
    """Set (or, with value null, remove) one key of the project's profile, e.g. key='test', \
value='pytest -q'. Keep values short and current: every session brief starts with them. Ask the \
user before changing what they wrote. For a decision or a gotcha use memory_add instead."""
    with errors():
        api = memory(ctx)
        page = (
            api.set_profile(key, value, project=project)
            if value is not None
            else api.unset_profile(key, project=project)
        )
    result = profile_out(page)
    said = (
        ""
        if not page.redacted
        else "; redacted before storing: " + ", ".join(f"{n} {kind}" for kind, n in page.redacted.items())
    )
    done = f"set {key}" if value is not None else f"removed {key}"
    return reply(result, f"{done} in the profile of {page.project}{said}")


def profile_out(page: Profile) -> out.ProfileOut:
    data = page.to_dict()
    return out.ProfileOut(
        project=data["project"], profile=data["profile"], updated_at=data["updated_at"],
        redacted=data.get("redacted", {}),
    )  # fmt: skip


def find_connections(
    ctx: Context,
    entity: Annotated[
        str,
        Field(
            description="A file path (src/auth/session.py, session.py), symbol, package, command "
            "(pytest, git push) or error (KeyError)."
        ),
    ],
    project: ProjectArg = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Per section.")] = 10,
) -> Annotated[CallToolResult, out.ConnectionsOut]:
    """What memory knows about one file, symbol, package, command or error: the decisions, learnings \
and breadcrumbs that mention it, the sessions that touched it (newest first, with what they did: \
edited, read, ran, failed_on) and what was seen with it (files edited in the same sessions, errors hit \
there, the symbols a file defines). Use it before changing a file, or when an error comes back. For \
words rather than a named thing use memory_search."""
    with errors():
        found = memory(ctx).connections(entity, project=project, limit=limit)
    result = out.ConnectionsOut.model_validate(found.to_dict())
    return reply(result, connections_text(result))


def get_knowledge_graph(
    ctx: Context,
    project: ProjectArg = None,
    limit: Annotated[int, Field(ge=1, le=500, description="Entities per page.")] = 100,
    offset: Annotated[int, Field(ge=0, description="From next_offset of the previous page.")] = 0,
    types: Annotated[
        list[Literal["file", "symbol", "package", "command", "error", "host", "url"]] | None,
        Field(description="Only these entity types."),
    ] = None,
) -> Annotated[CallToolResult, out.GraphOut]:
    """A project's graph, one page at a time: its most connected entities (files, symbols, packages, \
commands, errors, hosts, URLs) as nodes, the sessions and records linked to them as nodes too, and \
edges {source, target, relation, count, last_at}. Page on with offset=next_offset. For one entity \
use find_connections."""
    with errors():
        graph = memory(ctx).knowledge_graph(project=project, limit=limit, offset=offset, types=types or ())
    result = out.GraphOut.model_validate(graph.to_dict())
    more = f"; next page: offset={result.next_offset}" if result.next_offset is not None else ""
    text = (
        f"{result.project}: {len(result.nodes)} nodes, {len(result.edges)} edges "
        f"({result.total_entities} entities in all, from offset {result.offset}){more}"
    )
    return reply(result, text)


# -- notes ----------------------------------------------------------------------------------------

NotePath = Annotated[
    str,
    Field(description="Where the note lives inside the project, e.g. notes/architecture.md (.md is added)."),
]


def note_model(record: Record) -> out.Note:
    return out.Note.model_validate({**record.to_dict(), "ref": str(record.ref)})


def note_write(
    ctx: Context,
    path: NotePath,
    content: Annotated[
        str, Field(description="The whole markdown text; may open with a --- frontmatter block.")
    ],
    project: Annotated[str | None, Field(description="Project name. Default: the server's project.")] = None,
) -> Annotated[CallToolResult, out.NoteResult]:
    """Write a markdown note at a path inside the project, replacing any note already there: for \
what does not fit a one-line decision or learning (an architecture overview, a runbook, a \
glossary). Notes are searched with everything else. To change part of a note use note_edit."""
    with errors():
        record = memory(ctx).note_write(path, content, project=project)
    note = note_model(record)
    return reply(
        out.NoteResult(found=True, path=note.path, note=note),
        f"wrote {note.path} ({note.ref}, {len(note.content or '')} characters)",
    )


def note_read(
    ctx: Context,
    path: NotePath,
    project: Annotated[str | None, Field(description="Project name. Default: the server's project.")] = None,
) -> Annotated[CallToolResult, out.NoteResult]:
    """Read one note in full, with its frontmatter parsed. Answers found: false when there is none; \
note_list shows the paths there are."""
    with errors():
        try:
            note: out.Note | None = note_model(memory(ctx).note_read(path, project=project))
        except NotFound:
            note = None
    where = note.path if note else path
    text = (
        f"{note.path} ({note.ref})\n\n{note.content}"
        if note
        else f"no note at {path}; note_list shows the notes there are"
    )
    return reply(out.NoteResult(found=note is not None, path=where, note=note), text)


def note_edit(
    ctx: Context,
    path: NotePath,
    mode: Annotated[
        Literal["replace", "append", "prepend", "str_replace"],
        Field(description="replace the whole text, append or prepend content, or str_replace old with new."),
    ],
    content: Annotated[str | None, Field(description="The text to write, append or prepend.")] = None,
    old: Annotated[
        str | None,
        Field(description="str_replace: the exact passage to replace; it must occur exactly once."),
    ] = None,
    new: Annotated[str | None, Field(description="str_replace: what replaces it (may be empty).")] = None,
    project: Annotated[str | None, Field(description="Project name. Default: the server's project.")] = None,
) -> Annotated[CallToolResult, out.NoteResult]:
    """Edit a note in place. replace, append and prepend take content (and create the note if it is \
missing); str_replace swaps the one passage old for new and is refused when old occurs more than \
once or not at all, so include enough surrounding text to make it unique. To write a whole new \
note use note_write."""
    with errors():
        if mode == "str_replace" and content is not None:
            raise InvalidInput("str_replace takes old and new, not content")
        if mode != "str_replace" and (old is not None or new is not None):
            raise InvalidInput(f"{mode} takes content; old and new are for str_replace")
        record = memory(ctx).note_edit(path, mode, content, old=old, new=new, project=project)
    note = note_model(record)
    return reply(
        out.NoteResult(found=True, path=note.path, note=note),
        f"{mode}: {note.path} ({note.ref}) now has {len(note.content or '')} characters",
    )


def note_list(
    ctx: Context,
    folder: Annotated[
        str | None, Field(description="Only notes under this folder, e.g. notes/design.")
    ] = None,
    project: ProjectArg = None,
) -> Annotated[CallToolResult, out.NoteList]:
    """List notes by path (under a folder, or all), each with its title and size; read one with note_read."""
    with errors():
        listed = memory(ctx).note_list(folder, project=project)
        scope = memory(ctx).scope(project)
    from recall.notes import clean_folder

    notes = [note_model(record) for record in listed]
    result = out.NoteList(project=scope, folder=clean_folder(folder), notes=notes)
    lines = [f"{n.path}  {n.title} ({n.chars} characters, {n.ref})" for n in notes] or ["no notes here"]
    return reply(result, "\n".join(lines))


def note_delete(
    ctx: Context,
    path: NotePath,
    project: Annotated[str | None, Field(description="Project name. Default: the server's project.")] = None,
) -> Annotated[CallToolResult, out.NoteDeleted]:
    """Delete a note for good (no undo): its text leaves every file recall keeps. Answers found: \
false when there is no note at that path. To change part of a note use note_edit instead."""
    with errors():
        try:
            report = memory(ctx).note_delete(path, project=project)
        except NotFound:
            return reply(out.NoteDeleted(found=False, path=path, ref=None), f"no note at {path}")
    return reply(out.NoteDeleted(found=True, path=path, ref=report.ref), report.message)


def memory_dedup(
    ctx: Context,
    project: ProjectArg = None,
    dry_run: Annotated[
        bool, Field(description="Only say what would merge (the default); false merges.")
    ] = True,
) -> Annotated[CallToolResult, out.Deduplicated]:
    """Find live decisions, learnings and breadcrumbs of one project (or '*') that say the same thing; \
with dry_run=false merge each group into its oldest record (a person's own first), which takes the \
others' tags, sources and supersession links, and delete the others for good. New records are \
already checked by memory_add; to delete one record use memory_forget."""
    with errors():
        scope = "*" if project == "*" else memory(ctx).project(project)
        found = memory(ctx).dedup(project=scope, dry_run=dry_run)
    result = out.Deduplicated.model_validate(found.to_dict())
    verb = "would merge" if dry_run else "merged"
    lines = [f"{found.merged} near-duplicate record(s) {verb}"]
    lines += [f"{g.keep} <- {', '.join(m.ref for m in g.merged)}" for g in result.groups]
    return reply(result, "\n".join(lines))


# -- export and import ------------------------------------------------------------------------------


def memory_export(
    ctx: Context,
    project: ProjectArg = None,
    kinds: Annotated[
        list[Literal["decision", "learning", "breadcrumb", "note"]] | None,
        Field(description="Only these kinds (default: all four)."),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=5000, description="At most this many records.")] = 1000,
) -> Annotated[CallToolResult, out.ExportedRecords]:
    """Export decisions, learnings, breadcrumbs and notes as objects memory_import reads back \
(content, detail, tags, status, supersession links, expiry, dates). Use it to move memory between \
projects or machines; for a person, `recall export --format markdown` writes files."""
    with errors():
        scope = None if project == "*" else memory(ctx).project(project)
        rows: list[dict[str, Any]] = []
        for row in memory(ctx).export_records(project=scope, kinds=kinds):
            if len(rows) >= limit:
                break
            rows.append(row)
    result = out.ExportedRecords(project=scope, count=len(rows), records=rows)
    return reply(result, f"{len(rows)} records exported from {scope or 'every project'}")


def memory_import(
    ctx: Context,
    records: Annotated[list[dict[str, Any]], Field(description="Objects as memory_export returns them.")],
    project: Annotated[
        str | None, Field(description="Put every record in this project instead of the one it names.")
    ] = None,
) -> Annotated[CallToolResult, out.ImportedRecords]:
    """Import records exported by memory_export (or `recall export`): each is checked and scrubbed, \
stored as written by you, with new ids and its supersession links; one already stored is not added \
twice, and a bad one is refused by its position while the rest go in. To add one record use \
memory_add."""
    import json

    with errors():
        report = memory(ctx).import_records((json.dumps(row) for row in records), project=project)
    result = out.ImportedRecords.model_validate(report.to_dict())
    added = ", ".join(f"{n} {kind}" for kind, n in sorted(report.added.items())) or "nothing"
    text = f"imported {added}; {report.already_there} already there; {report.refused} refused"
    return reply(result, "\n".join([text, *report.problems]))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(memory_search, "Search memory by keyword", READ_ONLY),
    ToolSpec(memory_hybrid_search, "Search memory by meaning", READ_ONLY),
    ToolSpec(memory_recall, "Catch up at session start", READ_ONLY),
    ToolSpec(context_for_agent, "Brief a subagent", READ_ONLY),
    ToolSpec(memory_list, "List stored rows", READ_ONLY),
    ToolSpec(memory_add, "Remember something", ADDITIVE),
    ToolSpec(memory_get, "Read one row", READ_ONLY),
    ToolSpec(memory_update, "Correct a record", DESTRUCTIVE),
    ToolSpec(memory_forget, "Delete one record", DESTRUCTIVE),
    ToolSpec(memory_forget_many, "Delete records by filter", DESTRUCTIVE),
    ToolSpec(decision_update, "Supersede or revert a decision", IDEMPOTENT_WRITE),
    ToolSpec(memory_dump, "Store the ending session", IDEMPOTENT_WRITE),
    ToolSpec(loa_show, "Read a session summary", READ_ONLY),
    ToolSpec(memory_stats, "Memory statistics", READ_ONLY),
    ToolSpec(memory_review, "Review extracted memory", DESTRUCTIVE),
    ToolSpec(profile_get, "Read the project's profile", READ_ONLY),
    ToolSpec(profile_set, "Set a key of the project's profile", DESTRUCTIVE),
    ToolSpec(find_connections, "Find what memory connects to a file, symbol or command", READ_ONLY),
    ToolSpec(get_knowledge_graph, "A project's knowledge graph", READ_ONLY),
    ToolSpec(note_write, "Write a note", DESTRUCTIVE),
    ToolSpec(note_read, "Read a note", READ_ONLY),
    ToolSpec(note_edit, "Edit a note", EDITING),
    ToolSpec(note_list, "List notes", READ_ONLY),
    ToolSpec(note_delete, "Delete a note", DESTRUCTIVE),
    ToolSpec(memory_dedup, "Merge near-duplicate records", DESTRUCTIVE),
    ToolSpec(memory_export, "Export records", READ_ONLY),
    ToolSpec(memory_import, "Import records", ADDITIVE),
)
