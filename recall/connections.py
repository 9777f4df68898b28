"""Connections: what memory knows about a file, symbol, package, command or error (adr/0019).

``find_connections`` answers "what do we know about ``src/auth/session.py``?": the decisions,
learnings and breadcrumbs that mention it, the sessions that touched it (newest first, with what
they did), and the entities seen with it (files edited in the same sessions, errors hit there, the
definitions a file holds, the file a symbol lives in). ``knowledge_graph`` pages through a project's
entities with their links as nodes and edges; ``row_entities`` lists what one row touched; the
entities a task names (``known_entities``) steer ``context_for_agent``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from recall.entities.mention import EntityType, query_keys
from recall.errors import InvalidInput

if TYPE_CHECKING:
    from recall.store import Store

RECENT_SESSIONS = 10  # related entities are looked for in this many of the latest sessions
MAX_LIMIT = 200
MAX_GRAPH_NODES = 500
_RECORD_OWNERS = {"decision": "decision_id", "learning": "learning_id", "breadcrumb": "breadcrumb_id"}


@dataclass(frozen=True, slots=True)
class EntityRef:
    id: int
    project: str
    type: str
    name: str


@dataclass(frozen=True, slots=True)
class RecordRef:
    """A decision, learning or breadcrumb that mentions the entity."""

    kind: str
    id: int
    project: str
    created_at: str
    provenance: str
    content: str
    detail: str | None = None
    status: str | None = None
    importance: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ref": f"{self.kind}#{self.id}", **asdict(self)}


@dataclass(frozen=True, slots=True)
class SessionTouch:
    """A session that touched the entity: when it last did, and what it did (relation → times)."""

    session_id: int
    project: str
    host: str
    title: str | None
    started_at: str | None
    last_at: str
    did: dict[str, int]
    summary_id: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"ref": f"session#{self.session_id}", **asdict(self)}


@dataclass(frozen=True, slots=True)
class Related:
    """An entity seen with the one asked about: ``how`` it relates, in how many sessions or links."""

    entity: EntityRef
    how: str  # edited_with, failed_with, defines, imports, installs, raised, in_file, from_command
    count: int


@dataclass(frozen=True, slots=True)
class Connections:
    query: str
    project: str | None
    entities: tuple[EntityRef, ...]
    decisions: tuple[RecordRef, ...] = ()
    learnings: tuple[RecordRef, ...] = ()
    breadcrumbs: tuple[RecordRef, ...] = ()
    sessions: tuple[SessionTouch, ...] = ()
    related: tuple[Related, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data, every record and session with its ref (``kind#id``)."""
        return {
            "query": self.query,
            "project": self.project,
            "entities": [asdict(entity) for entity in self.entities],
            **{
                name: [r.to_dict() for r in getattr(self, name)]
                for name in ("decisions", "learnings", "breadcrumbs")
            },
            "sessions": [touch.to_dict() for touch in self.sessions],
            "related": [asdict(related) for related in self.related],
        }


@dataclass(frozen=True, slots=True)
class Graph:
    """One page of a project's graph: entities and the sessions and records linked to them."""

    project: str
    nodes: tuple[dict[str, Any], ...]
    edges: tuple[dict[str, Any], ...]
    total_entities: int
    offset: int
    next_offset: int | None = None
    truncated_edges: bool = False
    types: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_entities(
    conn: sqlite3.Connection, words: Iterable[str], project: str | None, *, exact: bool
) -> list[EntityRef]:
    """Entities named by ``words``. A file matches by its path, a path suffix or its base name
    (``session.py``, ``auth/session.py``, ``/home/a/repo/src/auth/session.py``). ``exact=False`` (a
    person's query) also lets a program name every command it runs (``git``) and matches symbols
    without case; ``exact=True`` (words read from a record or a task) does not."""
    wanted = [w.strip().removesuffix("()") for w in words if w and w.strip()]
    keys = sorted(set().union(*(query_keys(w) for w in wanted))) if wanted else []
    if not keys:
        return []
    marks = ", ".join("?" for _ in keys)
    scope, params = ("AND project = ?", [*keys, project]) if project else ("", keys)
    rows = conn.execute(
        f"SELECT id, project, type, name FROM entities WHERE key IN ({marks}) {scope} ORDER BY id", params
    ).fetchall()
    return [EntityRef(*row) for row in rows if any(_matches(row[2], row[3], w, exact) for w in wanted)]


def _matches(type_: str, name: str, word: str, exact: bool) -> bool:
    if type_ == EntityType.FILE:
        word = word.removeprefix("./")
        return name == word or name.endswith("/" + word) or ("/" in word and word.endswith("/" + name))
    if type_ == EntityType.SYMBOL:
        return name == word or (not exact and name.lower() == word.lower())
    if type_ == EntityType.COMMAND:
        lowered, asked = name.lower(), word.lower()
        return lowered == asked or (not exact and lowered.startswith(asked + " "))
    if type_ == EntityType.ERROR:
        return name == word or name.lower().startswith(word.lower() + ":")
    if type_ == EntityType.URL:
        return name == word.rstrip("/")
    return name.lower() == word.lower()


def known_entities(conn: sqlite3.Connection, project: str | None, text: str) -> list[EntityRef]:
    """The project's entities a record or task names exactly: files by path or base name, and
    symbols, packages, commands and errors written as code (``build_summary``, `pytest`, KeyError)."""
    from recall.entities.text import code_words, file_paths

    words = list(dict.fromkeys(file_paths(text) + code_words(text)))
    return find_entities(conn, words, project, exact=True)


@dataclass(frozen=True, slots=True)
class TaskConnections:
    """What the entities a task names lead to: the records mentioning them and the latest sessions."""

    entities: tuple[EntityRef, ...]
    records: tuple[tuple[str, int], ...]  # (kind, id) of decisions, learnings and breadcrumbs
    summaries: tuple[int, ...]  # session summary ids of the latest sessions that touched them


def task_connections(
    conn: sqlite3.Connection, text: str, project: str | None, *, sessions: int = 3
) -> TaskConnections:
    """The connections a brief for ``text`` should carry (``context_for_agent``)."""
    named = known_entities(conn, project, text)
    if not named:
        return TaskConnections((), (), ())
    ids = [e.id for e in named]
    records = tuple((r.kind, r.id) for r in _records(conn, ids, MAX_LIMIT))
    touched = _sessions(conn, ids, sessions * 3)
    summaries = tuple(t.summary_id for t in touched if t.summary_id is not None)[:sessions]
    return TaskConnections(tuple(named), records, summaries)


def find_connections(store: Store, query: str, project: str | None, *, limit: int = 10) -> Connections:
    """Everything memory links to the entities ``query`` names, in ``project`` (None: every project)."""
    if not query.strip():
        raise InvalidInput("name an entity: a file path, symbol, package, command or error")
    _check_limit(limit)
    with store.reading() as conn:
        entities = find_entities(conn, [query], project, exact=False)
        if not entities:
            return Connections(query, project, ())
        ids = [e.id for e in entities]
        records = _records(conn, ids, limit)
        sessions = _sessions(conn, ids, limit)
        related = _related(conn, ids, limit)
    return Connections(
        query,
        project,
        tuple(entities),
        decisions=tuple(r for r in records if r.kind == "decision"),
        learnings=tuple(r for r in records if r.kind == "learning"),
        breadcrumbs=tuple(r for r in records if r.kind == "breadcrumb"),
        sessions=tuple(sessions),
        related=tuple(related),
    )


def _records(conn: sqlite3.Connection, ids: Sequence[int], limit: int) -> list[RecordRef]:
    """Records mentioning the entities: active decisions before the others, newest first."""
    marks = ", ".join("?" for _ in ids)
    found: list[RecordRef] = []
    for kind, owner in _RECORD_OWNERS.items():
        extra = {"decision": "status", "learning": "NULL", "breadcrumb": "NULL"}[kind]
        rows = conn.execute(
            f"""SELECT r.id, r.project, r.created_at, r.provenance, r.content, r.detail, {extra} AS status,
                       r.importance
                FROM {kind}s r
                WHERE r.id IN (SELECT {owner} FROM entity_links WHERE entity_id IN ({marks})
                               AND message_id IS NULL AND {owner} IS NOT NULL)
                ORDER BY ({extra} IS NOT NULL AND {extra} != 'active'), r.created_at DESC LIMIT ?""",
            (*ids, limit),
        ).fetchall()
        found += [RecordRef(kind, *row) for row in rows]
    return found


def _latest_sessions(conn: sqlite3.Connection, ids: Sequence[int], count: int) -> dict[int, str]:
    """The ``count`` sessions that touched the entities last, with when: each entity's links are read
    newest first down its index and reading stops at ``count`` sessions, so a hub like ``pytest``
    costs no more than a file touched twice."""
    latest: dict[int, str] = {}
    for entity_id in ids:
        seen: dict[int, str] = {}
        rows = conn.execute(
            "SELECT session_id, at FROM entity_links WHERE entity_id = ? AND session_id IS NOT NULL "
            "ORDER BY at DESC",
            (entity_id,),
        )
        for session_id, at in rows:
            if session_id not in seen:
                seen[session_id] = at
                if len(seen) == count:
                    break
        for session_id, at in seen.items():
            latest[session_id] = max(latest.get(session_id, ""), at)
    newest = sorted(latest, key=lambda s: (latest[s], s), reverse=True)[:count]
    return {s: latest[s] for s in newest}


def _sessions(conn: sqlite3.Connection, ids: Sequence[int], limit: int) -> list[SessionTouch]:
    """Sessions that touched the entities, the latest first, each with what it did and how often."""
    last = _latest_sessions(conn, ids, limit)
    if not last:
        return []
    marks = ", ".join("?" for _ in ids)
    smarks = ", ".join("?" for _ in last)
    did: dict[int, dict[str, int]] = {}
    for session_id, relation, times in conn.execute(
        f"""SELECT session_id, relation, count(*) FROM entity_links
            WHERE session_id IN ({smarks}) AND entity_id IN ({marks}) GROUP BY session_id, relation""",
        (*last, *ids),
    ):
        did.setdefault(session_id, {})[relation] = times
    info = {
        row[0]: row
        for row in conn.execute(
            f"""SELECT s.id, s.project, s.host, coalesce(s.title, ss.title), s.started_at, ss.id FROM sessions s
                LEFT JOIN session_summaries ss ON ss.session_id = s.id WHERE s.id IN ({smarks})""",
            list(last),
        )
    }
    return [
        SessionTouch(s, info[s][1], info[s][2], info[s][3], info[s][4], last[s], did.get(s, {}), info[s][5])
        for s in last
        if s in info
    ]


def _related(conn: sqlite3.Connection, ids: Sequence[int], limit: int) -> list[Related]:
    """Files edited and errors hit in the latest sessions that touched the entities, the definitions a
    file holds and the file or command an entity came within; the most frequent of each, in SQL."""
    marks = ", ".join("?" for _ in ids)
    recent = list(_latest_sessions(conn, ids, RECENT_SESSIONS))
    counted: list[tuple[int, str, int]] = []
    if recent:
        smarks = ", ".join("?" for _ in recent)
        counted += conn.execute(
            f"""SELECT l.entity_id, CASE l.relation WHEN 'edited' THEN 'edited_with' ELSE 'failed_with' END,
                       count(DISTINCT l.session_id) AS sessions
                FROM entity_links l JOIN entities e ON e.id = l.entity_id
                WHERE l.session_id IN ({smarks}) AND l.entity_id NOT IN ({marks})
                AND ((l.relation = 'edited' AND e.type = 'file') OR (l.relation = 'failed_on' AND e.type = 'error'))
                GROUP BY l.entity_id, l.relation ORDER BY sessions DESC, l.entity_id LIMIT ?""",
            (*recent, *ids, limit),
        ).fetchall()
    counted += conn.execute(
        f"""SELECT * FROM (SELECT entity_id, 'holds', count(*) AS n FROM entity_links WHERE via_id IN ({marks})
                           GROUP BY entity_id ORDER BY n DESC, entity_id LIMIT ?)
            UNION ALL
            SELECT * FROM (SELECT via_id, 'within', count(*) AS n FROM entity_links WHERE entity_id IN ({marks})
                           AND via_id IS NOT NULL GROUP BY via_id ORDER BY n DESC, via_id LIMIT ?)""",
        (*ids, limit, *ids, limit),
    ).fetchall()
    entities = _entity_refs(conn, {row[0] for row in counted})
    asked = {t for (t,) in conn.execute(f"SELECT DISTINCT type FROM entities WHERE id IN ({marks})", ids)}
    related = [
        Related(entities[entity_id], _how(how, entities[entity_id].type, asked), count)
        for entity_id, how, count in counted
        if entity_id in entities
    ]
    # What the entity holds or lies in comes before what merely shared a session with it.
    related.sort(key=lambda r: (r.how in ("edited_with", "failed_with"), -r.count, r.how, r.entity.name))
    return related[:limit]


def _how(how: str, type_: str, asked: set[str]) -> str:
    """Name what ties an entity to the one asked about: a file defines symbols and imports packages, a
    command installs packages and raised errors; a symbol is in a file, an error came from a command."""
    if how == "holds":
        if type_ == EntityType.PACKAGE:
            return "imports" if EntityType.FILE in asked else "installs"
        return {EntityType.SYMBOL: "defines", EntityType.ERROR: "raised"}.get(EntityType(type_), "holds")
    if how == "within":
        return {EntityType.FILE: "in_file", EntityType.COMMAND: "from_command"}.get(
            EntityType(type_), "within"
        )
    return how


def _entity_refs(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, EntityRef]:
    wanted = sorted(ids)
    if not wanted:
        return {}
    rows = conn.execute(
        f"SELECT id, project, type, name FROM entities WHERE id IN ({', '.join('?' for _ in wanted)})", wanted
    ).fetchall()
    return {row[0]: EntityRef(*row) for row in rows}


def knowledge_graph(
    store: Store,
    project: str,
    *,
    limit: int = 100,
    offset: int = 0,
    types: Sequence[str] = (),
    max_edges: int = 1000,
) -> Graph:
    """A page of ``project``'s graph: its most connected entities (``limit`` from ``offset``) as nodes,
    with the sessions and records linked to them and the edges between; ``next_offset`` pages on."""
    if not 1 <= limit <= MAX_GRAPH_NODES:
        raise InvalidInput(f"limit must be from 1 to {MAX_GRAPH_NODES}, got {limit}")
    if offset < 0:
        raise InvalidInput("offset must be zero or more")
    unknown = set(types) - {t.value for t in EntityType}
    if unknown:
        raise InvalidInput(
            f"unknown entity types {sorted(unknown)}; use {', '.join(t.value for t in EntityType)}"
        )
    kinds = list(types) or [t.value for t in EntityType]
    tmarks = ", ".join("?" for _ in kinds)
    with store.reading() as conn:
        total = conn.execute(
            f"SELECT count(*) FROM entities WHERE project = ? AND type IN ({tmarks})", (project, *kinds)
        ).fetchone()[0]
        page = conn.execute(
            f"""SELECT e.id, e.type, e.name, count(l.id) AS links FROM entities e
                JOIN entity_links l ON l.entity_id = e.id
                WHERE e.project = ? AND e.type IN ({tmarks})
                GROUP BY e.id ORDER BY links DESC, e.id LIMIT ? OFFSET ?""",
            (project, *kinds, limit, offset),
        ).fetchall()
        edges, truncated = _graph_edges(conn, [row[0] for row in page], max_edges)
        nodes = [
            {"id": f"entity#{i}", "kind": "entity", "type": t, "name": n, "links": c} for i, t, n, c in page
        ]
        nodes += _owner_nodes(conn, edges)
    more = offset + len(page) < total and len(page) == limit
    return Graph(
        project,
        tuple(nodes),
        tuple(edges),
        total,
        offset,
        offset + len(page) if more else None,
        truncated,
        tuple(kinds),
    )


def _graph_edges(
    conn: sqlite3.Connection, ids: Sequence[int], max_edges: int
) -> tuple[list[dict[str, Any]], bool]:
    if not ids:
        return [], False
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"""SELECT entity_id, relation,
                   CASE WHEN decision_id IS NOT NULL THEN 'decision#' || decision_id
                        WHEN learning_id IS NOT NULL THEN 'learning#' || learning_id
                        WHEN breadcrumb_id IS NOT NULL THEN 'breadcrumb#' || breadcrumb_id
                        ELSE 'session#' || session_id END AS owner,
                   count(*) AS times, max(at) AS last_at
            FROM entity_links WHERE entity_id IN ({marks}) GROUP BY entity_id, relation, owner
            UNION ALL
            SELECT entity_id, CASE WHEN e.type = 'symbol' THEN 'defined_in' ELSE 'came_from' END,
                   'entity#' || via_id, count(*), max(at)
            FROM entity_links JOIN entities e ON e.id = entity_id
            WHERE entity_id IN ({marks}) AND via_id IS NOT NULL GROUP BY entity_id, via_id
            ORDER BY last_at DESC LIMIT ?""",
        (*ids, *ids, max_edges + 1),
    ).fetchall()
    edges = [
        {
            "source": owner,
            "target": f"entity#{entity_id}",
            "relation": relation,
            "count": times,
            "last_at": last,
        }
        for entity_id, relation, owner, times, last in rows[:max_edges]
    ]
    for edge in edges:
        if edge["relation"] in ("defined_in", "came_from"):
            edge["source"], edge["target"] = edge["target"], edge["source"]
    return edges, len(rows) > max_edges


def _owner_nodes(conn: sqlite3.Connection, edges: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Nodes for the sessions, records and entities the edges reach beyond the page's entities."""
    wanted: dict[str, set[int]] = {}
    for edge in edges:
        for end in (edge["source"], edge["target"]):
            kind, _, number = end.partition("#")
            wanted.setdefault(kind, set()).add(int(number))
    nodes: list[dict[str, Any]] = []
    sql = {
        "session": "SELECT id, coalesce(title, host || ' session'), started_at FROM sessions",
        "decision": "SELECT id, content, created_at FROM decisions",
        "learning": "SELECT id, content, created_at FROM learnings",
        "breadcrumb": "SELECT id, content, created_at FROM breadcrumbs",
    }
    for kind, query in sql.items():
        ids = sorted(wanted.get(kind, ()))
        if ids:
            rows = conn.execute(f"{query} WHERE id IN ({', '.join('?' for _ in ids)})", ids).fetchall()
            nodes += [
                {"id": f"{kind}#{i}", "kind": kind, "name": label[:120], "at": at} for i, label, at in rows
            ]
    return nodes


def row_entities(store: Store, kind: str, row_id: int, *, limit: int = 50) -> list[dict[str, Any]]:
    """What one stored row touched, for `recall show` and memory_get: a message or record's own links,
    a session's (or its summary's session's) links summed per entity and relation."""
    owner = {"message": "message_id", **_RECORD_OWNERS, "session": "session_id"}.get(kind)
    with store.reading() as conn:
        if kind == "session_summary":
            found = conn.execute(
                "SELECT session_id FROM session_summaries WHERE id = ?", (row_id,)
            ).fetchone()
            owner, row_id = "session_id", (found[0] if found and found[0] is not None else -1)
        if owner is None:
            return []
        rows = conn.execute(
            f"""SELECT e.type, e.name, l.relation, count(*) AS times, max(l.at) AS last_at
                FROM entity_links l JOIN entities e ON e.id = l.entity_id WHERE l.{owner} = ?
                GROUP BY e.id, l.relation ORDER BY times DESC, last_at DESC LIMIT ?""",
            (row_id, limit),
        ).fetchall()
    return [{"type": t, "name": n, "relation": r, "times": c, "last_at": at} for t, n, r, c, at in rows]


def entity_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Entities per type, every type listed."""
    counts = dict(conn.execute("SELECT type, count(*) FROM entities GROUP BY type").fetchall())
    return {t.value: counts.get(t.value, 0) for t in EntityType}


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be from 1 to {MAX_LIMIT}, got {limit}")
