"""Every decision of a project with its status, grouped into supersession chains.

A chain is the decisions linked by ``superseded_by``: the first decision, the one that replaced it,
and so on to the one in force (or to a reverted or superseded end). Two decisions superseded by the
same one join one chain. A chain lists its decisions oldest first, which is the timeline the web
view draws; chains are ordered by their latest change, so a decision superseded today comes first.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall.errors import InvalidInput

if TYPE_CHECKING:
    from recall.store import Store

ENTRIES_PER_PAGE = 150  # a page ends at the chain that would pass this; one chain is never cut


@dataclass(frozen=True, slots=True)
class DecisionEntry:
    id: int
    project: str
    content: str
    detail: str | None
    status: str  # active, superseded, reverted
    superseded_by: int | None
    confidence: str
    importance: int
    tags: tuple[str, ...]
    provenance: str
    created_at: str
    updated_at: str

    @property
    def ref(self) -> str:
        return f"decision#{self.id}"


@dataclass(frozen=True, slots=True)
class DecisionChain:
    entries: tuple[DecisionEntry, ...]  # oldest first

    @property
    def changed_at(self) -> str:
        return max(entry.updated_at for entry in self.entries)


@dataclass(frozen=True, slots=True)
class DecisionLog:
    project: str | None  # None: every project
    chains: tuple[DecisionChain, ...]  # this page's, latest change first
    by_status: Mapping[str, int]  # over every decision in scope
    page: int
    pages: int


def decision_log(
    store: Store, project: str | None, page: int = 1, per_page: int = ENTRIES_PER_PAGE
) -> DecisionLog:
    """Page ``page`` of the scope's supersession chains (None: every project): whole chains, about
    ``per_page`` decisions to a page."""
    if page < 1 or per_page < 1:
        raise InvalidInput(f"page numbers start at 1 and a page holds at least one decision, got {page}")
    scope = "WHERE project = ?" if project else ""
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT id, project, content, detail, status, superseded_by, confidence, importance, tags, "
            f"provenance, created_at, updated_at FROM decisions {scope} ORDER BY created_at, id",
            (project,) if project else (),
        ).fetchall()
    entries = [DecisionEntry(**{**dict(row), "tags": tuple(json.loads(row["tags"]))}) for row in rows]
    chains = sorted(_chains(entries), key=lambda chain: chain.changed_at, reverse=True)
    pages = _pages(chains, per_page)
    shown = min(page, len(pages))
    return DecisionLog(
        project=project,
        chains=pages[shown - 1],
        by_status=dict(Counter(entry.status for entry in entries)),
        page=shown,
        pages=len(pages),
    )


def _pages(chains: list[DecisionChain], per_page: int) -> list[tuple[DecisionChain, ...]]:
    """Whole chains to a page, a new page when the next chain would pass ``per_page`` decisions."""
    pages: list[list[DecisionChain]] = [[]]
    held = 0
    for chain in chains:
        if pages[-1] and held + len(chain.entries) > per_page:
            pages.append([])
            held = 0
        pages[-1].append(chain)
        held += len(chain.entries)
    return [tuple(chains_on_page) for chains_on_page in pages]


def _chains(entries: list[DecisionEntry]) -> list[DecisionChain]:
    """Group decisions joined by ``superseded_by`` (union-find); each group keeps the time order given."""
    parent = {entry.id: entry.id for entry in entries}

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for entry in entries:
        if entry.superseded_by in parent:
            parent[root(entry.id)] = root(entry.superseded_by)
    groups: dict[int, list[DecisionEntry]] = {}
    for entry in entries:
        groups.setdefault(root(entry.id), []).append(entry)
    return [DecisionChain(tuple(group)) for group in groups.values()]
