"""LoCoMo retrieval benchmark of recall's search, per ``shared/ref/locomo-protocol.md``.

    python bench/locomo.py                # keyword, semantic and hybrid at the shipped settings, with one
                                          # store per conversation and with all ten in one store
    python bench/locomo.py --json         # the same figures as JSON
    python bench/locomo.py --cv           # + fusion ablation and 5-fold cross-validation (adr/0007, 0011)
    python bench/locomo.py --shared-store # only the run with all ten conversations in one store
    python bench/locomo.py --via-mcp      # + the shared database loaded and asked through MCP (adr/0022)
    python bench/locomo.py --data PATH    # another copy of locomo10.json (its sha256 is checked)

Every conversation goes through the real write path (``Store.import_transcripts``: scrubber,
provenance, FTS triggers) into a fresh temporary store of its own (protocol §9.1: retrieval never
crosses conversations, and bm25 statistics are the conversation's own), and again all ten into one
store, one project each, as users keep them (keyword relevance then uses the searched project's
statistics, adr/0021; the report shows both); messages are embedded with
the real ONNX model by ``semantic.embed_pending``; every question is asked through
``recall.search.hybrid.search`` on its conversation's store. Hits map back to the turn's ``dia_id``
kept in the message's ``meta``.

The speakers of LoCoMo are two people: the first speaker of a conversation becomes ``user``, the
second ``assistant``, both with origin ``human`` (a person wrote the text). Message content is
``"{speaker}: {text}"`` plus ``" [shares {blip_caption}]"`` for images, the text of the protocol's
FTS5 floor; the session date is the timestamp, never part of the searchable text.

``--cv`` collects each question's candidates once per neighbour mix (lexical scores, the sessions
of the turns, and the cosine of every turn of its conversation under an index built with that mix,
through the same functions ``hybrid.search`` uses), then replays fusion variants offline: weighted
sums under several normalisations and reciprocal rank fusion over keyword weights, candidate depths
and carries, and the shipped sum over neighbour mixes and session lifts. Parameters are chosen on 8
conversations and scored on the other 2, five times, among the configurations whose candidate depth
keeps the latency target (``CV_DEPTHS``); the objective is the mean of recall@5/10/25/50 over
categories 1-5.

The data (CC BY-NC 4.0) is read from ``../shared/bench/locomo/`` next to the repository and never
copied; the temporary store is deleted at exit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from timing import percentiles

from recall.memory import Memory
from recall.models import KIND_CODES, RecordKind, index_rowid, split_rowid
from recall.search import hybrid, semantic
from recall.search.embedder import Embedder, get_embedder
from recall.search.keyword import keyword_candidates
from recall.search.neighbours import MIX_WEIGHTS
from recall.search.vectors import VectorIndex
from recall.store import Store
from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

# ../shared next to the repository, or next to the folder of worktrees (/work/wt/<name>).
DATA = (
    next(
        (p for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared") if p.is_dir()),
        ROOT.parent / "shared",
    )
    / "bench"
    / "locomo"
    / "locomo10.json"
)
DATA_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
TOP = 50
KS = (1, 3, 5, 10, 25, 50)
HEADLINE_KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GROUPS: dict[str, tuple[int, ...]] = {
    **{f"cat {c}": (c,) for c in CATEGORIES},
    "cats 1-4": (1, 2, 3, 4),
    "cats 1-5": (1, 2, 3, 4, 5),
}
MODES = ("keyword", "semantic", "hybrid")
# Published references, recall@5/10/25/50 (%), cats 1-5 overall (protocol §7.1 and §8).
DRAGON = {"cats 1-5": (56.7, 66.2, 76.7, 82.7), "cat 4": (68.0, 77.7, 87.1, 91.1),
          "cat 1": (35.4, 46.6, 62.5, 73.0), "cat 2": (70.4, 77.3, 83.5, 89.6),
          "cat 3": (33.1, 40.8, 52.6, 61.7), "cat 5": (43.9, 54.7, 66.3, 72.5)}  # fmt: skip
FTS5_FLOOR = {"cats 1-5": (55.1, 63.4, 71.5, 76.6), "cats 1-4": (52.7, 60.7, 69.0, 74.8)}
FOLDS = 5
WEIGHTS = tuple(round(0.1 * n, 1) for n in range(1, 10))
DEPTHS = (50, 100, 200)
# Depths the cross-validation may choose. Deeper candidate lists are shown in the ablation but cost
# the latency target: hybrid p50 over 100k rows is 7.4 / 11.2 / 19.5 ms at depth 50 / 100 / 200
# (bench/vector_latency.py), before the ~4 ms of the model's query embedding (adr/0011).
CV_DEPTHS = (50,)
CARRIES = (0.0, 0.5, 0.7, 0.9)
RRF_KS = (10, 30, 60)
# Neighbour mixes (offset → weight) and session lifts of the second grid (adr/0011).
MIXES: tuple[dict[int, float], ...] = (
    {}, MIX_WEIGHTS, {-2: 0.25, -1: 0.5, 1: 0.5}, {-2: 0.49, -1: 0.7, 1: 0.7}, {-2: 0.25, -1: 0.5},
    {-2: 0.25, -1: 0.5, 1: 0.25},
)  # fmt: skip
SESSION_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5)
GRID_WEIGHTS = (0.4, 0.5, 0.6)

_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


# -- data ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    sample_id: str
    category: int
    text: str
    gold: tuple[str, ...]


@dataclass(slots=True)
class Conversation:
    sample_id: str
    transcripts: list[Transcript]
    questions: list[Question]
    turns: int = 0


def load(path: Path) -> list[Conversation]:
    """The canonical file only: published numbers are comparable with this exact version."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != DATA_SHA256:
        raise SystemExit(f"{path} has sha256 {digest}, not the canonical {DATA_SHA256}")
    return [conversation(sample) for sample in json.loads(raw)]


def conversation(sample: dict[str, Any]) -> Conversation:
    talk = sample["conversation"]
    sample_id = sample["sample_id"]
    roles = {talk["speaker_a"]: Role.USER, talk["speaker_b"]: Role.ASSISTANT}
    transcripts = []
    number = 1
    while f"session_{number}" in talk:  # date keys without a session exist (conv-26): iterate lists
        started = datetime.strptime(talk[f"session_{number}_date_time"], DATE_FORMAT)
        messages = tuple(
            message(turn, sample_id, number, started + timedelta(seconds=n), roles[turn["speaker"]])
            for n, turn in enumerate(talk[f"session_{number}"])
        )
        transcripts.append(
            Transcript(
                host="locomo",
                external_id=f"{sample_id}/S{number}",
                messages=messages,
                started_at=started,
                title=f"{sample_id} session {number}",
                meta={"participants": [talk["speaker_a"], talk["speaker_b"]]},
            )
        )
        number += 1
    known = {m.meta["dia_id"] for t in transcripts for m in t.messages}
    questions = [
        Question(sample_id, qa["category"], qa["question"], gold)
        for qa in sample["qa"]
        if (gold := normalize_evidence(qa["evidence"], known))  # 4 questions have no evidence
    ]
    return Conversation(sample_id, transcripts, questions, turns=len(known))


def message(
    turn: dict[str, Any], sample_id: str, session: int, when: datetime, role: Role
) -> TranscriptMessage:
    text = f"{turn['speaker']}: {turn['text']}"
    meta: dict[str, Any] = {"dia_id": turn["dia_id"], "sample_id": sample_id, "session_no": session,
                            "speaker": turn["speaker"]}  # fmt: skip
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
        meta["blip_caption"] = turn["blip_caption"]
    if turn.get("img_url"):
        meta["img_url"] = turn["img_url"]
    return TranscriptMessage(
        key=turn["dia_id"], role=role, text=text, timestamp=when, origin=Origin.HUMAN, kind=MessageKind.TEXT,
        meta=meta,
    )  # fmt: skip


def normalize_evidence(evidence: Iterable[Any], known: set[str]) -> tuple[str, ...]:
    """Protocol §5: split malformed lists, accept ``D:11:26``/``D30:05``, drop unknown ids."""
    out: dict[str, None] = {}
    for item in evidence:
        for piece in re.split(r"[;,\s]+", str(item)):
            match = _EVIDENCE_ID.fullmatch(piece)
            if match and (dia_id := f"D{match.group(1)}:{match.group(2)}") in known:
                out.setdefault(dia_id)
    return tuple(out)


# -- ingest --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Bench:
    stores: dict[str, Store]  # sample_id -> its own store
    embedder: Embedder
    conversations: list[Conversation]
    dia_ids: dict[tuple[str, int], str] = field(default_factory=dict)  # (sample_id, message id) -> dia_id
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]

    def close(self) -> None:
        for store in {id(s): s for s in self.stores.values()}.values():
            store.close()


def ingest(
    conversations: list[Conversation],
    folder: Path,
    embedder: Embedder,
    *,
    shared: bool = False,
    db: str | None = None,
) -> Bench:
    """Import each conversation into its own store (project = its id), then embed what is pending.

    ``shared`` puts all ten into one store instead, one project each, as a user's store holds many
    projects: bm25 statistics then come from every conversation (the project filter still holds)."""
    if shared:
        one = Store(folder / "locomo.db") if db is None else Memory(db).store  # --db postgresql://
        stores = {c.sample_id: one for c in conversations}
    else:
        stores = {c.sample_id: Store(folder / f"{c.sample_id}.db") for c in conversations}
    bench = Bench(stores, embedder, conversations)
    started = time.perf_counter()
    for conv in conversations:
        stores[conv.sample_id].import_transcripts(conv.transcripts, project=conv.sample_id)
    bench.timings["import_s"] = time.perf_counter() - started
    started = time.perf_counter()
    unique = {id(store): store for store in stores.values()}.values()
    bench.timings["embedded"] = sum(semantic.embed_pending(store, embedder).embedded for store in unique)
    bench.timings["embed_s"] = time.perf_counter() - started
    for sample_id, store in stores.items():
        with store.reading() as conn:
            rows = conn.execute("SELECT id, json_extract(meta, '$.dia_id') FROM messages").fetchall()
        bench.dia_ids.update({(sample_id, row[0]): row[1] for row in rows})
    return bench


# -- the real search path ------------------------------------------------------------------------


def run_mode(bench: Bench, mode: str) -> tuple[list[list[str]], list[float]]:
    """Every question through ``hybrid.search``; returns ranked dia_ids and per-query milliseconds."""
    rankings, millis = [], []
    for q in bench.questions:
        started = time.perf_counter()
        store = bench.stores[q.sample_id]
        hits = hybrid.search(
            store, q.text, mode=mode, project=q.sample_id, limit=TOP, embedder=bench.embedder
        )  # type: ignore[arg-type]
        millis.append((time.perf_counter() - started) * 1000)
        rankings.append(
            [bench.dia_ids[q.sample_id, h.id] for h in hits if h.kind == RecordKind.MESSAGE.value]
        )
    return rankings, millis


# -- metrics -------------------------------------------------------------------------------------


def question_metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """Protocol §9.4 for one question; ``ranked`` holds at most the top 50 dia_ids."""
    wanted = set(gold)
    out = {f"R@{k}": len(wanted.intersection(ranked[:k])) / len(wanted) for k in KS}
    first = next((n for n, d in enumerate(ranked, 1) if d in wanted), None)
    out["MRR"] = 1.0 / first if first else 0.0
    dcg = sum(1.0 / math.log2(n + 1) for n, d in enumerate(ranked[:10], 1) if d in wanted)
    ideal = sum(1.0 / math.log2(n + 1) for n in range(1, min(10, len(wanted)) + 1))
    out["nDCG@10"] = dcg / ideal
    return out


def summarise(
    questions: Sequence[Question], rankings: Sequence[Sequence[str]]
) -> dict[str, dict[str, float]]:
    """Per category and per set: mean of each metric in %, plus n."""
    per_question = [question_metrics(r, q.gold) for q, r in zip(questions, rankings, strict=True)]
    out = {}
    for name, cats in GROUPS.items():
        rows = [m for q, m in zip(questions, per_question, strict=True) if q.category in cats]
        out[name] = {key: round(100 * statistics.fmean(m[key] for m in rows), 1) for key in rows[0]}
        out[name]["n"] = len(rows)
    return out


# -- fusion ablation and cross-validation --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Parts:
    """One question's candidates: lexical scores (best first), the turns after each keyword match,
    the cosine of every turn of the conversation (under one neighbour mix) and every turn's session."""

    keyword: dict[int, float]
    following: dict[int, list[int]]
    cosines: dict[int, float]
    cosine_order: list[int]
    sessions: dict[int, int]


def mix_name(mix: dict[int, float]) -> str:
    return ",".join(f"{offset:+d}:{weight:g}" for offset, weight in sorted(mix.items())) or "none"


def collect_parts(bench: Bench, mixes: Sequence[dict[int, float]]) -> dict[str, list[Parts]]:
    """Candidates through the functions ``hybrid.search`` calls, at the deepest depth of the grid,
    once per neighbour mix (an index built with that mix from the same stored vectors)."""
    code = KIND_CODES[RecordKind.MESSAGE]
    queries = {q.text: bench.embedder.embed_query(q.text) for q in bench.questions}
    sessions: dict[str, dict[int, int]] = {}
    for sample_id, store in bench.stores.items():
        with store.reading() as conn:
            turns = conn.execute("SELECT id FROM messages WHERE project = ?", (sample_id,)).fetchall()
            sessions[sample_id] = hybrid.sessions_of(conn, [index_rowid(code, row[0]) for row in turns])
    lexical: list[tuple[dict[int, float], dict[int, list[int]], dict[int, int]]] = []
    for q in bench.questions:
        with bench.stores[q.sample_id].reading() as conn:
            found = keyword_candidates(conn, q.text, project=q.sample_id, table=None, depth=max(DEPTHS))
            keyword = {rowid: s for rowid, s in found.items() if split_rowid(rowid)[0] == code}
            lexical.append((keyword, hybrid.following_turns(conn, keyword), sessions[q.sample_id]))
    out: dict[str, list[Parts]] = {}
    for mix in mixes:
        indexes = {}
        for sample_id, store in bench.stores.items():
            index = VectorIndex(semantic.model_key(store, bench.embedder), bench.embedder.dim, mix)
            with store.reading() as conn:
                index.refresh(conn)
            indexes[sample_id] = index
        parts = []
        for q, (keyword, following, sessions) in zip(bench.questions, lexical, strict=True):
            found = indexes[q.sample_id].search(queries[q.text], k=10**6, project=q.sample_id)
            cosines = {index_rowid(kind, row_id): cosine for kind, row_id, cosine in found}
            order = sorted(cosines, key=cosines.__getitem__, reverse=True)
            parts.append(Parts(keyword, following, cosines, order, sessions))
        out[mix_name(mix)] = parts
    return out


Fusion = Callable[[dict[int, float], dict[int, float]], dict[int, float]]


def _zscore(values: dict[int, float], rows: Iterable[int]) -> dict[int, float]:
    """Standard scores over the rows that have a value; a row without one counts as 0."""
    present = np.array([values[r] for r in rows if r in values] or [0.0])
    mean, spread = float(present.mean()), float(present.std()) or 1.0
    return {r: (values.get(r, 0.0) - mean) / spread for r in rows}


def weighted(norm: str, weight: float) -> Fusion:
    """Weighted sum of the two parts under one normalisation ("shipped" is ``hybrid.fuse``, min-max)."""

    def fused(keyword: dict[int, float], cosines: dict[int, float]) -> dict[int, float]:
        if norm == "shipped":
            return hybrid.fuse(keyword, cosines, weight)
        rows = list(keyword.keys() | cosines.keys())
        best = max(keyword.values(), default=0.0)
        if norm == "max":  # bm25 / best bm25, raw cosine
            lexical = {r: keyword.get(r, 0.0) / best if best > 0 else 0.0 for r in rows}
            meaning = {r: max(0.0, cosines[r]) for r in rows}
        else:  # "z"
            lexical, meaning = _zscore(keyword, rows), _zscore(cosines, rows)
        return {r: weight * lexical[r] + (1 - weight) * meaning[r] for r in rows}

    return fused


def reciprocal_rank(k: int, weight: float) -> Fusion:
    def fused(keyword: dict[int, float], cosines: dict[int, float]) -> dict[int, float]:
        ranks = [{r: n for n, r in enumerate(sorted(side, key=side.__getitem__, reverse=True), 1)}
                 for side in (keyword, cosines)]  # fmt: skip
        return {r: weight * (1 / (k + ranks[0][r]) if r in ranks[0] else 0.0)
                + (1 - weight) * (1 / (k + ranks[1][r]) if r in ranks[1] else 0.0)
                for r in keyword.keys() | cosines.keys()}  # fmt: skip

    return fused


@dataclass(frozen=True, slots=True)
class Config:
    fusion: Fusion
    depth: int
    carry: float
    family: str
    session: float = hybrid.SESSION_WEIGHT
    mix: str = mix_name(MIX_WEIGHTS)


def replay(bench: Bench, parts: Sequence[Parts], config: Config) -> list[list[str]]:
    """What hybrid search ranks with this configuration: top ``depth`` of each side, fused, lifted
    by session, top 50."""
    out = []
    for q, p in zip(bench.questions, parts, strict=True):
        keyword = hybrid.carry_forward(
            dict(list(p.keyword.items())[: config.depth]), p.following, config.carry
        )
        cosines = {r: p.cosines[r] for r in p.cosine_order[: config.depth]}
        for r in keyword.keys() - cosines.keys():  # hybrid looks up the cosine of keyword-only rows
            cosines[r] = p.cosines[r]
        scores = hybrid.lift_by_session(config.fusion(keyword, cosines), p.sessions, config.session)
        top = sorted(scores, key=lambda r: (-scores[r], r))[:TOP]
        out.append([bench.dia_ids[q.sample_id, split_rowid(r)[1]] for r in top])
    return out


def configurations() -> dict[str, Config]:
    """Two grids. Fusion (at the shipped mix and session lift): the min-max sum over every carry,
    the other fusions without and with carry. Text unit: the min-max sum over neighbour mixes,
    session lifts, keyword weights and carries at the shipped depth."""
    configs: dict[str, Config] = {}
    for depth in DEPTHS:
        for carry in CARRIES:
            for weight in WEIGHTS:
                configs[f"minmax w={weight} d={depth} c={carry}"] = Config(
                    weighted("shipped", weight), depth, carry, "minmax"
                )
        for carry in (0.0, hybrid.CARRY):
            for norm in ("max", "z"):
                for weight in WEIGHTS:
                    configs[f"{norm} w={weight} d={depth} c={carry}"] = Config(
                        weighted(norm, weight), depth, carry, norm
                    )
            for k in RRF_KS:
                configs[f"rrf k={k} d={depth} c={carry}"] = Config(
                    reciprocal_rank(k, 0.5), depth, carry, "rrf"
                )
    depth = hybrid.CANDIDATE_DEPTH
    for mix in map(mix_name, MIXES):
        for session in SESSION_WEIGHTS:
            for weight in GRID_WEIGHTS:
                for carry in CARRIES[1:]:
                    name = f"minmax w={weight} d={depth} c={carry} s={session} mix={mix}"
                    configs[name] = Config(weighted("shipped", weight), depth, carry, "mix", session, mix)
    return configs


def cross_validate(bench: Bench) -> dict[str, Any]:
    """Fusion variants on the whole set (ablation) and 5-fold CV over conversations (choice)."""
    parts = collect_parts(bench, MIXES)
    questions = bench.questions
    configs = configurations()
    rankings = {name: replay(bench, parts[config.mix], config) for name, config in configs.items()}
    per_question = {
        name: [statistics.fmean(question_metrics(r, q.gold)[f"R@{k}"] for k in HEADLINE_KS)
               for q, r in zip(questions, ranked, strict=True)]
        for name, ranked in rankings.items()
    }  # fmt: skip
    ids = [c.sample_id for c in bench.conversations]
    folds = [ids[n::FOLDS] for n in range(FOLDS)]
    fold_rows = []
    pooled: list[list[str]] = [[] for _ in questions]
    eligible = [name for name, config in configs.items() if config.depth in CV_DEPTHS]
    for held_out in folds:
        train = [n for n, q in enumerate(questions) if q.sample_id not in held_out]
        test = [n for n, q in enumerate(questions) if q.sample_id in held_out]
        chosen = max(eligible, key=lambda name: sum(per_question[name][n] for n in train))
        for n in test:
            pooled[n] = rankings[chosen][n]
        scored = summarise([questions[n] for n in test], [rankings[chosen][n] for n in test])
        fold_rows.append({"test": held_out, "chosen": chosen, "cats 1-5": scored["cats 1-5"],
                          "cats 1-4": scored["cats 1-4"]})  # fmt: skip
    whole = {name: summarise(questions, r) for name, r in rankings.items()}
    return {
        "variants": {
            name: {
                "family": configs[name].family,
                "carry": configs[name].carry,
                **{g: whole[name][g] for g in ("cats 1-5", "cats 1-4")},
            }
            for name in whole
        },
        "folds": fold_rows,
        "pooled_test": summarise(questions, pooled),
        "spread": spread(fold_rows),
    }


def spread(fold_rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out = {}
    for metric in (*(f"R@{k}" for k in HEADLINE_KS), "MRR", "nDCG@10"):
        values = [row["cats 1-5"][metric] for row in fold_rows]
        out[metric] = {"min": min(values), "max": max(values), "sd": round(statistics.pstdev(values), 1)}
    return out


# -- report --------------------------------------------------------------------------------------


def settings() -> dict[str, Any]:
    """What decides the figures besides the data and the model: record it with every run."""
    return {
        "mix": mix_name(MIX_WEIGHTS),
        "keyword_weight": hybrid.KEYWORD_WEIGHT,
        "candidate_depth": hybrid.CANDIDATE_DEPTH,
        "carry": hybrid.CARRY,
        "carry_turns": hybrid.CARRY_TURNS,
        "session_weight": hybrid.SESSION_WEIGHT,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Per-conversation stores and one shared store (both unless ``--shared-store`` asks for that
    one alone), then, with ``--via-mcp``, the shared database loaded and asked through MCP tools."""
    conversations = load(args.data)
    embedder = get_embedder()
    results: dict[str, Any] = {
        "data": str(args.data),
        "model": f"{embedder.model_id} sha256:{embedder.model_hash[:12]}",
        "settings": settings(),
        "turns": sum(c.turns for c in conversations),
        "runs": {},
    }
    layouts = (True,) if args.shared_store or args.db else (False, True)
    for shared in layouts:
        with tempfile.TemporaryDirectory(prefix="recall-locomo-") as tmp:
            bench = ingest(conversations, Path(tmp), embedder, shared=shared, db=args.db)
            try:
                name = "shared store" if shared else "per conversation"
                results["questions"] = len(bench.questions)
                results["runs"][name] = store_run(bench, cv=args.cv and not shared)
            finally:
                bench.close()
    if args.via_mcp:
        from locomo_mcp import via_mcp

        with tempfile.TemporaryDirectory(prefix="recall-locomo-mcp-") as tmp:
            results["runs"]["via MCP"] = via_mcp(conversations, Path(tmp), embedder, summarise)
    return results


def store_run(bench: Bench, *, cv: bool) -> dict[str, Any]:
    """Every mode over the real search path of one layout of stores."""
    out: dict[str, Any] = {
        "stores": "one shared store" if len({id(s) for s in bench.stores.values()}) == 1
        else "one store per conversation",
        "import_s": round(bench.timings["import_s"], 2),
        "embed_s": round(bench.timings["embed_s"], 2),
        "embedded_per_s": round(bench.timings["embedded"] / bench.timings["embed_s"], 1),
        "modes": {},
    }  # fmt: skip
    for mode in MODES:
        rankings, millis = run_mode(bench, mode)
        out["modes"][mode] = {"metrics": summarise(bench.questions, rankings), "latency": percentiles(millis)}
    if cv:
        out["cv"] = cross_validate(bench)
    return out


def table(results: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo ({results['questions']} questions, {results['turns']} turns), model {results['model']}",
        f"settings {results['settings']}",
    ]
    for name, run in results["runs"].items():
        lines += ["", f"== {name}: {run['stores']}", f"load {run['import_s']} s, embed {run['embed_s']} s "
                  f"({run['embedded_per_s']}/s)" + (f"; {run['note']}" if run.get("note") else "")]  # fmt: skip
        lines.append(f"{'mode':<9} {'set':<9} {'n':>5} "
                     + " ".join(f"{m:>7}" for m in ("R@5", "R@10", "R@25", "R@50", "MRR", "nDCG10")))  # fmt: skip
        for mode, data in run["modes"].items():
            for group, m in data["metrics"].items():
                values = " ".join(f"{m[k]:>7.1f}" for k in ("R@5", "R@10", "R@25", "R@50", "MRR", "nDCG@10"))
                lines.append(f"{mode:<9} {group:<9} {m['n']:>5} {values}")
            lat = data["latency"]
            lines.append(f"{mode:<9} latency p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms")
        if "cv" in run:
            lines += ["", *cv_table(run["cv"])]
    lines.append("")
    for name, refs in (("DRAGON", DRAGON), ("FTS5 floor", FTS5_FLOOR)):
        for group, values in refs.items():
            lines.append(f"{name:<10} {group:<9} R@5/10/25/50 " + " / ".join(f"{v:.1f}" for v in values))
    return "\n".join(lines)


def cv_table(cv: dict[str, Any]) -> list[str]:
    def mean_recall(item: tuple[str, Any]) -> float:
        return -statistics.fmean(item[1]["cats 1-5"][f"R@{k}"] for k in HEADLINE_KS)

    ranked = sorted(cv["variants"].items(), key=mean_recall)
    families = [(f, c) for f in ("minmax", "max", "z", "rrf") for c in (0.0, hybrid.CARRY)]
    shown = dict(ranked[:10])
    for family, carry in families:
        shown.update([next(kv for kv in ranked if kv[1]["family"] == family and kv[1]["carry"] == carry)])
    lines = [
        "fusion variants on all 10 conversations, cats 1-5 R@5/10/25/50 (best 10, then each family's best):"
    ]
    for name, m in shown.items():
        s = m["cats 1-5"]
        lines.append(
            f"  {name:<58} " + " / ".join(f"{s[f'R@{k}']:.1f}" for k in HEADLINE_KS) + f"  MRR {s['MRR']:.1f}"
        )
    lines.append(
        f"5-fold CV (choose on 8 conversations among depths {CV_DEPTHS}, test on 2), cats 1-5 R@5/10/25/50:"
    )
    for row in cv["folds"]:
        s = row["cats 1-5"]
        lines.append(f"  test {','.join(row['test']):<16} chose {row['chosen']:<58} "
                     + " / ".join(f"{s[f'R@{k}']:.1f}" for k in HEADLINE_KS))  # fmt: skip
    for group in ("cats 1-5", "cats 1-4"):
        s = cv["pooled_test"][group]
        lines.append(f"  pooled test {group}: " + " / ".join(f"{s[f'R@{k}']:.1f}" for k in HEADLINE_KS))
    spread = ", ".join(f"{k} {v['min']}-{v['max']} (sd {v['sd']})" for k, v in cv["spread"].items())
    lines.append(f"  fold spread: {spread}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA, help="path of locomo10.json")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--cv", action="store_true", help="also run the fusion ablation and 5-fold CV")
    parser.add_argument(
        "--shared-store", action="store_true", help="only the run with all conversations in one store"
    )
    parser.add_argument(
        "--via-mcp",
        action="store_true",
        help="also load through MCP memory_dump and ask through memory_hybrid_search (summaries present)",
    )
    parser.add_argument(
        "--db",
        help="run the shared-store layout on this (empty) PostgreSQL database instead of SQLite (adr/0024)",
    )
    args = parser.parse_args()
    results = run(args)
    print(json.dumps(results, indent=1) if args.json else table(results))


if __name__ == "__main__":
    main()
