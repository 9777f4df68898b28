"""Exporting records: JSONL that `recall import-records` reads back losslessly, or markdown a team keeps
in git (adr/0032).

JSONL holds one record per line with every column but the links that do not travel (the session and
source messages it came from, its extraction lineage, its entities): content, detail, tags, status,
``superseded_by`` (an id of the same file), confidence, importance, expiry and both dates, its
provenance for the reader, and any column a later migration adds. Notes travel the same way.

Markdown writes, per project, one file per decision (``decisions/0003-use-sqlite-with-wal.md``,
ADR-like: status, what superseded it, with a link, date, why), one file per other kind
(``learnings.md``, ``breadcrumbs.md``) and each note at its own path. Every file is 0600 and every
folder 0700, as everything recall writes; a project's folder name keeps only safe characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall.kinds import Kind
from recall.models import TABLE_NAMES, RecordKind

if TYPE_CHECKING:
    from recall.store import Store

EXPORTABLE: tuple[Kind, ...] = (Kind.DECISION, Kind.LEARNING, Kind.BREADCRUMB, Kind.NOTE)
# Links to rows that do not travel with a file, and what a read adds beside the columns.
_LOCAL = frozenset({"session_id", "sources", "extraction", "entities"})
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(slots=True)
class Exported:
    """What an export wrote: records per kind, and the files (markdown, or a JSONL file in a folder)."""

    counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "records": sum(self.counts.values()), "files": self.files}


def export_rows(
    store: Store, project: str | None, kinds: Sequence[Kind], provenance: str | None
) -> Iterator[dict[str, Any]]:
    """Every record of ``kinds`` (of one project, or all for None) as JSON-ready data, oldest first
    per kind, so an import meets a decision before the one it was superseded by when it can."""
    for kind in kinds:
        record_kind = RecordKind(kind.value)
        clauses, params = [], []
        if project is not None:
            clauses.append("project = ?")
            params.append(project)
        if provenance is not None:
            clauses.append("provenance = ?")
            params.append(provenance)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with store.reading() as conn:
            ids = [int(row[0]) for row in conn.execute(
                f"SELECT id FROM {TABLE_NAMES[record_kind]} {where} ORDER BY created_at, id", params
            )]  # fmt: skip
        for row_id in ids:
            row = store.get(record_kind, row_id)
            if row is not None:
                yield {key: value for key, value in row.items() if key not in _LOCAL}


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, sort_keys=True, default=str)


def write_markdown(rows: Iterable[dict[str, Any]], out: Path) -> Exported:
    """Write the records as markdown files under ``out`` (one folder per project)."""
    from recall.private_files import make_private_folder

    done = Exported()
    by_project: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        by_project.setdefault(row["project"], {}).setdefault(row["kind"], []).append(row)
        done.counts[row["kind"]] = done.counts.get(row["kind"], 0) + 1
    make_private_folder(out)
    for project, kinds in sorted(by_project.items()):
        folder = out / project_folder(project)
        decisions = kinds.get("decision", [])
        names = {int(row["id"]): decision_file(row) for row in decisions}
        for row in decisions:
            done.files.append(
                _write(folder / "decisions" / names[int(row["id"])], decision_markdown(row, names))
            )
        for kind in ("learning", "breadcrumb"):
            if kinds.get(kind):
                done.files.append(_write(folder / f"{kind}s.md", kind_markdown(project, kind, kinds[kind])))
        for row in kinds.get("note", []):
            target = folder / row["path"]
            if not target.resolve().is_relative_to(folder.resolve()):  # paths are checked on write; twice
                continue
            done.files.append(_write(target, str(row["content"])))
    return done


def write_jsonl(rows: Iterable[dict[str, Any]], out: Path) -> Exported:
    from recall.private_files import open_private

    done = Exported()
    path = out / "records.jsonl"
    with open_private(path) as handle:
        for row, line in zip_rows(rows):
            handle.write((line + "\n").encode("utf-8"))
            done.counts[row["kind"]] = done.counts.get(row["kind"], 0) + 1
    done.files.append(str(path))
    return done


def zip_rows(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str]]:
    for row in rows:
        yield row, next(jsonl_lines([row]))


def project_folder(project: str) -> str:
    """A folder name for a project that cannot leave the export folder or hide."""
    name = re.sub(r"[^\w.@+-]+", "_", project).strip("._") or "project"
    return name[:100]


def decision_file(row: dict[str, Any]) -> str:
    slug = _SLUG.sub("-", str(row["content"]).lower()).strip("-")[:60].rstrip("-") or "decision"
    return f"{int(row['id']):04d}-{slug}.md"


def decision_markdown(row: dict[str, Any], names: dict[int, str]) -> str:
    status = str(row.get("status") or "active")
    by = row.get("superseded_by")
    if status == "superseded" and by is not None:
        target = names.get(int(by))
        status = f"superseded by [decision {by}]({target})" if target else f"superseded by decision {by}"
    facts = [f"Status: {status}", f"Date: {str(row['created_at'])[:10]}"]
    facts += [
        f"{name.title()}: {row[name]}" for name in ("confidence", "importance") if row.get(name) is not None
    ]
    if row.get("valid_until"):
        facts.append(f"Valid until: {row['valid_until']}")
    lines = [f"# {int(row['id'])}. {_one_line(row['content'])}", "", " · ".join(facts)]
    if row.get("tags"):
        lines.append("Tags: " + ", ".join(row["tags"]))
    lines.append(f"Ref: decision#{row['id']} · Project: {row['project']} · Provenance: {row['provenance']}")
    lines += ["", "## Decision", "", str(row["content"])]
    if row.get("detail"):
        lines += ["", "## Why", "", str(row["detail"])]
    return "\n".join(lines) + "\n"


def kind_markdown(project: str, kind: str, rows: list[dict[str, Any]]) -> str:
    lines = [f"# {kind.title()}s ({project})", ""]
    for row in rows:
        facts = [f"{kind}#{row['id']}", str(row["created_at"])[:10]]
        if row.get("valid_until"):
            facts.append(f"valid until {row['valid_until']}")
        if row.get("tags"):
            facts.append("tags: " + ", ".join(row["tags"]))
        lines += [f"## {_one_line(row['content'])}", "", " · ".join(facts)]
        if row.get("detail"):
            lines += ["", str(row["detail"])]
        lines.append("")
    return "\n".join(lines)


def _one_line(text: Any) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= 100 else flat[:99].rstrip() + "…"


def _write(path: Path, text: str) -> str:
    from recall.private_files import open_private

    with open_private(path) as handle:
        handle.write(text.encode("utf-8"))
    return str(path)
