"""The team server's side of sync and tokens, over a PostgreSQL ``Memory`` (adr/0025).

``TeamServer`` is what `recall serve` (an edge) calls: it authenticates a bearer token to a
``Member``, hands each member a ``Memory`` limited to their projects and writing as them, takes a
push (sessions and messages through the store's own transcript import, records through
``recall.store.synced``) and answers a pull (the decisions, learnings and profiles changed since a
sequence number). Every answer is plain JSON-ready data.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.pg.team import SESSION_CODE, Member, add_token, list_tokens, member_for, revoke_token
from recall.rowkinds import KIND_BY_CODE, KIND_CODES, TABLE_NAMES, DecisionStatus, RecordKind
from recall.store.erase import forget_synced
from recall.store.synced import FORGOTTEN_KINDS, change_status, record_kind, write_record
from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

if TYPE_CHECKING:
    from recall.memory import Memory
    from recall.pg.store import PgStore

MAX_BATCH = 2000  # messages or records in one push: a bigger body is refused, the client splits
PULL_PAGE = 500
PULLED_CODES = (  # 0: profiles
    KIND_CODES[RecordKind.DECISION], KIND_CODES[RecordKind.LEARNING], KIND_CODES[RecordKind.BREADCRUMB], 0,
)  # fmt: skip
# Tombstones a pull hands on: the records it pulls, and sessions (a machine may hold the same one).
FORGOTTEN_CODES = (*PULLED_CODES[:-1], SESSION_CODE)


class TeamServer:
    """One PostgreSQL memory shared by the people holding its tokens."""

    def __init__(self, memory: Memory) -> None:
        if memory.url is None:
            raise InvalidInput(
                "the team server runs on PostgreSQL: pass --db postgresql://... (or RECALL_DB)"
            )
        self.memory = memory
        self._members: dict[Member, Memory] = {}
        self._lock = threading.Lock()

    @property
    def store(self) -> PgStore:
        from recall.pg.store import PgStore

        store = self.memory.store
        assert isinstance(store, PgStore)
        return store

    # -- tokens ----------------------------------------------------------------------------------

    def add_token(self, name: str, projects: tuple[str, ...]) -> str:
        return add_token(self.store, name, projects)

    def tokens(self) -> list[dict[str, Any]]:
        with self.store.team() as raw:
            return list_tokens(raw)

    def revoke(self, name: str) -> int:
        return revoke_token(self.store, name)

    def authenticate(self, token: str | None) -> Member | None:
        if not token:
            return None
        with self.store.team() as raw:
            return member_for(raw, token)

    def memory_for(self, member: Member) -> Memory:
        """The member's ``Memory``: their projects only, every write recorded as theirs."""
        from recall.memory import Memory

        with self._lock:
            found = self._members.get(member)
            if found is None:
                found = Memory(self.memory.url, embedder=self.memory._embedder)
                found._store = self.store.view(member.name)
                found.limit_to(member.projects)
                self._members[member] = found
            return found

    # -- sync ------------------------------------------------------------------------------------

    def push(self, member: Member, batch: Mapping[str, Any]) -> dict[str, Any]:
        """Store what one machine sends; idempotent by natural keys, so a batch sent twice adds nothing."""
        sessions = list(batch.get("sessions") or [])
        messages = list(batch.get("messages") or [])
        records = list(batch.get("records") or [])
        profiles = list(batch.get("profiles") or [])
        summaries = list(batch.get("summaries") or [])
        forgotten = list(batch.get("forgotten") or [])
        if max(len(messages), len(records), len(summaries), len(forgotten)) > MAX_BATCH:
            raise InvalidInput(f"at most {MAX_BATCH} messages or records per push; send smaller batches")
        store = self.store.view(member.name)
        refused: list[str] = []
        erased = self._push_forgotten(store, member, forgotten, refused) if forgotten else {}
        added = self._push_transcripts(store, member, sessions, messages, refused)
        answers = [self._push_record(store, member, row, refused) for row in self._ordered(records)]
        answers += [self._push_summary(store, member, row, refused) for row in summaries]
        for row in profiles:
            if member.may_use(str(row.get("project"))):
                mine = self.memory_for(member)
                if mine.profile(str(row["project"])).get(str(row["key"])) != row["value"]:
                    mine.set_profile(str(row["key"]), str(row["value"]), project=str(row["project"]))
            else:
                refused.append(
                    f"profile {row.get('project')}/{row.get('key')}: project not open to this token"
                )
        return {
            "messages_added": added,
            "records": [a for a in answers if a],
            "forgotten": len(forgotten),
            "erased": erased,
            "refused": refused,
        }

    def _push_forgotten(
        self, store: PgStore, member: Member, items: Sequence[Mapping[str, Any]], refused: list[str]
    ) -> dict[str, int]:
        """Erase what a machine forgot: records by their row here, sessions and messages by digest
        (remembered even when this server never held them, so no push brings them)."""
        records: list[tuple[RecordKind, int]] = []
        digests: list[tuple[str, str, str]] = []
        for item in items:
            kind = str(item.get("kind"))
            if kind in FORGOTTEN_KINDS and item.get("server_id") is not None:
                records.append((RecordKind(kind), int(item["server_id"])))
            elif kind in ("session", "message") and item.get("digest") and item.get("session_digest"):
                digests.append((kind, str(item["digest"]), str(item["session_digest"])))
        done = forget_synced(store, records, digests, member.may_use)
        refused.extend(done.refused)
        return done.deleted

    def _push_summary(
        self, store: PgStore, member: Member, row: Mapping[str, Any], refused: list[str]
    ) -> dict[str, Any] | None:
        """A session's summary, by its session's natural key; the write path stamps it derived."""
        from recall.summary import SummaryDraft

        origin = str(row["origin"])
        if not member.may_use(str(row.get("project"))):
            refused.append(f"{origin}: project {row.get('project')} not open to this token")
            return None
        with store.transaction() as writer:
            session = store.connection.execute(
                "SELECT s.id, d.generation FROM sessions s LEFT JOIN summaries_due d ON d.session_id = s.id "
                "WHERE s.host = ? AND s.external_id = ?",
                (str(row["host"]), str(row["session"])),
            ).fetchone()
            if session is None:
                refused.append(f"{origin}: its session {row['host']}/{row['session']} is not on the server")
                return None
            draft = SummaryDraft(str(row["title"]), str(row["content"]), dict(row.get("meta") or {}))
            generation = None if session[1] is None else int(session[1])
            importance = int(row.get("importance") or 5)
            summary_id = store.write_summary_in(writer, int(session[0]), draft, importance, generation)
        return {"origin": origin, "server_id": summary_id, "outcome": "written"}

    def _push_transcripts(
        self,
        store: PgStore,
        member: Member,
        sessions: Sequence[Mapping[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        refused: list[str],
    ) -> int:
        by_session: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for message in messages:
            by_session.setdefault((str(message["host"]), str(message["session"])), []).append(message)
        transcripts: dict[str, list[Transcript]] = {}
        for row in sessions:
            project = str(row["project"])
            if not member.may_use(project):
                refused.append(
                    f"session {row['host']}/{row['external_id']}: project {project} not open to this token"
                )
                continue
            key = (str(row["host"]), str(row["external_id"]))
            transcripts.setdefault(project, []).append(_transcript(row, by_session.get(key, [])))
        added = 0
        for project, items in transcripts.items():
            added += store.import_transcripts(items, project=project).added
        return added

    @staticmethod
    def _ordered(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """Active rows first, so a successor exists before the decision it supersedes changes status."""
        return sorted(records, key=lambda row: row.get("status") not in (None, DecisionStatus.ACTIVE.value))

    def _push_record(
        self, store: PgStore, member: Member, row: Mapping[str, Any], refused: list[str]
    ) -> dict[str, Any] | None:
        kind = record_kind(str(row["kind"]))
        origin = str(row["origin"])
        if not member.may_use(str(row.get("project"))):
            refused.append(f"{origin}: project {row.get('project')} not open to this token")
            return None
        if self._forgotten(kind, row, origin):
            return {"origin": origin, "forgotten": True}
        with store.transaction() as writer:
            target = self._target(kind, row, origin)
            applied = write_record(store, writer, kind, row, target)
            if target is None:
                writer.remember_origin(origin, KIND_CODES[kind], applied.id)
            conflict = None
            status = applied.status
            if kind is RecordKind.DECISION and row.get("status") not in (None, DecisionStatus.ACTIVE.value):
                successor = self._successor(row)
                status, conflict = change_status(store, writer, applied.id, str(row["status"]), successor)
            updated_at = store.connection.execute(
                f"SELECT updated_at FROM {TABLE_NAMES[kind]} WHERE id = ?", (applied.id,)
            ).fetchone()[0]
        return {
            "origin": origin,
            "server_id": applied.id,
            "outcome": applied.outcome,
            "status": status,
            "conflict": conflict,
            "updated_at": updated_at,
        }

    def _forgotten(self, kind: RecordKind, row: Mapping[str, Any], origin: str) -> bool:
        """Was this record forgotten here? By its row (a machine that pulled or pushed it), or by its
        origin and creation time (a push whose answer was lost): a forget wins over any edit, and
        SQLite may reuse a forgotten record's id, which the creation time tells apart."""
        with self.store.reading() as conn:
            if row.get("server_id"):
                found = conn.execute(
                    "SELECT 1 FROM team_forgotten WHERE kind_code = ? AND row_id = ?",
                    (KIND_CODES[kind], int(row["server_id"])),
                ).fetchone()
                if found is not None:
                    return True
            found = conn.execute(
                "SELECT 1 FROM team_forgotten WHERE origin = ? AND kind_code = ? AND created_at = ?",
                (origin, KIND_CODES[kind], str(row.get("created_at"))),
            ).fetchone()
            return found is not None

    def _target(self, kind: RecordKind, row: Mapping[str, Any], origin: str) -> int | None:
        conn = self.store.connection
        if row.get("server_id"):
            found = conn.execute(
                "SELECT row_id FROM team_rows WHERE kind_code = ? AND row_id = ?",
                (KIND_CODES[kind], int(row["server_id"])),
            ).fetchone()
            if found is not None:
                return int(found[0])
        found = conn.execute(
            f"SELECT o.row_id FROM sync_origins o JOIN {TABLE_NAMES[kind]} r ON r.id = o.row_id "
            "WHERE o.origin = ? AND o.kind_code = ? AND r.created_at = ?",
            (origin, KIND_CODES[kind], str(row.get("created_at"))),
        ).fetchone()
        return None if found is None else int(found[0])

    def _successor(self, row: Mapping[str, Any]) -> int | None:
        if row.get("superseded_by_server"):
            return int(row["superseded_by_server"])
        if row.get("superseded_by_origin"):
            found = self.store.connection.execute(
                "SELECT row_id FROM sync_origins WHERE origin = ?", (str(row["superseded_by_origin"]),)
            ).fetchone()
            return None if found is None else int(found[0])
        return None

    def pull(self, member: Member, since: int, limit: int = PULL_PAGE) -> dict[str, Any]:
        """The team's decisions, learnings, breadcrumbs and profiles changed after ``since`` (a change
        sequence), and what was forgotten since (records by their row here, sessions by digest)."""
        limit = max(1, min(limit, PULL_PAGE))
        kept = ", ".join("?" for _ in PULLED_CODES)
        gone = ", ".join("?" for _ in FORGOTTEN_CODES)
        with self.store.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT t.kind_code, t.row_id, t.change_seq, t.created_by, t.updated_by, o.origin, "
                "NULL AS digest, NULL AS project, 0 AS gone FROM team_rows t LEFT JOIN sync_origins o "
                "ON o.kind_code = t.kind_code AND o.row_id = t.row_id "
                f"WHERE t.change_seq > ? AND t.kind_code IN ({kept}) "
                "UNION ALL SELECT f.kind_code, f.row_id, f.change_seq, f.forgotten_by, f.forgotten_by, f.origin, "
                f"f.digest, f.project, 1 AS gone FROM team_forgotten f WHERE f.change_seq > ? AND f.kind_code IN ({gone})"
                ") AS changes ORDER BY change_seq LIMIT ?",
                (since, *PULLED_CODES, since, *FORGOTTEN_CODES, limit + 1),
            ).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        records: list[dict[str, Any]] = []
        profiles: list[dict[str, Any]] = []
        forgotten: list[dict[str, Any]] = []
        for code, row_id, _, created_by, updated_by, origin, digest, project, gone in rows:
            if gone:
                if member.may_use(str(project)):
                    kind = "session" if int(code) == SESSION_CODE else KIND_BY_CODE[int(code)].value
                    forgotten.append({"kind": kind, "server_id": int(row_id), "digest": digest})
                continue
            data = self._pulled_row(int(code), int(row_id))
            if data is None or not member.may_use(str(data["project"])):
                continue
            data.update(created_by=created_by, updated_by=updated_by, origin=origin)
            (profiles if code == 0 else records).append(data)
        next_seq = int(rows[-1][2]) if rows else since
        return {
            "records": records,
            "profiles": profiles,
            "forgotten": forgotten,
            "next": next_seq,
            "more": more,
        }

    def _pulled_row(self, code: int, row_id: int) -> dict[str, Any] | None:
        if code == 0:
            with self.store.reading() as conn:
                row = conn.execute(
                    "SELECT project, key, value, updated_at FROM profiles WHERE id = ?", (row_id,)
                ).fetchone()
            return (
                None
                if row is None
                else dict(zip(("project", "key", "value", "updated_at"), row, strict=True))
            )
        kind = KIND_BY_CODE[code]
        found = self.store.get(kind, row_id)
        if found is None or found.get("provenance") not in ("user_authored", "extracted"):
            return None
        found["server_id"] = row_id
        found["kind"] = kind.value
        for extra in ("sources", "extraction", "entities", "id"):
            found.pop(extra, None)
        return found


def dispatch(
    server: TeamServer, member: Member, method: str, path: str, body: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One sync call (``POST /sync/push``, ``GET /sync/pull?since=N``, ``GET /sync/whoami``)."""
    parsed = urllib.parse.urlsplit(path)
    if method == "POST" and parsed.path == "/sync/push":
        return server.push(member, body or {})
    if method == "GET" and parsed.path == "/sync/pull":
        query = urllib.parse.parse_qs(parsed.query)
        try:
            since = int(query.get("since", ["0"])[0])
            limit = int(query.get("limit", [str(PULL_PAGE)])[0])
        except ValueError as exc:
            raise InvalidInput("since and limit are whole numbers") from exc
        return server.pull(member, since, limit)
    if method == "GET" and parsed.path == "/sync/search":  # plain JSON search, for scripts and benches
        query = urllib.parse.parse_qs(parsed.query)
        found = server.memory_for(member).search(
            query.get("q", [""])[0],
            mode=query.get("mode", ["keyword"])[0],  # type: ignore[arg-type]
            project=query.get("project", [None])[0],
            limit=int(query.get("limit", ["10"])[0]) if query.get("limit", ["10"])[0].isdigit() else 10,
        )
        return found.to_dict()
    if method == "GET" and parsed.path == "/sync/whoami":
        return member.to_dict()
    raise InvalidInput(
        f"no sync call {method} {parsed.path}; the calls are POST /sync/push and GET /sync/pull"
    )


class LocalTransport:
    """A client's transport straight into a ``TeamServer`` in the same process (tests, one-box setups)."""

    def __init__(self, server: TeamServer, token: str) -> None:
        member = server.authenticate(token)
        if member is None:
            raise InvalidInput("this token is not accepted by the team server")
        self._server, self._member = server, member

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return dispatch(self._server, self._member, method, path, body)


def _transcript(row: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> Transcript:
    """A stored session and messages from another machine, as the transcript import reads them."""
    return Transcript(
        host=str(row["host"]),
        external_id=str(row["external_id"]),
        messages=tuple(_message(m) for m in messages),
        cwd=row.get("cwd"),
        git_branch=row.get("git_branch"),
        started_at=_when(row.get("started_at")),
        ended_at=_when(row.get("ended_at")),
        model=row.get("model"),
        title=row.get("title"),
        parent_external_id=row.get("parent_external_id"),
        agent_id=row.get("agent_id"),
        source_path=None,  # a path on another machine means nothing here
        meta=dict(row.get("meta") or {}),
    )


def _message(row: Mapping[str, Any]) -> TranscriptMessage:
    return TranscriptMessage(
        key=str(row["external_id"]),
        role=Role(row["role"]),
        text=str(row["content"]),
        timestamp=_when(row.get("timestamp")),
        origin=Origin(row["origin"]),
        kind=MessageKind(row["kind"]),
        tool_name=row.get("tool_name"),
        meta=dict(row.get("meta") or {}),
    )


def _when(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None
