"""The typed results the library API returns; each edge renders them its own way.

Every result can say itself as JSON-ready data (``to_dict``) with one timestamp format (the stored
one, ISO 8601 in UTC) and each row's ``ref`` (``kind#id``), so the CLI's ``--json``, MCP structured
content and the web view agree field for field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from recall.kinds import Kind, Ref

if TYPE_CHECKING:
    from recall.search.hybrid import Mode


@dataclass(frozen=True, slots=True)
class Record:
    """One stored row of any kind, every column included."""

    kind: Kind
    id: int
    data: Mapping[str, Any]
    redacted: Mapping[str, int] = field(default_factory=dict)  # what a write just scrubbed out, per kind
    # Set when an add found this record saying the same and refreshed it instead: how alike they were.
    refreshed: Mapping[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Record:
        return cls(Kind(row["kind"]), int(row["id"]), dict(row))

    @property
    def ref(self) -> Ref:
        return Ref(self.kind, self.id)

    @property
    def project(self) -> str:
        return str(self.data.get("project", ""))

    @property
    def provenance(self) -> str:
        return str(self.data.get("provenance", ""))

    @property
    def trusted(self) -> bool:
        """Only what a person or agent wrote on purpose reads as instructions; the rest is data."""
        return self.provenance == "user_authored"

    def to_dict(self) -> dict[str, Any]:
        out = {"ref": str(self.ref), **self.data}
        if self.redacted:
            out["redacted"] = dict(self.redacted)
        if self.refreshed is not None:
            out["refreshed"] = dict(self.refreshed)
        return out


@dataclass(slots=True)
class Hit:
    """One search result; ``score`` orders results (0-1 in semantic and hybrid modes), ``extra`` is per kind."""

    kind: str
    id: int
    project: str
    created_at: str
    provenance: str
    preview: str
    content: str
    score: float
    keyword_rank: int | None = None
    keyword_score: float | None = None  # raw bm25 relevance (higher is better), when keyword search found it
    cosine: float | None = None  # similarity to the query, when semantic search found it
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        """The row's name everywhere: ``kind#id``."""
        return f"{self.kind}#{self.id}"

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, **asdict(self)}


@dataclass(frozen=True, slots=True)
class SearchResults:
    query: str
    mode: Mode  # the mode that produced the hits
    project: str | None  # None: every project
    hits: tuple[Hit, ...]
    retried_as_hybrid: bool = False  # a keyword search found nothing and meaning search stepped in

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "project": self.project,
            "retried_as_hybrid": self.retried_as_hybrid,
            "results": [hit.to_dict() for hit in self.hits],
        }


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing, newest first; pass ``next_cursor`` back for the next page."""

    records: tuple[Record, ...]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"records": [r.to_dict() for r in self.records], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class Stats:
    """What the memory holds; ``embeddings`` says what has a vector, and why some messages never get one."""

    database: str
    size_bytes: int
    schema_version: int
    schema_latest: int
    counts: dict[str, int]
    projects: dict[str, dict[str, int]]
    decisions_by_status: dict[str, int]
    breadcrumbs_expired: int
    keyword_index: dict[str, Any]
    entities: dict[str, int] = field(default_factory=dict)  # per type: files, commands, errors, ...
    sessions_unconnected: int = 0  # sessions the connect stage has not read yet
    embeddings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class Deduplicated:
    """What ``Memory.dedup`` found (and, unless a dry run, merged): groups of near-duplicates."""

    project: str | None
    dry_run: bool
    groups: tuple[Any, ...]  # recall.near_duplicates.MergeGroup
    model: bool  # False: no model, so only near-identical wordings were merged

    @property
    def merged(self) -> int:
        return sum(len(group.merged) for group in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "dry_run": self.dry_run,
            "merged": self.merged,
            "model": self.model,
            "groups": [group.to_dict() for group in self.groups],
        }
