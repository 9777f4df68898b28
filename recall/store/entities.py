"""Connecting stored rows to the entities they touched: one stage after messages are stored, and one
step when a record is written (adr/0019).

Both run inside the write transaction that stored the rows, so a source file, its messages and their
links land together, a dry run rolls all of them back, and every entity name and link detail passes
the writer's scrubber. Incremental: a session is read only past the last message connected
(``entity_scans``), plus the messages an import changed in place. Idempotent: a link is unique per
owner, entity and relation. Tool calls in hand carry their full arguments (the definitions an edit
added); a message read back from the database has only its one-line gist, which still names its file
or command, so sessions stored before this stage existed are connected too (``connect_pending``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.connections import known_entities
from recall.entities.mention import EntityType, Mention, Relation
from recall.entities.paths import ProjectPaths
from recall.entities.shell import ShellCommand
from recall.entities.text import text_mentions
from recall.entities.tools import call_mentions, result_mentions
from recall.rowkinds import TABLE_NAMES, TYPED_KINDS, RecordKind
from recall.store.writer import Writer
from recall.transcript import ToolCall, TranscriptMessage

if TYPE_CHECKING:
    from recall.store import Store

MAX_ROOTS = 200  # working directories of a project consulted to name its files
_SPOKEN = ("human", "agent")  # whose text is read for mentions: not injected context or tool output
_LOCAL_PREFIXES = ("", "src/", "lib/", "app/", "packages/")
_READ = "id, external_id, origin, kind, tool_name, content, timestamp, meta"  # what mentions are read from
_LIGHT = "id, external_id, timestamp"  # what links need beside a reading made ahead


# A message row as the connect stage reads it: from the store, or cleaned ahead (``CleanRow.values``).
MessageRow = sqlite3.Row | Mapping[str, Any]
# What one transaction's rows of a session touched, in row order, and the files its tool calls named
# (base name → path), as ``read_mentions`` returns them.
PartMentions = tuple[tuple[tuple[Mention, ...], ...], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class MentionsAhead:
    """What a new session's messages touched, read by the read-ahead worker (adr/0045), with what that
    reading depended on. The connect stage takes a part's mentions only when its own reading would
    depend on the same: the session's project and file-naming basis (``ProjectPaths.basis``), the
    same rows in the same order, and the same answer to every "is this imported name the project's
    own" the worker asked. Otherwise it reads the rows itself, so what is linked never differs."""

    project: str
    paths: tuple[str | None, tuple[str, ...], str | None]
    local: Mapping[str, bool]
    parts: Mapping[tuple[str, ...], PartMentions]  # the external ids of a part's rows → its mentions


@dataclass(frozen=True, slots=True)
class Written:
    """A session an import just wrote: its messages in hand by key, the keys updated in place, and
    what its messages touched when the read-ahead worker read that already."""

    session_id: int
    messages: Mapping[str, TranscriptMessage]
    updated: tuple[str, ...] = ()
    ahead: MentionsAhead | None = None


def connect_written(conn: sqlite3.Connection, writer: Writer, written: Iterable[Written]) -> int:
    """Connect the messages each written session gained; returns how many links were added."""
    connector = _Connector(conn, writer)
    return sum(connector.session(item) for item in written)


def connect_record(conn: sqlite3.Connection, writer: Writer, kind: RecordKind, row_id: int) -> int:
    """Connect a decision, learning or breadcrumb to what its text names (again, after a correction)."""
    kind = RecordKind(kind)
    if kind not in TYPED_KINDS:
        return 0
    writer.unlink_entities(f"{kind.value}_id", row_id)
    return _Connector(conn, writer).record(kind, row_id)


def connect_pending(store: Store, *, budget_seconds: float = 30.0) -> int:
    """Connect what was stored before connections existed: sessions never connected, and records past
    the last one connected. Each session is one transaction; the rest waits for the next call."""
    deadline = time.monotonic() + budget_seconds
    added = 0
    with store.reading() as conn:
        sessions = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM sessions WHERE id NOT IN (SELECT session_id FROM entity_scans) ORDER BY id"
            )
        ]
    for session_id in sessions:
        if time.monotonic() > deadline:
            return added
        with store.transaction() as writer:
            added += _Connector(store.connection, writer).session(Written(session_id, {}))
    for kind in TYPED_KINDS:
        with store.transaction() as writer:
            conn = store.connection
            mark = conn.execute(
                "SELECT row_id FROM entity_record_scans WHERE kind = ?", (kind.value,)
            ).fetchone()
            rows = conn.execute(
                f"SELECT id FROM {TABLE_NAMES[kind]} WHERE id > ? ORDER BY id", (mark[0] if mark else 0,)
            ).fetchall()
            for (row_id,) in rows:
                added += connect_record(conn, writer, kind, row_id)
            if rows:
                writer.mark_records_connected(kind.value, rows[-1][0])
    return added


class _Connector:
    """One transaction's work: entity ids, each project's roots and own names, each session's calls."""

    def __init__(self, conn: sqlite3.Connection, writer: Writer) -> None:
        self.conn = conn
        self.writer = writer
        self.ids: dict[tuple[str, str, str], int] = {}
        self.roots: dict[str, list[str]] = {}
        self.local: dict[tuple[str, str], bool] = {}
        self.bare: dict[tuple[str, str], str] = {}

    # -- sessions --------------------------------------------------------------------------------

    def session(self, written: Written) -> int:
        conn = self.conn
        session = conn.execute(
            "SELECT project, cwd, coalesce(started_at, created_at) AS at FROM sessions WHERE id = ?",
            (written.session_id,),
        ).fetchone()
        if session is None:
            return 0
        mark = conn.execute(
            "SELECT message_id FROM entity_scans WHERE session_id = ?", (written.session_id,)
        ).fetchone()
        since = mark[0] if mark else 0
        # Ids and times are all a reading made ahead needs; the text is fetched only to read here.
        ahead = None if written.updated else written.ahead  # a row rewritten in place is read here
        rows = self._messages(written, since, _READ if ahead is None else _LIGHT)
        if not rows:
            if mark is None:  # nothing to read (its messages were forgotten): connected all the same
                self.writer.mark_connected(written.session_id, 0)
            return 0
        project = session["project"]
        paths = ProjectPaths(session["cwd"], self._roots(project))
        made = None if ahead is None else self._read_ahead(ahead, project, paths, rows)
        if made is None:
            if ahead is not None:  # only ids and times were fetched
                rows = self._messages(written, since, _READ)
            made = read_mentions(
                rows,
                written.messages,
                paths,
                lambda name: self._is_local(project, name),
                self._stored_call(written),
            )
        mentions, files = made
        self._prefetch(project, [mention for found in mentions for mention in found], files)
        links: list[dict[str, Any]] = []
        # Linked after the whole read: a file named early may be edited later.
        for row, found in zip(rows, mentions, strict=True):
            at = row["timestamp"] or session["at"]
            for mention in found:
                link = self._link(project, mention, at, "message_id", row["id"], files)
                if link is not None:
                    links.append({**link, "session_id": written.session_id})
        added = self.writer.link_entities(links)
        self.writer.mark_connected(written.session_id, max(row["id"] for row in rows))
        return added

    def _messages(self, written: Written, mark: int, columns: str) -> list[sqlite3.Row]:
        """Messages past the mark, and the ones an import changed in place (their links start over)."""
        rows = self.conn.execute(
            f"SELECT {columns} FROM messages WHERE session_id = ? AND id > ? ORDER BY id",
            (written.session_id, mark),
        ).fetchall()
        for key in written.updated:
            row = self.conn.execute(
                f"SELECT {columns} FROM messages WHERE session_id = ? AND external_id = ? AND id <= ?",
                (written.session_id, key, mark),
            ).fetchone()
            if row is not None:
                self.writer.unlink_entities("message_id", row["id"])
                rows.append(row)
        return sorted(rows, key=lambda row: row["id"])

    def _read_ahead(
        self, ahead: MentionsAhead, project: str, paths: ProjectPaths, rows: Sequence[sqlite3.Row]
    ) -> PartMentions | None:
        """The worker's reading of exactly these rows (none updated in place: see ``session``), when
        it rests on what this reading would."""
        if ahead.project != project or ahead.paths != paths.basis():
            return None
        made = ahead.parts.get(tuple(row["external_id"] for row in rows))
        if made is None or any(
            self._is_local(project, name) != is_own for name, is_own in ahead.local.items()
        ):
            return None
        return made

    def _stored_call(self, written: Written) -> Callable[[str], Mapping[str, Any] | None]:
        """The stored call a result answers, when the call came in an earlier import."""

        def find(call_id: str) -> Mapping[str, Any] | None:
            return self.conn.execute(
                "SELECT tool_name, content FROM messages WHERE session_id = ? AND external_id = ?",
                (written.session_id, f"call:{call_id}"),
            ).fetchone()

        return find

    # -- records ---------------------------------------------------------------------------------

    def record(self, kind: RecordKind, row_id: int) -> int:
        row = self.conn.execute(
            f"SELECT project, created_at, content, detail, tags FROM {TABLE_NAMES[kind]} WHERE id = ?",
            (row_id,),
        ).fetchone()
        if row is None:
            return 0
        project = row["project"]
        tags = " ".join(json.loads(row["tags"] or "[]"))
        text = "\n".join(part for part in (row["content"], row["detail"], tags) if part)
        mentions = text_mentions(text, ProjectPaths(None, self._roots(project)))
        named = known_entities(self.conn, project, text)
        mentions += [Mention(EntityType(e.type), e.name, Relation.MENTIONS) for e in named]
        owner = f"{kind.value}_id"
        links = [self._link(project, m, row["created_at"], owner, row_id, {}) for m in mentions]
        return self.writer.link_entities([link for link in links if link is not None])

    # -- shared ----------------------------------------------------------------------------------

    def _prefetch(self, project: str, mentions: Sequence[Mention], files: Mapping[str, str]) -> None:
        """The ids of every entity ``_link`` will ask for, in the order it would ask, found in a few
        queries rather than one each: an import names the same files and commands session after
        session (adr/0046)."""
        wanted: list[tuple[str, str]] = []
        for mention in mentions:
            name = self._named(project, mention, files)
            if name is None:
                continue
            if mention.via:
                wanted.append((str(mention.via[0]), mention.via[1]))
            wanted.append((str(mention.type), name))
        missing = [key for key in dict.fromkeys(wanted) if (project, *key) not in self.ids]
        if missing:
            for (type_, name), found in self.writer.entities(project, missing).items():
                self.ids[project, type_, name] = found

    def _named(self, project: str, mention: Mention, files: Mapping[str, str]) -> str | None:
        """The entity name a mention links to; None for a bare file name left out."""
        if mention.type is EntityType.FILE and mention.relation is Relation.MENTIONS:
            return self._resolve_bare(project, mention.name, files)
        return mention.name

    def _link(
        self, project: str, mention: Mention, at: str, owner: str, owner_id: int, files: Mapping[str, str]
    ) -> dict[str, Any] | None:
        name = self._named(project, mention, files)
        if name is None:
            return None
        via = self._entity(project, *mention.via) if mention.via else None
        return {
            "entity_id": self._entity(project, mention.type, name),
            "relation": mention.relation.value,
            "at": at,
            owner: owner_id,
            "via_id": via,
            "detail": mention.detail,
        }

    def _entity(self, project: str, type_: str, name: str) -> int:
        key = (project, str(type_), name)
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = self.writer.entity(project, str(type_), name)
        return found

    def _roots(self, project: str) -> list[str]:
        if project not in self.roots:
            self.roots[project] = project_roots(self.conn, project)
        return self.roots[project]

    def _is_local(self, project: str, name: str) -> bool:
        key = (project, name)
        if key not in self.local:
            self.local[key] = is_local_name(self.conn, project, name)
        return self.local[key]

    def _resolve_bare(self, project: str, name: str, files: Mapping[str, str]) -> str | None:
        """A file named without folders (``session.py``) is the one file of that name the session or the
        project knows, when there is exactly one; else it stays as written. An unknown bare ``x.js``
        in prose is a library's name far more often than a file (``xterm.js``), and is left out."""
        if "/" in name:
            return name
        if name in files:
            return files[name]
        key = (project, name)
        if key not in self.bare:
            rows = self.conn.execute(
                "SELECT name FROM entities WHERE key = ? AND project = ? AND type = 'file' LIMIT 2",
                (name.lower(), project),
            ).fetchall()
            self.bare[key] = rows[0][0] if len(rows) == 1 and rows[0][0].endswith("/" + name) else name
        found = self.bare[key]
        return None if found == name and name.lower().endswith(".js") else found


def project_roots(conn: sqlite3.Connection, project: str) -> list[str]:
    """The working directories of a project's sessions, which name its files (``ProjectPaths``)."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT cwd FROM sessions WHERE project = ? AND cwd IS NOT NULL LIMIT ?",
            (project, MAX_ROOTS),
        )
    ]


def is_local_name(conn: sqlite3.Connection, project: str, name: str) -> bool:
    """Whether an imported top-level name is the project's own: a folder or module it has files in."""
    if name.lower().replace("-", "_") == project.lower().replace("-", "_"):
        return True
    ranges = [(f"{p}{name}/", f"{p}{name}0") for p in _LOCAL_PREFIXES]
    where = " OR ".join("(name >= ? AND name < ?)" for _ in ranges)
    found = conn.execute(
        f"SELECT 1 FROM entities WHERE project = ? AND type = 'file' AND ({where} OR name = ?) LIMIT 1",
        (project, *(bound for pair in ranges for bound in pair), f"{name}.py"),
    ).fetchone()
    return found is not None


def read_mentions(
    rows: Sequence[MessageRow],
    messages: Mapping[str, TranscriptMessage],
    paths: ProjectPaths,
    is_local: Callable[[str], bool],
    stored_call: Callable[[str], Mapping[str, Any] | None],
) -> PartMentions:
    """What each of a session's rows touched, read in order (a shell call pairs with the result that
    answers it), and the files its tool calls named. ``messages`` are the same messages in hand by
    key, when an import has them; ``stored_call`` finds a call stored before these rows."""
    reader = _SessionReader(paths, is_local, stored_call)
    found = tuple(tuple(reader.read(row, messages.get(row["external_id"]))) for row in rows)
    return found, reader.files


class _SessionReader:
    """Reads one session's messages in order, pairing each shell call with the result that answers it."""

    def __init__(
        self,
        paths: ProjectPaths,
        is_local: Callable[[str], bool],
        stored_call: Callable[[str], Mapping[str, Any] | None],
    ) -> None:
        self.paths = paths
        self.is_local = is_local
        self.stored_call = stored_call
        self.commands: dict[str, list[ShellCommand]] = {}
        self.files: dict[str, str] = {}  # base name → the one path of that name touched by a tool

    def read(self, row: MessageRow, message: TranscriptMessage | None) -> list[Mention]:
        """What one stored message touched; ``message`` is the same message in hand, when an import
        has it (its tool calls carry their full arguments)."""
        kind = row["kind"]
        if kind == "tool_call":
            return self._call(row, message.tool_calls if message else None, _call_id(row, message))
        if kind == "tool_result":
            call_id = _call_id(row, message)
            commands = self.commands.pop(call_id or "", None)
            if commands is None:
                commands = self._stored_commands(call_id)
            return result_mentions(row["content"], commands)
        if kind == "text" and row["origin"] in _SPOKEN:
            return text_mentions(row["content"], self.paths)
        return []

    def _call(self, row: MessageRow, calls: Sequence[ToolCall] | None, call_id: str | None) -> list[Mention]:
        if not calls:
            calls = [ToolCall(row["tool_name"] or "", _gist(row["content"], row["tool_name"]))]
        mentions: list[Mention] = []
        commands: list[ShellCommand] = []
        for call in calls:
            found, ran = call_mentions(call.name, call.arguments, self.paths, self.is_local)
            mentions += found
            commands += ran
        for mention in mentions:
            if mention.type is EntityType.FILE and mention.relation is not Relation.MENTIONS:
                base = mention.name.rsplit("/", 1)[-1]
                self.files[base] = (
                    mention.name if self.files.get(base, mention.name) == mention.name else base
                )
        if commands and call_id:
            self.commands[call_id] = commands
        elif commands:  # Cursor puts a call and its output in one message
            mentions += result_mentions(row["content"], commands)
        return mentions

    def _stored_commands(self, call_id: str | None) -> list[ShellCommand]:
        stored = self.stored_call(call_id) if call_id else None
        if stored is None:
            return []
        gist = _gist(stored["content"], stored["tool_name"])
        return call_mentions(stored["tool_name"] or "", gist, self.paths, self.is_local)[1]


def _call_id(row: MessageRow, message: TranscriptMessage | None) -> str | None:
    """The id tying a call to its result: Claude's ``tool_use_id``, Codex's ``call_id``."""
    if message is not None:
        data = message.meta
    elif row["meta"] and row["meta"] != "{}":
        data = json.loads(row["meta"])
    else:
        return None
    found = data.get("tool_use_id") or data.get("call_id")
    return found if isinstance(found, str) else None


def _gist(content: str, tool_name: str | None) -> str:
    """A stored call is ``Name: one-line gist``; the gist names its file or command."""
    first = content.strip().split("\n", 1)[0]
    if tool_name and first.lower().startswith(tool_name.lower() + ":"):
        return first[len(tool_name) + 1 :].strip()
    return first
