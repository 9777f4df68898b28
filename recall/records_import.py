"""Importing records from a JSONL export (recall.records_export): every line checked like `recall add`
checks its input, scrubbed and stamped by the write path, ids remapped, supersession links restored.

A line (or, over MCP, a record: its position) that cannot be read (not JSON, an unknown kind, empty content, a note path outside its
folder...) is counted and named with its line number, and the rest are imported. Provenance is not
read from the file: whoever runs the import vouches for it, as for `recall add` (adr/0032).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recall.errors import InvalidInput
from recall.models import JSON_COLUMNS, TABLE_NAMES, TABLES, DecisionStatus, RecordKind
from recall.store.writer import TEXT_COLUMNS, to_db_time

if TYPE_CHECKING:
    from recall.store import Store

MAX_PROBLEMS = 20
_KINDS = {
    kind.value: kind
    for kind in (RecordKind.DECISION, RecordKind.LEARNING, RecordKind.BREADCRUMB, RecordKind.NOTE)
}
# What an import never takes from a file: the write path decides these, or they point at rows here.
_NEVER = frozenset({"id", "kind", "ref", "provenance", "session_id", "superseded_by", "updated_at", "sources",
                    "extraction", "entities", "frontmatter", "title", "chars"})  # fmt: skip
_PLAIN = ("status", "confidence", "importance", "valid_until")  # each taken where the kind has it


@dataclass(slots=True)
class ImportedRecords:
    """What an import did: records added per kind, those already here, links restored, lines refused."""

    added: Counter[str] = field(default_factory=Counter)
    already_there: int = 0
    links: int = 0
    unlinked: int = 0  # superseded_by named a decision that is not in the file
    refused: int = 0
    problems: list[str] = field(default_factory=list)

    def refuse(self, line: int, reason: str) -> None:
        self.refused += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {line}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": dict(self.added),
            "already_there": self.already_there,
            "supersession_links": self.links,
            "unlinked": self.unlinked,
            "refused": self.refused,
            "problems": self.problems,
        }


def import_records(store: Store, lines: Iterable[str], *, project: str | None = None) -> ImportedRecords:
    """Import a JSONL export; ``project`` puts every record in that project instead of its own."""
    from recall.store.imported import BATCH, IncomingRecord, link_superseded, write_imported

    report = ImportedRecords()
    ids: dict[tuple[str, int], int] = {}  # (project in the file, id there) of decisions -> id here
    wanted: list[tuple[int, str, int]] = []  # (decision here, its project in the file, superseded_by there)
    batch: list[tuple[IncomingRecord, str]] = []

    def flush() -> None:
        for (record, row_id, new), origin in zip(
            write_imported(store, [r for r, _ in batch]), (o for _, o in batch), strict=True
        ):
            if new:
                report.added[record.kind.value] += 1
            else:
                report.already_there += 1
            if record.kind is RecordKind.DECISION and record.old_id is not None:
                ids[(origin, record.old_id)] = row_id
                if new and record.superseded_by is not None:
                    wanted.append((row_id, origin, record.superseded_by))
        batch.clear()

    for number, data in _objects(lines, report):
        try:
            record, origin = _incoming(data, project)
        except InvalidInput as exc:
            report.refuse(number, str(exc))
            continue
        batch.append((record, origin))
        if len(batch) >= BATCH:
            flush()
    flush()
    links = []
    for row_id, origin, by in wanted:
        target = ids.get((origin, by))
        if target is None:
            report.unlinked += 1
        else:
            links.append((row_id, target))
    link_superseded(store, links)
    report.links = len(links)
    return report


def _objects(lines: Iterable[str], report: ImportedRecords) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            report.refuse(number, f"not JSON ({exc})")
            continue
        if not isinstance(data, dict):
            report.refuse(number, "not a JSON object")
            continue
        yield number, data


def _incoming(data: dict[str, Any], project: str | None) -> tuple[Any, str]:
    """A checked record from one line, and the project it had in the file."""
    from recall.notes import check_text, clean_path
    from recall.store.imported import IncomingRecord
    from recall.store.records import (
        check_confidence,
        check_content,
        check_importance,
        check_metadata,
        check_source,
        normalise_tags,
        parse_when,
    )

    kind = _KINDS.get(str(data.get("kind", "")).strip().lower())
    if kind is None:
        raise InvalidInput(f"kind must be one of {', '.join(_KINDS)}, got {data.get('kind')!r}")
    origin = check_content(str(data.get("project") or ""), "project", 500)
    values: dict[str, Any] = {"project": check_content(project, "project", 500) if project else origin}
    if kind is RecordKind.NOTE:
        values["path"] = clean_path(str(data.get("path") or ""))
        values["content"] = check_text(_text(data.get("content"), "content"))
    else:
        values["content"] = check_content(_text(data.get("content"), "content"))
        if data.get("detail"):
            values["detail"] = check_content(_text(data["detail"], "detail"), "detail", 100_000)
        values["tags"] = normalise_tags(data.get("tags") if isinstance(data.get("tags"), list) else [])
    for name in _PLAIN:
        if data.get(name) is None or name not in TABLES[kind].model_fields:
            continue
        if name == "importance":
            values[name] = check_importance(data[name])
        elif name == "confidence":
            values[name] = check_confidence(data[name])
        elif name == "status":
            values[name] = _status(data[name])
        else:
            values[name] = parse_when(str(data[name]))
    values.update(_later_columns(kind, data, values))
    if "source" in values:  # the caller's own small fields: the limits `recall add` keeps (adr/0026)
        values["source"] = check_source(_text(values["source"], "source"))
    if "meta" in values:
        values["meta"] = check_metadata(values["meta"])
    values["created_at"] = _time(data.get("created_at"), "created_at")
    updated = _time(data.get("updated_at"), "updated_at") if data.get("updated_at") else None
    old_id = (
        data.get("id") if isinstance(data.get("id"), int) and not isinstance(data.get("id"), bool) else None
    )
    by = data.get("superseded_by") if kind is RecordKind.DECISION else None
    record = IncomingRecord(kind, old_id, values, updated, by if isinstance(by, int) else None)
    return record, origin


def _later_columns(kind: RecordKind, data: dict[str, Any], taken: dict[str, Any]) -> dict[str, Any]:
    """Columns a later migration added that the Writer scrubs (text) or serialises (JSON): they travel too."""
    columns = set(TABLES[kind].model_fields)
    scrubbed = (set(TEXT_COLUMNS.get(TABLE_NAMES[kind], ())) | set(JSON_COLUMNS)) & columns
    return {
        key: value
        for key, value in data.items()
        if key in scrubbed and key not in taken and key not in _NEVER and value is not None
    }


def _status(value: Any) -> str:
    try:
        return DecisionStatus(str(value).strip().lower()).value
    except ValueError:
        raise InvalidInput(f"status must be active, superseded or reverted, got {value!r}") from None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    return value


def _time(value: Any, name: str) -> str:
    if value is None:
        from recall.store.writer import utc_now

        return to_db_time(utc_now()) or ""
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO 8601 time, got {value!r}") from None
    return to_db_time(parsed) or ""
