"""``recall.Memory``: the one library API every edge calls (CLI, MCP server, hooks, web view).

A ``Memory`` owns one database and answers in typed results (recall.results). It decides what the
edges would otherwise each decide for themselves: which project a call is about (the flag, then
``RECALL_PROJECT``, then the folder; ``"*"`` for every project), how a row is named (``kind#id``,
recall.kinds), when a written row is embedded, and which search runs. The store underneath is
persistence alone; searching, embedding, briefs, imports and dumps are composed here.

Opening is lazy: creating a ``Memory`` touches no file and loads no model, so a server or a hook
that starts and answers nothing costs nothing. The store opens on first use and the embedding model
loads when a write or a meaning search first needs it::

    from recall import Memory

    with Memory() as memory:
        memory.add("decision", "Use SQLite with WAL", detail="tests read while one writes")
        for hit in memory.search("which database?").hits:
            print(hit.ref, hit.preview)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from recall.config import default_db_path
from recall.errors import InvalidInput, ModelUnavailable, NotFound, StoreUnavailable
from recall.kinds import READABLE, TYPED, Kind, Ref, parse_kind
from recall.project import ALL_PROJECTS, default_project, pinned_project
from recall.results import Deduplicated, Page, Record, SearchResults, Stats

if TYPE_CHECKING:
    from adapters.base import HostAdapter
    from recall.brief import CatchUp, ContextBrief
    from recall.connections import Connections, Graph
    from recall.decision_log import DecisionLog
    from recall.doctor import Section
    from recall.dump import DumpResult
    from recall.evaluation import EvalReport
    from recall.extract.review import ReviewItem
    from recall.extract.stage import ExtractionReport
    from recall.ingest import ImportSummary, Progress
    from recall.overview import Overview
    from recall.profile import Profile
    from recall.records_export import Exported
    from recall.records_import import ImportedRecords
    from recall.redactions import Redactions
    from recall.scrub import Scrubbed
    from recall.search.embedder import Embedder
    from recall.search.hybrid import Mode
    from recall.search.semantic import EmbedReport
    from recall.session_view import MessageLocation, SessionView
    from recall.store import Store
    from recall.store.erase import BulkForgetReport, ForgetReport
    from recall.store.purge import PurgeReport
    from recall.store.rescrub import RescrubReport
    from recall.watch import OnImport

log = logging.getLogger(__name__)

RefLike = str | int | Ref


class Memory:
    """One recall database, and everything a person or agent does with it."""

    def __init__(
        self,
        db: str | Path | None = None,
        *,
        project: str | None = None,
        embedder: Embedder | None = None,
        embed_on_write: bool = True,
    ) -> None:
        """``project`` is the default for calls that name none; ``embed_on_write=False`` leaves new
        rows pending for ``embed`` (hooks use it: they must not wait for a model). ``bind`` keeps
        changes to one project."""
        from recall.pg import postgres_url

        self.url = postgres_url(db)  # a PostgreSQL server instead of a file (recall.pg, adr/0024)
        self.path = default_db_path(db) if self.url is None else _server_path(self.url)
        self._project = project
        self._bound = False
        self._scopes: tuple[str, ...] | None = None  # a team member's projects (limit_to)
        self._embedder = embedder
        self.embed_on_write = embed_on_write
        self._store: Store | None = None
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The open store (opened, and migrated, on first use)."""
        with self._lock:
            if self._store is None:
                from recall.store import Store

                self._store = Store(self.path) if self.url is None else _server_store(self.url)
                log.info("recall store opened: %s", self.path)
            return self._store

    @property
    def embedder(self) -> Embedder:
        """The embedder given at creation, else the process-wide default (its model loads on first use)."""
        if self._embedder is None:
            from recall.search.embedder import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def open(self) -> Self:
        """Open (and migrate) the store now rather than at first use: a server warms up as it starts."""
        _ = self.store
        return self

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- projects --------------------------------------------------------------------------------

    def project(self, name: str | None = None) -> str:
        """The project a call is about: ``name``, else this memory's default, else ``RECALL_PROJECT``,
        else the current folder's repository."""
        if name == ALL_PROJECTS:
            raise InvalidInput("a record belongs to one project: name it, or leave project out")
        return self._allowed_project(default_project(name or self._project))

    def scope(self, name: str | None = None) -> str | None:
        """Like ``project``, but ``"*"`` means every project (None)."""
        if name == ALL_PROJECTS and self._scopes is not None and "*" not in self._scopes:
            if len(self._scopes) == 1:
                return self._scopes[0]
            raise InvalidInput(f"this token opens projects {', '.join(self._scopes)}: name one of them")
        return None if name == ALL_PROJECTS else self.project(name)

    def limit_to(self, projects: Sequence[str]) -> Self:
        """Keep every call to ``projects`` (a team member's token scope, recall.team); ``*`` is all.

        Why here: the team server hands each person a ``Memory``, and every read and change resolves
        its project through ``project``/``scope`` and every row through ``find``, so one check covers
        all of them."""
        self._scopes = tuple(projects)
        if "*" not in self._scopes:
            self._project = self._project if self._project in self._scopes else self._scopes[0]
        return self

    def _allowed_project(self, project: str) -> str:
        if self._scopes is None or "*" in self._scopes or project in self._scopes:
            return project
        raise InvalidInput(
            f"project {project} is not open to this token (it opens {', '.join(self._scopes)}); "
            "ask the server's admin for a token with it"
        )

    def bind(self, project: str) -> Self:
        """Keep this memory's changes to ``project``: updating, superseding, reviewing or forgetting
        another project's rows is refused unless the call says ``project="*"``.

        Why: a server started for one repository (``recall mcp --project`` or ``RECALL_PROJECT``)
        answers an agent working there; an id taken from an all-projects search must not let it
        rewrite or delete another project's memory by accident (TinyMem's namespace guard).
        """
        self._project = project
        self._bound = True
        return self

    @property
    def bound_project(self) -> str | None:
        """The project this memory is bound to (``bind``), if any."""
        return self._project if self._bound else None

    def _check_change(self, target: Ref, row_project: str, asked: str | None) -> None:
        """Refuse a change to a row outside the project the call (or a bound memory) is about."""
        if asked == ALL_PROJECTS:
            return
        if asked is not None and asked.strip() and asked.strip() != row_project:
            raise InvalidInput(
                f"{target} belongs to project {row_project}, not {asked.strip()}; "
                "name its project, or pass project='*'"
            )
        bound = self.bound_project
        if bound is not None and row_project != bound:
            raise InvalidInput(
                f"{target} belongs to project {row_project}, and this server is bound to project "
                f"{bound}; pass project='*' to change another project's rows"
            )

    def _changeable(self, target: Ref, asked: str | None) -> Record | None:
        """The row about to change, after the project check; None when there is no such row."""
        found = self.find(target)
        if found is not None:
            self._check_change(target, found.project, asked)
        return found

    # -- typed records -----------------------------------------------------------------------------

    def add(
        self,
        kind: str | Kind,
        content: str,
        *,
        project: str | None = None,
        detail: str | None = None,
        tags: Iterable[str] | str | None = None,
        confidence: str | None = None,
        importance: int = 5,
        valid_until: str | datetime | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        force: bool = False,
    ) -> Record:
        """Remember a decision, learning or breadcrumb (provenance user_authored, stamped by the store).

        Any kind may expire (``valid_until``); ``source`` and ``metadata`` are the caller's own small
        fields. The answer's ``redacted`` says what the scrubber took out on the way in. A live record
        of the same kind and project that already says it is refreshed instead
        (recall.near_duplicates) and returned with ``refreshed`` set; ``force`` adds anyway.
        """
        from recall.store import NewRecord
        from recall.store.records import normalise_tags, parse_when

        record_kind = parse_kind(kind, TYPED).record
        assert record_kind is not None
        new = NewRecord(
            kind=record_kind,
            content=content,
            project=self.project(project),
            detail=detail,
            tags=tuple(normalise_tags(tags)),
            confidence=confidence,
            importance=importance,
            valid_until=parse_when(valid_until),
            source=source,
            metadata=_metadata(metadata),
        )
        if not force:
            refreshed = self._refresh_duplicate(new)
            if refreshed is not None:
                return refreshed
        written = self.store.add_record(new)
        self._embed_written(record_kind.value, written.id)
        return replace(self.get(Ref(Kind(record_kind.value), written.id)), redacted=written.redacted)

    def dedup(self, *, project: str | None = None, dry_run: bool = False) -> Deduplicated:
        """Merge the live near-duplicates already stored (per project and kind; every project unless
        named): each group keeps one record, which takes the others' tags, sources and supersession
        links. ``dry_run`` only says what would merge."""
        from recall.near_duplicates import plan_merges
        from recall.store.merge import merge

        scope = self.scope(project) if project and project != ALL_PROJECTS else None
        bound = self.bound_project
        if bound is not None and project != ALL_PROJECTS:
            if scope not in (None, bound):
                raise InvalidInput(
                    f"this server is bound to project {bound}; pass project='*' to merge other projects' rows"
                )
            scope = bound
        embedder = self._maybe_embedder()
        groups = plan_merges(self.store, scope, embedder)
        if not dry_run:
            for group in groups:
                merge(self.store, group.kind, group.keep, [match.id for match in group.merged])
                self._embed_written(group.kind.value, group.keep)
        return Deduplicated(scope, dry_run, tuple(groups), embedder is not None)

    def get(self, ref: RefLike, kind: str | Kind | None = None) -> Record:
        """One row of any kind, in full; NotFound names what to do when there is none."""
        found = self.find(ref, kind)
        if found is None:
            target = Ref.parse(ref, kind) if not isinstance(ref, Ref) else ref
            raise NotFound(f"no {target.kind.value} with id {target.id}; search or list to find the right id")
        return found

    def find(self, ref: RefLike, kind: str | Kind | None = None) -> Record | None:
        """Like ``get``, but None when there is no such row."""
        from recall.store.views import load_row

        target = _ref(ref, kind, READABLE)
        try:
            found = Record.from_row(load_row(self.store, target.kind.value, target.id))
        except NotFound:
            return None
        if self._scopes is not None and "*" not in self._scopes and found.project not in self._scopes:
            return None  # another project's row is not there for this token
        return found

    def update(
        self,
        ref: RefLike,
        kind: str | Kind | None = None,
        *,
        content: str | None = None,
        detail: str | None = None,
        tags: Iterable[str] | str | None = None,
        importance: int | None = None,
        confidence: str | None = None,
        valid_until: str | datetime | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        project: str | None = None,
    ) -> Record:
        """Correct a decision, learning or breadcrumb in place; only the fields given change.

        ``valid_until="none"`` removes an expiry. ``project`` names the row's project (``"*"``: any),
        which a bound memory requires for another project's rows.
        """
        from recall.store import RecordChanges
        from recall.store.records import change_values, clears_expiry, normalise_tags, parse_when

        target = _ref(ref, kind, TYPED)
        record_kind = target.kind.record
        assert record_kind is not None
        clear = clears_expiry(valid_until)
        changes = RecordChanges(
            content=content,
            detail=detail,
            tags=tuple(normalise_tags(tags)) if tags is not None else None,
            importance=importance,
            confidence=confidence,
            valid_until=None if clear else parse_when(valid_until),
            source=source,
            metadata=_metadata(metadata),
            clear_valid_until=clear,
        )
        change_values(record_kind, changes)  # a bad call is told so before whether the row exists
        if self._changeable(target, project) is None:
            raise NotFound(f"no {target.kind.value} with id {target.id}; search or list to find the right id")
        written = self.store.update_record(record_kind, target.id, changes)
        self._embed_written(record_kind.value, target.id)
        return replace(self.get(target), redacted=written.redacted)

    def forget(
        self, ref: RefLike, kind: str | Kind | None = None, *, project: str | None = None
    ) -> ForgetReport:
        """Forget one row of any kind for good, with what only it produced (a session's messages,
        summary and subagents); no copy of its text stays in recall's files (adr/0014).
        ``project`` as in ``update``."""
        from recall.store.erase import forget

        target = _ref(ref, kind, READABLE)
        self._changeable(target, project)
        return forget(self.store, target)

    def forget_many(
        self,
        *,
        tags: Iterable[str] | str | None = None,
        older_than_days: float | None = None,
        project: str | None = None,
        confirm: int | None = None,
    ) -> BulkForgetReport:
        """Forget the typed records matching every filter (every tag), only when ``confirm`` equals
        how many match; without it nothing is deleted and the answer gives that number and a sample.
        Every project takes ``project="*"``."""
        from recall.store.erase import forget_many

        scope = ALL_PROJECTS if project == ALL_PROJECTS else self.project(project)
        bound = self.bound_project
        if bound is not None and scope not in (ALL_PROJECTS, bound):
            raise InvalidInput(
                f"this server is bound to project {bound}; pass project='*' to forget other projects' rows"
            )
        return forget_many(
            self.store, project=scope, tags=tags, older_than_days=older_than_days, confirm=confirm
        )

    def purge(
        self,
        *,
        project: str | None = None,
        expired: bool = False,
        older_than_days: float | None = None,
        dry_run: bool = False,
    ) -> PurgeReport:
        """Delete a whole scope (a project, an age, or both; every project unless named) or the
        expired records (any typed kind), then compact the file."""
        from recall.store.purge import purge

        return purge(
            self.store, project=project, expired=expired, older_than_days=older_than_days, dry_run=dry_run
        )

    def rescrub(self, *, progress: Callable[[int, int], None] | None = None) -> RescrubReport:
        """Run today's scrubber over everything stored and rewrite only what it changes."""
        from recall.store.rescrub import rescrub

        return rescrub(self.store, progress=progress)

    def supersede(
        self, decision: RefLike, by: RefLike | None = None, *, project: str | None = None
    ) -> Record:
        """Mark an active decision superseded, optionally by the decision that replaces it."""
        target = _ref(decision, Kind.DECISION, (Kind.DECISION,))
        successor = _ref(by, Kind.DECISION, (Kind.DECISION,)).id if by is not None else None
        self._changeable(target, project)
        return Record.from_row(self.store.supersede(target.id, by=successor))

    def revert(self, decision: RefLike, *, project: str | None = None) -> Record:
        """Mark an active decision reverted: undone, nothing replaces it."""
        target = _ref(decision, Kind.DECISION, (Kind.DECISION,))
        self._changeable(target, project)
        return Record.from_row(self.store.revert(target.id))

    def list(
        self,
        kinds: Iterable[str | Kind] | str | Kind | None = None,
        *,
        project: str | None = None,
        status: str | None = None,
        provenance: str | None = None,
        tags: Iterable[str] | str | None = None,
        since: str | datetime | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> Page:
        """Stored rows newest first, every filter applying at once (several tags must all match)."""
        from recall.store.listing import DEFAULT_KINDS, ListQuery, list_rows
        from recall.store.records import normalise_tags, since_time

        wanted = _kinds(kinds) or DEFAULT_KINDS
        query = ListQuery(
            kinds=wanted,
            project=self.scope(project),
            status=status.strip().lower() if status else None,
            provenance=_provenance(provenance),
            tags=tuple(normalise_tags(tags)),
            since=since if isinstance(since, datetime) else since_time(since),
            limit=limit,
            cursor=cursor,
        )
        listed = list_rows(self.store, query)
        records = tuple(found for kind, row_id in listed.rows if (found := self.find(Ref(kind, row_id))))
        return Page(records, listed.next_cursor)

    # -- the project's profile (adr/0027) ----------------------------------------------------------

    def profile(self, project: str | None = None) -> Profile:
        """A project's profile: stack, conventions, build/test/lint commands, people, owners, notes."""
        from recall.profile import load_profile

        return load_profile(self.store, self.project(project))

    def set_profile(self, key: str, value: str, *, project: str | None = None) -> Profile:
        """Set one key of a project's profile (scrubbed; user_authored); the answer says what was redacted."""
        from recall.store.profiles import set_value

        name = self._own_project(project, "the profile")
        redacted = set_value(self.store, name, key, value)
        return replace(self.profile(name), redacted=redacted)

    def unset_profile(self, key: str, *, project: str | None = None) -> Profile:
        """Remove one key of a project's profile; its old value leaves the file (adr/0014)."""
        from recall.store.profiles import check_key, unset_value
        from recall.store.wipe import wipe

        name = self._own_project(project, "the profile")
        if not unset_value(self.store, name, key):
            raise NotFound(
                f"the profile of {name} has no {check_key(key)}; `recall profile show` lists its keys"
            )
        wipe(self.store)
        return self.profile(name)

    def _own_project(self, project: str | None, what: str) -> str:
        """The project a profile or note change is about, which a bound memory keeps to its own."""
        name = self.project(project)
        bound = self.bound_project
        if bound is not None and name != bound:
            raise InvalidInput(
                f"this server is bound to project {bound}; change {what} of project {name} from a "
                "server or command for that project"
            )
        return name

    # -- typed memory extracted from transcripts (adr/0018) -----------------------------------------

    def review(self, *, project: str | None = None, limit: int = 50) -> Sequence[ReviewItem]:
        """Extracted records awaiting review, most confident first, each with its source lines."""
        from recall.extract.review import awaiting_review

        return awaiting_review(self.store, self.scope(project), limit=limit)

    def accept(self, refs: Iterable[RefLike], *, project: str | None = None) -> Sequence[Record]:
        """Keep extracted records: they leave review and enter the briefs whatever their confidence."""
        from recall.extract.review import accept

        names = self._reviewable(refs, project)
        return [Record.from_row(row) for row in accept(self.store, names)]

    def reject(self, refs: Iterable[RefLike], *, project: str | None = None) -> Sequence[str]:
        """Delete extracted records; their wording is never extracted again. Returns their refs."""
        from recall.extract.review import reject

        return reject(self.store, self._reviewable(refs, project))

    def _reviewable(self, refs: Iterable[RefLike], project: str | None) -> Sequence[str]:
        names = [str(ref) for ref in refs]
        if project is not None or self._bound:
            for name in names:
                self._changeable(_ref(name, None, TYPED), project)
        return names

    def extract(
        self,
        *,
        project: str | None = None,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[int, ExtractionReport]:
        """Run extraction over sessions stored before it (resumable); ``rebuild`` starts over, keeping
        accepted records and rejections. Returns (records removed by the rebuild, what it did)."""
        from recall.extract.backfill import backfill

        scope = None if project in (None, ALL_PROJECTS) else project
        return backfill(self.store, project=scope, rebuild=rebuild, progress=progress)

    # -- notes: markdown documents at a path inside a project ----------------------------------------

    def note_write(self, path: str, content: str, *, project: str | None = None) -> Record:
        """Write a note whole (created, or replaced when the path has one); scrubbed like every text."""
        return self.note_edit(path, "replace", content, project=project)

    def note_edit(
        self,
        path: str,
        mode: str,
        content: str | None = None,
        *,
        old: str | None = None,
        new: str | None = None,
        project: str | None = None,
    ) -> Record:
        """Edit a note: ``replace``, ``append`` or ``prepend`` ``content`` (creating the note if it is
        missing), or ``str_replace`` the one passage ``old`` with ``new`` (refused unless ``old`` occurs
        exactly once)."""
        from recall.notes import edited
        from recall.store.notes import write_note

        owner, where = self._own_project(project, "the notes"), self._note_path(path)
        row_id, _ = write_note(
            self.store, owner, where, lambda current: edited(current, mode, content, old, new)
        )
        self._embed_written(Kind.NOTE.value, row_id)
        return self.note_read(where, project=owner)

    def note_read(self, path: str, *, project: str | None = None) -> Record:
        """One note, with its frontmatter parsed (``frontmatter``) and its ``title``."""
        from recall.notes import frontmatter, title
        from recall.store.notes import note_id

        where = self._note_path(path)
        record = self.get(Ref(Kind.NOTE, note_id(self.store, self.project(project), where)))
        content = str(record.data["content"])
        data = {**record.data, "frontmatter": frontmatter(content), "title": title(where, content)}
        return Record(record.kind, record.id, data)

    def note_list(self, folder: str | None = None, *, project: str | None = None) -> Sequence[Record]:
        """The notes under ``folder`` (all of them without one), by path, each with its title and size
        and without its text; ``project="*"`` for every project."""
        from recall.notes import clean_folder, title
        from recall.store.notes import list_notes

        rows = list_notes(self.store, self.scope(project), clean_folder(folder))
        return [
            Record(Kind.NOTE, int(row["id"]), {
                **{key: value for key, value in row.items() if key != "content"},
                "kind": Kind.NOTE.value, "title": title(row["path"], row["content"]), "chars": len(row["content"]),
            })
            for row in rows
        ]  # fmt: skip

    def note_delete(self, path: str, *, project: str | None = None) -> ForgetReport:
        """Delete a note for good: its text leaves every file recall keeps (adr/0014)."""
        from recall.store.notes import note_id

        owner = self._own_project(project, "the notes")
        return self.forget(Ref(Kind.NOTE, note_id(self.store, owner, self._note_path(path))), project=owner)

    def _note_path(self, path: str) -> str:
        from recall.notes import clean_path

        where = clean_path(path)
        if self.scrub(where).text != where:
            raise InvalidInput(
                f"the note path {where!r} looks like it holds a secret; name the note otherwise"
            )
        return where

    # -- export and import of records (adr/0032) -----------------------------------------------------

    def export_records(
        self,
        *,
        project: str | None = None,
        kinds: Iterable[str | Kind] | None = None,
        provenance: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Decisions, learnings, breadcrumbs and notes (or the ``kinds`` named) as JSON-ready rows, the
        shape `import_records` reads back; every project unless one is named."""
        from recall.records_export import EXPORTABLE, export_rows

        wanted = tuple(parse_kind(kind, EXPORTABLE) for kind in kinds or ()) or EXPORTABLE
        scope = self.scope(project) if project else None
        return export_rows(self.store, scope, wanted, _provenance(provenance))

    def export_files(
        self,
        out: Path,
        *,
        format: str = "markdown",
        project: str | None = None,
        kinds: Iterable[str | Kind] | None = None,
        provenance: str | None = None,
    ) -> Exported:
        """Write the export under the folder ``out``: markdown files per project, or records.jsonl."""
        from recall.records_export import write_jsonl, write_markdown

        if format not in ("jsonl", "markdown"):
            raise InvalidInput(f"unknown export format {format!r}; use jsonl or markdown")
        rows = self.export_records(project=project, kinds=kinds, provenance=provenance)
        return write_jsonl(rows, out) if format == "jsonl" else write_markdown(rows, out)

    def import_records(self, lines: Iterable[str], *, project: str | None = None) -> ImportedRecords:
        """Import a JSONL export: checked, scrubbed, stamped user_authored, ids remapped, supersession
        links restored; a record already here is not added twice, a bad line is counted and skipped."""
        from recall.records_import import import_records

        return import_records(self.store, lines, project=self.project(project) if project else None)

    # -- connections: the files, commands, errors and packages rows touched (adr/0019) -----------------

    def connections(self, entity: str, *, project: str | None = None, limit: int = 10) -> Connections:
        """What memory links to a file, symbol, package, command or error: the records mentioning it,
        the sessions that touched it (newest first) and what was seen with it."""
        from recall.connections import find_connections

        return find_connections(self.store, entity, self.scope(project), limit=limit)

    def knowledge_graph(
        self, *, project: str | None = None, limit: int = 100, offset: int = 0, types: Sequence[str] = ()
    ) -> Graph:
        """One page of a project's graph: its most connected entities, the rows linked to them, the edges."""
        from recall.connections import knowledge_graph

        scope = self.scope(project)
        if scope is None:
            raise InvalidInput("a graph belongs to one project: name it, or leave project out")
        return knowledge_graph(self.store, scope, limit=limit, offset=offset, types=types)

    # -- finding -----------------------------------------------------------------------------------

    def search(
        self,
        query: str | bytes,
        *,
        mode: Mode = "hybrid",
        project: str | None = None,
        kind: str | Kind | None = None,
        bias: str | Kind | None = None,
        limit: int = 10,
        min_score: float = 0.0,
        retry_as_hybrid: bool = False,
        tags: Iterable[str] | str | None = None,
    ) -> SearchResults:
        """Keyword, semantic or hybrid search; any text is a valid query.

        With ``retry_as_hybrid`` a keyword search that finds nothing (and has no kind filter) asks
        again by meaning, when the model is there. ``tags`` keeps to the decisions, learnings and
        breadcrumbs carrying every one of them.
        """
        from recall.search.hybrid import search
        from recall.search.query import clean_query
        from recall.store.records import normalise_tags

        query = clean_query(query)  # what is searched and what the result echoes
        scope = self.scope(project)
        only = _record_kind(kind)
        prefer = _record_kind(bias)
        embedder = None if mode == "keyword" else self.embedder
        wanted = tuple(normalise_tags(tags))
        if wanted and only is not None and only.value not in ("decision", "learning", "breadcrumb"):
            raise InvalidInput(f"tags belong to decisions, learnings and breadcrumbs, not {only.value} rows")
        hits = search(
            self.store, query, mode=mode, project=scope, table=only, bias=prefer, limit=limit,
            min_score=min_score, embedder=embedder, tags=wanted,
        )  # fmt: skip
        if hits or not retry_as_hybrid or mode != "keyword" or only is not None:
            return SearchResults(query, mode, scope, tuple(hits))
        try:
            hits = search(
                self.store, query, mode="hybrid", project=scope, limit=limit, embedder=self.embedder,
                tags=wanted,
            )  # fmt: skip
        except ModelUnavailable as exc:  # a keyword search must not fail for want of the model
            log.warning("could not retry by meaning: %s", exc)
            return SearchResults(query, mode, scope, ())
        return SearchResults(query, "hybrid", scope, tuple(hits), retried_as_hybrid=True)

    def evaluate(
        self,
        project: str | None = None,
        *,
        per_kind: int = 60,
        total: int = 200,
        progress: Callable[[int, int], None] | None = None,
    ) -> EvalReport:
        """Known-item probes built from the store, scored per mode and project (``recall eval``)."""
        from recall.evaluation import evaluate

        return evaluate(self, project, per_kind=per_kind, total=total, progress=progress)

    def catch_up(self, project: str | None = None, limit: int = 5) -> CatchUp:
        """What a session should know first (MCP ``memory_recall``): recent sessions, decisions in
        force, live breadcrumbs, important learnings."""
        from recall.brief import catch_up

        return catch_up(self.store, self.scope(project), limit=limit)

    def context_for_agent(
        self, task: str | bytes, *, project: str | None = None, max_tokens: int = 1500
    ) -> ContextBrief:
        """The brief a parent agent pastes into a subagent's prompt, within ``max_tokens``."""
        from recall.brief import context_for_agent
        from recall.search.query import clean_query

        return context_for_agent(
            self.store, clean_query(task), self.scope(project), max_tokens, embedder=self._maybe_embedder()
        )

    def session_brief(self, project: str | None = None, max_tokens: int = 1200) -> str:
        """Markdown for the start of a session (SessionStart hooks, `recall context`); empty when the
        project has nothing in force."""
        from recall.brief import session_start_brief

        return session_start_brief(self.store, self.project(project), max_tokens=max_tokens)

    # -- looking: what a person browses (the web view) ---------------------------------------------

    def overview(self, project: str | None = None) -> Overview:
        """A project at a glance: decisions in force, live breadcrumbs, recent sessions, counts and
        messages per day; ``"*"`` for every project."""
        from recall.overview import project_overview

        return project_overview(self.store, self.scope(project))

    def session_view(self, session: RefLike, *, page: int = 1, per_page: int | None = None) -> SessionView:
        """One page of a session's messages in order, with its summary, records and subagents."""
        from recall.session_view import PER_PAGE, session_view

        target = _ref(session, Kind.SESSION, (Kind.SESSION,))
        return session_view(self.store, target.id, page, per_page or PER_PAGE)

    def locate_message(self, message: RefLike, *, per_page: int | None = None) -> MessageLocation:
        """The session and page of ``session_view`` that show a message."""
        from recall.session_view import PER_PAGE, locate_message

        target = _ref(message, Kind.MESSAGE, (Kind.MESSAGE,))
        return locate_message(self.store, target.id, per_page or PER_PAGE)

    def decision_log(self, project: str | None = None, *, page: int = 1) -> DecisionLog:
        """Every decision with its status, grouped into supersession chains, latest change first."""
        from recall.decision_log import decision_log

        return decision_log(self.store, self.scope(project), page)

    def redactions(self) -> Redactions:
        """How many secrets the scrubber replaced in what is stored, per kind of secret and of row."""
        from recall.redactions import count_redactions

        return count_redactions(self.store)

    def stats(self) -> Stats:
        from recall.search.semantic import embedding_stats

        data = self.store.stats()
        data.pop("kinds", None)
        try:
            embedder = self.embedder
        except ModelUnavailable as exc:
            vectors: dict[str, Any] = {"model": None, "error": str(exc)}
        else:
            vectors = embedding_stats(self.store, embedder)
        return Stats(**data, embeddings=vectors)

    def doctor(self, cwd: Path | None = None) -> Sequence[Section]:
        """Database, model, agent connections, transcript folders, retention and hook health."""
        from recall.doctor import diagnose

        return diagnose(self.path, cwd or Path.cwd())

    @staticmethod
    def scrub(text: str) -> Scrubbed:
        """What the write path would store for ``text``."""
        from recall.scrub import scrub

        return scrub(text)

    # -- getting transcripts in ----------------------------------------------------------------------

    def import_transcripts(
        self,
        hosts: Sequence[str] | None = None,
        *,
        paths: Sequence[Path] | None = None,
        since: str | datetime | None = None,
        project: str | None = None,
        dry_run: bool = False,
        force: bool = False,
        tool_text_cap: int | None = None,
        include_thinking: bool = False,
        progress: Progress | None = None,
        embed_budget_seconds: float | None = None,
    ) -> ImportSummary:
        """Import what changed since the last run; ``hosts=None`` reads every host (or, for
        ``paths``, the host each file belongs to). ``embed_budget_seconds`` bounds the embedding
        that follows (0: none now; None: ``[import] embed_budget`` in config.toml, else 5 s)."""
        from recall.ingest import run_import
        from recall.settings import import_embed_budget
        from recall.store.records import since_time

        if embed_budget_seconds is None:
            embed_budget_seconds = import_embed_budget()
        if embed_budget_seconds < 0:
            raise InvalidInput("the embedding budget is a number of seconds, 0 or more")

        return run_import(
            self.store,
            self._adapters(hosts),
            paths=paths,
            sniff=not hosts and bool(paths),
            since=since if isinstance(since, datetime) else since_time(since),
            project=project,
            dry_run=dry_run,
            force=force,
            options=_read_options(tool_text_cap, include_thinking),
            progress=progress,
            embedder=self._maybe_embedder() if embed_budget_seconds > 0 else None,
            embed_budget_seconds=embed_budget_seconds,
        )

    def watch(
        self,
        hosts: Sequence[str] | None = None,
        *,
        paths: Sequence[Path] | None = None,
        project: str | None = None,
        tool_text_cap: int | None = None,
        include_thinking: bool = False,
        interval: float = 2.0,
        on_import: OnImport | None = None,
    ) -> int:
        """Keep importing as transcripts grow, until interrupted; returns how many imports ran."""
        from recall.watch import watch

        return watch(
            self.store,
            self._adapters(hosts),
            paths=paths,
            project=project,
            options=_read_options(tool_text_cap, include_thinking),
            interval=interval,
            on_import=on_import,
        )

    def dump(
        self,
        *,
        title: str | None = None,
        source: str = "mcp",
        project: str | None = None,
        session_id: str | None = None,
        path: Path | None = None,
        messages: Sequence[dict[str, Any]] | None = None,
        cwd: str | None = None,
    ) -> DumpResult:
        """Store the session that just ended (a host's own transcript, or explicit messages) with its summary."""
        from recall.dump import dump_session

        done = dump_session(
            self.store,
            title=title,
            source=source,
            # Named or pinned (RECALL_PROJECT), else the session's own folder decides, not ours.
            project=pinned_project(project or self._project),
            session_id=session_id,
            path=path,
            messages=messages,
            cwd=cwd,
        )
        self._embed_written(Kind.SESSION_SUMMARY.value, done.summary_id)
        return done

    def embed(
        self,
        *,
        project: str | None = None,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbedReport:
        """Embed what has no vector yet (resumable); ``rebuild`` drops every vector first."""
        from recall.search.semantic import drop_vectors, embed_pending

        if rebuild:
            drop_vectors(self.store)
        return embed_pending(self.store, self.embedder, project=project, progress=progress)

    # -- internals ---------------------------------------------------------------------------------

    def _refresh_duplicate(self, new: Any) -> Record | None:
        """Refresh the live record ``new`` restates, if there is one; the model loads only when a
        record shares enough words with it to be worth a cosine."""
        from dataclasses import replace

        from recall.near_duplicates import find_duplicate
        from recall.store.merge import refresh
        from recall.store.records import check_content

        content = self.scrub(check_content(new.content)).text  # compared as it would be stored
        match = find_duplicate(self.store, new.kind, new.project, content, self._maybe_embedder)
        if match is None:
            return None
        offered: dict[str, Any] = {"tags": list(new.tags), "importance": new.importance, "detail": new.detail}
        if new.valid_until is not None:
            offered["valid_until"] = new.valid_until
        refresh(self.store, new.kind, match.id, offered)
        record = self.get(Ref(Kind(new.kind.value), match.id))
        return replace(record, refreshed=match.likeness.to_dict())

    def _embed_written(self, kind: str, row_id: int) -> None:
        """Embed a row just written; the write already committed, so a missing model only leaves it pending."""
        if not self.embed_on_write:
            return
        from recall.rowkinds import RecordKind
        from recall.search.semantic import embed_one

        try:
            embed_one(self.store, self.embedder, RecordKind(kind), row_id)
        except ModelUnavailable as exc:
            log.warning("%s#%s stays pending for embedding: %s", kind, row_id, exc)

    def _maybe_embedder(self) -> Embedder | None:
        """The embedder when its model can load; None sends callers to keyword search."""
        try:
            return self.embedder
        except ModelUnavailable as exc:
            log.warning("searching by keyword only: %s", exc)
            return None

    @staticmethod
    def _adapters(hosts: Sequence[str] | None) -> Sequence[HostAdapter]:
        from adapters import HOSTS

        return [_adapter(name) for name in dict.fromkeys(hosts or HOSTS)]


def _server_path(url: str) -> Path:
    from recall.pg.compat import redact_url

    return Path(redact_url(url))


def _server_store(url: str) -> Store:
    try:
        import psycopg  # noqa: F401 - only the team extra installs it
    except ImportError as exc:
        raise StoreUnavailable(
            "a postgresql:// database needs the team extra: pip install 'recall-memory[team]'"
        ) from exc
    from recall.pg.store import PgStore

    return PgStore(url)


def _ref(ref: RefLike | None, kind: str | Kind | None, allowed: Sequence[Kind]) -> Ref:
    if ref is None:
        raise InvalidInput("name the record: kind#id, e.g. decision#3")
    if isinstance(ref, Ref):
        return Ref.parse(str(ref), kind, allowed)
    return Ref.parse(ref, kind, allowed)


def _record_kind(kind: str | Kind | None) -> Any:
    if kind is None:
        return None
    from recall.kinds import SEARCHABLE

    return parse_kind(kind, SEARCHABLE).record


def _kinds(kinds: Iterable[str | Kind] | str | Kind | None) -> tuple[Kind, ...]:
    if kinds is None:
        return ()
    if isinstance(kinds, str):
        kinds = [kinds]
    return tuple(dict.fromkeys(parse_kind(kind) for kind in kinds))


def _metadata(value: Mapping[str, Any] | str | None) -> Mapping[str, Any] | None:
    """A metadata object, or JSON text of one (the command line's ``--metadata '{...}'``)."""
    if value is None or not isinstance(value, str):
        return value
    from recall.store.records import check_metadata

    return check_metadata(value)


def _provenance(value: str | None) -> str | None:
    from recall.rowkinds import Provenance

    if value is None:
        return None
    try:
        return Provenance(value.strip().lower()).value
    except ValueError:
        raise InvalidInput(
            f"unknown provenance {value!r}; use one of: {', '.join(p.value for p in Provenance)}"
        ) from None


def _read_options(tool_text_cap: int | None, include_thinking: bool) -> Any:
    from adapters.base import DEFAULT_TOOL_TEXT_CAP, ReadOptions

    return ReadOptions(
        tool_text_cap=tool_text_cap or DEFAULT_TOOL_TEXT_CAP, include_thinking=include_thinking
    )


def _adapter(name: str) -> HostAdapter:
    from adapters import get_adapter

    try:
        return get_adapter(name)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
