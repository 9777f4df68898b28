"""`recall eval`: does search find what is stored, on the user's own data, without labels or a model.

Known-item probes are built from what the store holds, and each must find the row it came from:
- **session**: a session's first request, minus every word no other session of its project uses
  (those would find it by spelling alone), must find another message of that session; the request
  itself, the session's summary (which quotes it) and the turns whose search vectors mix the
  request's vector in (adr/0011: the turns ``neighbours.MIX_WEIGHTS`` reaches) are searched as if
  they were not stored, so none of them, nor the lift they would give their session, counts;
- **decision** / **learning**: its detail (the why, the gotcha) must find the record.
Each probe is asked in its own project, as users search, in every mode the store can answer
(semantic and hybrid need the embedding model, so a model set with ``RECALL_MODEL_DIR`` can be
compared with the default by running it twice). Reported per mode and project: recall@5 and @10
(the target in the top 5 / 10) and MRR over the top 10, with the number of probes and the time.

Probes are spread evenly over each project's sessions and records (at most ``per_kind`` of each
kind per project, ``total`` in all) so a 100k-message store is checked in seconds, not minutes.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall.errors import ModelUnavailable
from recall.rowkinds import KIND_CODES, RecordKind, index_rowid
from recall.search.fts_query import STOP_WORDS
from recall.search.hybrid import MODES, Mode, search
from recall.search.neighbours import MIX_WEIGHTS
from recall.search.semantic import EMBED_ORIGINS

if TYPE_CHECKING:
    from recall.memory import Memory
    from recall.results import Hit
    from recall.search.embedder import Embedder

TOP = 10
MIN_WORDS = 3  # a probe needs this many words left after the session's own words go
MAX_PROBE_WORDS = 24  # a first request can be a pasted log; its opening says what it is
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Probe:
    kind: str  # session, decision or learning
    project: str
    query: str
    target: int  # session id, or the record's id
    source: int = 0  # the message a session probe was cut from
    summaries: tuple[int, ...] = ()  # index rowids of its session's summary
    neighbours: tuple[int, ...] = ()  # messages whose search vector mixes in the source's

    def found_by(self, hit: Hit) -> bool:
        if self.kind == "session":
            return hit.kind == "message" and hit.extra.get("session_id") == self.target
        return hit.kind == self.kind and hit.id == self.target

    def leave_out(self) -> frozenset[int]:
        """Index rowids of the rows holding the probe's own text: a session probe's message, its
        session's summary (which quotes the first request) and the turns whose search vectors carry
        the message's vector. Search acts as if they were not stored."""
        if self.kind != "session":
            return frozenset()
        code = KIND_CODES[RecordKind.MESSAGE]
        messages = (index_rowid(code, row_id) for row_id in (self.source, *self.neighbours))
        return frozenset({*messages, *self.summaries})


@dataclass(slots=True)
class Score:
    probes: int = 0
    at5: int = 0
    at10: int = 0
    reciprocal: float = 0.0

    def add(self, rank: int | None) -> None:
        self.probes += 1
        if rank is not None:
            self.at5 += rank <= 5
            self.at10 += rank <= 10
            self.reciprocal += 1.0 / rank

    def to_dict(self) -> dict[str, Any]:
        n = self.probes or 1
        return {"probes": self.probes, "recall@5": round(100 * self.at5 / n, 1),
                "recall@10": round(100 * self.at10 / n, 1), "mrr": round(100 * self.reciprocal / n, 1)}  # fmt: skip


@dataclass(slots=True)
class EvalReport:
    """Scores per mode and project (``"all"`` pools the projects), and what was left out and why."""

    model: str | None
    modes: list[Mode]
    scores: dict[str, dict[str, Score]] = field(default_factory=dict)  # mode -> project -> score
    probes: dict[str, int] = field(default_factory=dict)  # kind -> probes built
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "modes": self.modes,
            "probes": self.probes,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 2),
            "scores": {mode: {p: s.to_dict() for p, s in per.items()} for mode, per in self.scores.items()},
            "notes": self.notes,
        }


def evaluate(
    memory: Memory,
    project: str | None = None,
    *,
    per_kind: int = 60,
    total: int = 200,
    modes: Sequence[Mode] = MODES,
    progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Build probes from ``project`` (every project when ``None``) and score every mode on them."""
    started = time.perf_counter()
    report = EvalReport(model=None, modes=[])
    with memory.store.reading() as conn:
        probes = build_probes(conn, project, per_kind=per_kind, total=total, skipped=report.skipped)
    for probe in probes:
        report.probes[probe.kind] = report.probes.get(probe.kind, 0) + 1
    report.modes = _usable_modes(memory, modes, report)
    if not probes:
        report.notes.append(
            "nothing to probe: no session with a first request, no decision or learning with a detail"
        )
    steps, done = len(probes) * len(report.modes), 0
    embedder = _QueryCache(memory.embedder) if report.model else None
    for mode in report.modes:
        per = report.scores.setdefault(mode, {})
        for probe in probes:
            hits = search(memory.store, probe.query, mode=mode, project=probe.project, limit=TOP,
                          embedder=None if mode == "keyword" else embedder, leave_out=probe.leave_out())  # fmt: skip
            rank = next((n for n, hit in enumerate(hits, 1) if probe.found_by(hit)), None)
            per.setdefault(probe.project, Score()).add(rank)
            per.setdefault("all", Score()).add(rank)
            done += 1
            if progress is not None:
                progress(done, steps)
    report.seconds = time.perf_counter() - started
    return report


class _QueryCache:
    """The model's query vectors, each probe embedded once for both semantic and hybrid mode."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.model_id, self.model_hash, self.dim = embedder.model_id, embedder.model_hash, embedder.dim
        self.vectors: dict[str, Any] = {}

    def embed_query(self, text: str) -> Any:
        if text not in self.vectors:
            self.vectors[text] = self.embedder.embed_query(text)
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.embedder.embed_documents(texts)


def _usable_modes(memory: Memory, modes: Sequence[Mode], report: EvalReport) -> list[Mode]:
    """Keyword always; semantic and hybrid only when the model loads (said in the notes otherwise)."""
    if not any(mode != "keyword" for mode in modes):
        return list(modes)
    try:
        embedder = memory.embedder
        embedder.embed_query("recall eval")  # loads the model now, so a missing one is said once
        report.model = f"{embedder.model_id} sha256:{embedder.model_hash[:12]}"
    except ModelUnavailable as exc:
        report.notes.append(f"keyword mode only: {exc}")
        return [mode for mode in modes if mode == "keyword"]
    return list(modes)


def build_probes(
    conn: sqlite3.Connection, project: str | None, *, per_kind: int, total: int, skipped: dict[str, int]
) -> list[Probe]:
    """Session and record probes, spread evenly over each project and cut to ``total`` in turn."""
    where, args = ("WHERE project = ?", (project,)) if project else ("", ())
    projects = [row[0] for row in conn.execute(f"SELECT DISTINCT project FROM sessions {where}", args)]
    projects += [row[0] for row in conn.execute(
        f"SELECT DISTINCT project FROM decisions {where} UNION SELECT DISTINCT project FROM learnings {where}",
        args * 2)]  # fmt: skip
    per_project: list[list[Probe]] = []
    for name in dict.fromkeys(projects):
        found = session_probes(conn, name, per_kind, skipped)
        for kind in ("decision", "learning"):
            found += record_probes(conn, name, kind, per_kind)
        per_project.append(found)
    out: list[Probe] = []
    position = 0
    while len(out) < total and any(position < len(found) for found in per_project):
        out += [found[position] for found in per_project if position < len(found)][: total - len(out)]
        position += 1
    return out


def session_probes(
    conn: sqlite3.Connection, project: str, limit: int, skipped: dict[str, int]
) -> list[Probe]:
    """First human request of sessions spread over the project, minus the words only its session uses."""
    rows = conn.execute(
        """SELECT s.id, m.id, m.content FROM sessions s JOIN messages m ON m.id = (
               SELECT f.id FROM messages f WHERE f.session_id = s.id AND f.origin = 'human' AND f.kind = 'text'
               ORDER BY f.ordinal LIMIT 1)
           WHERE s.project = ? ORDER BY s.id""",
        (project,),
    ).fetchall()
    firsts = [(sid, (source, text)) for sid, source, text in rows if text]
    code = KIND_CODES[RecordKind.SESSION_SUMMARY]
    summaries: dict[int, list[int]] = defaultdict(list)
    for summary_id, sid in conn.execute(
        "SELECT id, session_id FROM session_summaries WHERE project = ?", (project,)
    ):
        summaries[sid].append(index_rowid(code, summary_id))
    chosen = _spread(firsts, limit)
    if not chosen:
        return []
    wanted = {w for _, (_, text) in chosen for w in _words(text)}
    sessions_of: dict[str, set[int]] = defaultdict(set)
    for sid, content in conn.execute(
        "SELECT session_id, content FROM messages WHERE project = ? AND kind = 'text'", (project,)
    ):
        for word in wanted.intersection(_words(content)):
            sessions_of[word].add(sid)
    out = []
    for sid, (source, text) in chosen:
        kept = [w for w in _WORD.findall(text)[:MAX_PROBE_WORDS] if sessions_of.get(w.lower(), set()) - {sid}]
        if len([w for w in kept if w.lower() not in STOP_WORDS]) < MIN_WORDS:
            skipped["session: too few shared words"] = skipped.get("session: too few shared words", 0) + 1
            continue
        mixed = vector_neighbours(conn, sid, source)
        out.append(Probe("session", project, " ".join(kept), sid, source, tuple(summaries[sid]), mixed))
    return out


def vector_neighbours(conn: sqlite3.Connection, session: int, message: int) -> tuple[int, ...]:
    """The messages of ``session`` whose search vector mixes in ``message``'s (adr/0011).

    The vector index mixes each embedded turn with the embedded turns ``MIX_WEIGHTS`` away in its
    session, so the turn after a request carries a share of the request's own vector: a probe cut
    from the request would find it by its own meaning, and semantic search would look better than
    it is. Turn ``t`` carries ``message`` when ``message`` lies ``offset`` embedded turns from it.
    """
    origins = ", ".join(f"'{origin}'" for origin in EMBED_ORIGINS)
    turns = [row[0] for row in conn.execute(
        f"SELECT id FROM messages WHERE session_id = ? AND kind = 'text' AND origin IN ({origins}) "
        "ORDER BY ordinal", (session,))]  # fmt: skip
    if message not in turns:
        return ()
    at = turns.index(message)
    reach = [at - offset for offset, weight in MIX_WEIGHTS.items() if weight and offset]
    return tuple(turns[n] for n in sorted(reach) if 0 <= n < len(turns))


def record_probes(conn: sqlite3.Connection, project: str, kind: str, limit: int) -> list[Probe]:
    rows = conn.execute(
        f"SELECT id, detail FROM {kind}s WHERE project = ? AND coalesce(detail, '') != '' ORDER BY id",
        (project,),
    ).fetchall()
    return [Probe(kind, project, detail, row_id) for row_id, detail in _spread(rows, limit)]


def _spread(rows: Sequence[Any], limit: int) -> list[Any]:
    """At most ``limit`` rows, evenly spaced, so old and new work are both probed."""
    if len(rows) <= limit:
        return list(rows)
    step = len(rows) / limit
    return [rows[int(n * step)] for n in range(limit)]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}
