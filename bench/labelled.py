"""Labelled transcripts for the extraction benchmarks: loading the labels, importing the files they
name, and deciding which stored message a label points at and which record or brief line carries it.

A label (bench/extract/GUIDE.md) names a transcript file relative to the fixtures root, the line that
holds the memory, its kind, a one-sentence statement and a verbatim quote of the message text. A
label is *carried* by an extracted record of its kind whose sources include the quoted message, or
whose content holds the quote; by a past message shown in a brief when it is that message.

This module only uses what every recall since the first brief has (``Store``, ``run_import``), so
bench/brief_share.py can measure a checkout from before extraction as well.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recall.store import Store

BENCH = Path(__file__).resolve().parent
LABELS = BENCH / "extract" / "labels.json"
# ../shared next to the repository, or next to the folder of worktrees (/work/wt/<name>).
SHARED = next((p for p in (BENCH.parents[1] / "shared", BENCH.parents[2] / "shared") if p.is_dir()),
              BENCH.parents[1] / "shared")  # fmt: skip
FIXTURES = SHARED / "fixtures" / "transcripts"


@dataclass(frozen=True, slots=True)
class Label:
    file: str
    line: int
    kind: str
    statement: str
    quote: str


@dataclass(frozen=True, slots=True)
class LabelSet:
    files: list[dict[str, str]]
    tasks: list[dict[str, str]]
    labels: list[Label]


def load(path: Path = LABELS) -> LabelSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    return LabelSet(
        files=data["files"],
        tasks=data.get("tasks", []),
        labels=[Label(**label) for label in data["labels"]],
    )


def import_files(store: Store, root: Path, files: list[dict[str, str]]) -> int:
    """Import every named file or folder with its host's reader; returns the messages stored."""
    from adapters import get_adapter
    from recall.ingest import run_import

    added = 0
    for entry in files:
        path = (root / entry["path"]).resolve()
        if not path.exists():
            raise SystemExit(f"missing fixture {path}; pass --fixtures with the folder the labels name")
        summary = run_import(store, [get_adapter(entry["host"])], paths=[path], embed_budget_seconds=0)
        added += summary.messages_added
    return added


def normalise(text: str) -> str:
    return " ".join(text.replace("\\n", "\n").split()).lower()


def label_messages(store: Store, root: Path, label: Label) -> set[int]:
    """Ids of the stored messages of the label's file whose text holds the quote."""
    path = str((root / label.file).resolve())
    quote = normalise(label.quote)
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT m.id, m.content FROM messages m JOIN sessions s ON s.id = m.session_id WHERE s.source_path = ?",
            (path,),
        ).fetchall()
    return {int(row[0]) for row in rows if quote in normalise(row[1])}


def carries(label: Label, messages: set[int], kind: str, content: str, sources: list[int]) -> bool:
    """Whether a record (or, with kind "message", a message id in ``sources``) carries the label."""
    if kind == "message":
        return bool(messages & set(sources))
    if kind != label.kind:
        return False
    return bool(messages & set(sources)) or normalise(label.quote) in normalise(content)


def record_sources(store: Store, kind: str, row_id: int) -> tuple[str, list[int]]:
    """(content, source message ids) of a record; no sources where this recall keeps none."""
    from recall.models import RecordKind

    row: dict[str, Any] | None = store.get(RecordKind(kind), row_id)
    if row is None:
        return "", []
    return str(row.get("content", "")), list(row.get("sources") or [])
