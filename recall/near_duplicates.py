"""Near-duplicates: when a new decision, learning or breadcrumb says what a live one already says.

Two signals decide, with thresholds measured on labelled pairs (bench/near_duplicates.py, adr/0028):
content-word overlap (recall.extract.text: Jaccard, or containment for a restatement with more) and
the cosine of the two wordings under the shipped model. A pair is one memory when both are high
enough and no number differs: the hard cases are wordings that share nearly every word and differ
in the one that matters ("bump to 0.2.0" and "bump to 0.3.0", "3 retries" and "5 retries"), which
both overlap and cosine rate as close. Without the model only a near-identical wording counts.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall.extract.text import similarity, word_set
from recall.rowkinds import TABLE_NAMES, TYPED_KINDS, RecordKind, split_rowid
from recall.store.writer import to_db_time, utc_now

if TYPE_CHECKING:
    from recall.search.embedder import Embedder
    from recall.store import Store

OVERLAP_WITH_COSINE = 0.3
COSINE_WITH_OVERLAP = 0.8
OVERLAP_ALONE = 0.9  # without a model: the same words, give or take one

_NUMBER = re.compile(
    r"\b\w*\d[\w.]*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|once|twice)\b", re.IGNORECASE
)
_NUMBER_WORDS = {
    "one": "1", "once": "1", "two": "2", "twice": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Likeness:
    """How alike two wordings are; ``cosine`` is None when the model was not there to say."""

    overlap: float
    cosine: float | None
    numbers_differ: bool

    @property
    def same_memory(self) -> bool:
        if self.numbers_differ:
            return False
        if self.cosine is None:
            return self.overlap >= OVERLAP_ALONE
        return self.overlap >= OVERLAP_WITH_COSINE and self.cosine >= COSINE_WITH_OVERLAP

    def to_dict(self) -> dict[str, float | bool | None]:
        cosine = None if self.cosine is None else round(self.cosine, 4)
        return {"overlap": round(self.overlap, 4), "cosine": cosine, "numbers_differ": self.numbers_differ}


def keyword_overlap(a: str, b: str) -> float:
    """0-1: how much two wordings share their content words (stemmed, stop words dropped)."""
    return similarity(word_set(a), word_set(b))


def numbers_differ(a: str, b: str) -> bool:
    """Each wording names a number or a name with a number in it (a version, a count, an id, ``m17``,
    ``UUIDv7``) that the other does not."""
    mine, theirs = _numbers(a), _numbers(b)
    return bool(mine - theirs) and bool(theirs - mine)


def likeness(a: str, b: str, cosine: float | None) -> Likeness:
    return Likeness(keyword_overlap(a, b), cosine, numbers_differ(a, b))


def _numbers(text: str) -> set[str]:
    found = (match.group(0).lower().rstrip(".") for match in _NUMBER.finditer(text))
    return {_NUMBER_WORDS.get(number, number) for number in found}


# -- finding them in a store ------------------------------------------------------------------------

_LIVE = {  # in force: every typed kind may expire (adr/0026), a decision must be active
    RecordKind.DECISION: "status = 'active' AND (valid_until IS NULL OR valid_until > :now)",
    RecordKind.BREADCRUMB: "(valid_until IS NULL OR valid_until > :now)",
    RecordKind.LEARNING: "(valid_until IS NULL OR valid_until > :now)",
}
_CANDIDATES = 8  # live records sharing words with the new one, best keyword match first


@dataclass(frozen=True, slots=True)
class Match:
    """The live record a wording duplicates, and how alike they are."""

    kind: RecordKind
    id: int
    likeness: Likeness

    def to_dict(self) -> dict[str, Any]:
        return {"ref": f"{self.kind.value}#{self.id}", **self.likeness.to_dict()}


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """Records of one project and kind that say one thing: ``keep`` stays, ``merged`` fold into it."""

    kind: RecordKind
    project: str
    keep: int
    merged: tuple[Match, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "project": self.project,
            "keep": f"{self.kind.value}#{self.keep}",
            "merged": [match.to_dict() for match in self.merged],
        }


def find_duplicate(
    store: Store, kind: RecordKind, project: str, content: str, embedder: Callable[[], Embedder | None]
) -> Match | None:
    """The live record of the same kind and project that ``content`` restates, if any.

    Candidates come from the keyword index, so a wording sharing no word with any record costs one
    query and loads no model; the model is asked only when a candidate shares enough words.
    """
    from recall.search.keyword import keyword_rowids

    with store.reading() as conn:
        rowids = keyword_rowids(conn, content.lower(), project=project, table=kind, depth=_CANDIDATES)
        if not rowids:
            return None
        ids = ", ".join(str(split_rowid(rowid)[1]) for rowid in rowids)
        rows = conn.execute(
            f"SELECT id, content FROM {TABLE_NAMES[kind]} WHERE id IN ({ids}) AND {_LIVE[kind]}",
            {"now": to_db_time(utc_now())},
        ).fetchall()
    close = [(int(row["id"]), row["content"]) for row in rows if _worth_a_cosine(content, row["content"])]
    if not close:
        return None
    by_words = _decided_by_words(kind, content, close)
    if by_words is not None:
        return by_words
    cosines = _cosines(embedder(), [content], [text for _, text in close])
    found = [
        Match(kind, row_id, likeness(content, text, None if cosines is None else float(cosines[0][i])))
        for i, (row_id, text) in enumerate(close)
    ]
    best = max(
        (match for match in found if match.likeness.same_memory),
        key=lambda m: (m.likeness.cosine or 0.0, m.likeness.overlap),
        default=None,
    )
    return best


def _decided_by_words(kind: RecordKind, content: str, close: list[tuple[int, str]]) -> Match | None:
    """The candidate the words alone make one memory with ``content``, matched without the model.

    Loading the model costs a one-row `recall add` most of its time (about a second and 250 MiB).
    An exact repeat has cosine 1 with itself, the highest any candidate can score, so the model
    would pick it too; it is reported with that cosine. The same words give or take one
    (``OVERLAP_ALONE``) are one memory in every labelled pair (cosine ≥ 0.81, adr/0028); they are
    reported without a cosine. An exact repeat wins, then the largest overlap, then the first.
    """
    found = [
        Match(kind, row_id, likeness(content, text, 1.0 if text == content else None))
        for row_id, text in close
    ]
    decided = [match for match in found if match.likeness.same_memory]
    return max(decided, key=lambda m: (m.likeness.cosine or 0.0, m.likeness.overlap), default=None)


def plan_merges(store: Store, project: str | None, embedder: Embedder | None) -> list[MergeGroup]:
    """Every group of live near-duplicates (per project and kind) and the record each keeps: a
    person's own wording before an extracted one, then the oldest."""
    groups: list[MergeGroup] = []
    with store.reading() as conn:
        projects = [project] if project else _projects(conn)
        work = [
            (kind, name, conn.execute(
                f"SELECT id, content FROM {TABLE_NAMES[kind]} WHERE project = :project AND {_LIVE[kind]} "
                "ORDER BY provenance != 'user_authored', created_at, id",
                {"project": name, "now": to_db_time(utc_now())},
            ).fetchall())
            for name in projects for kind in TYPED_KINDS
        ]  # fmt: skip
    for kind, name, rows in work:
        groups.extend(_groups(kind, name, [(int(r["id"]), str(r["content"])) for r in rows], embedder))
    return groups


def _groups(
    kind: RecordKind, project: str, rows: list[tuple[int, str]], embedder: Embedder | None
) -> list[MergeGroup]:
    """Greedy: each record joins the first kept record it restates, or is kept itself."""
    if len(rows) < 2:
        return []
    texts = [text for _, text in rows]
    pairs = {(i, j) for i in range(len(rows)) for j in range(i) if _worth_a_cosine(texts[i], texts[j])}
    if not pairs:
        return []
    involved = sorted({index for pair in pairs for index in pair})
    at = {index: position for position, index in enumerate(involved)}
    wordings = [texts[index] for index in involved]
    cosines = _cosines(embedder, wordings, wordings)
    kept: dict[int, list[Match]] = {}
    for i, (row_id, text) in enumerate(rows):
        for j, joined in kept.items():
            if (i, j) not in pairs:
                continue
            cosine = None if cosines is None else float(cosines[at[i]][at[j]])
            found = likeness(text, texts[j], cosine)
            if found.same_memory:
                joined.append(Match(kind, row_id, found))
                break
        else:
            kept[i] = []
    return [MergeGroup(kind, project, rows[j][0], tuple(merged)) for j, merged in kept.items() if merged]


def _worth_a_cosine(a: str, b: str) -> bool:
    return keyword_overlap(a, b) >= OVERLAP_WITH_COSINE and not numbers_differ(a, b)


def _cosines(embedder: Embedder | None, left: Sequence[str], right: Sequence[str]) -> Any:
    """The cosine of every left wording with every right one; None without a model."""
    if embedder is None:
        return None
    import numpy as np

    a = np.asarray(embedder.embed_documents(list(left)), dtype=np.float32)
    b = a if left is right else np.asarray(embedder.embed_documents(list(right)), dtype=np.float32)
    return _unit(a) @ _unit(b).T


def _unit(matrix: Any) -> Any:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _projects(conn: sqlite3.Connection) -> list[str]:
    found: set[str] = set()
    for kind in TYPED_KINDS:
        found.update(row[0] for row in conn.execute(f"SELECT DISTINCT project FROM {TABLE_NAMES[kind]}"))
    return sorted(found)
