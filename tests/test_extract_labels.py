"""The labelled set of bench/extract: every quote is in the line its label names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
LABELS = json.loads((REPO / "bench" / "extract" / "labels.json").read_text(encoding="utf-8"))
FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"  # byte-for-byte copies of ../shared's


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@pytest.mark.parametrize("label", LABELS["labels"], ids=lambda label: f"{label['kind']}:{label['line']}")
def test_each_quote_is_in_the_message_its_label_names(label: dict[str, Any]) -> None:
    path = FIXTURES / label["file"]
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[label["line"] - 1])
    assert label["kind"] in ("decision", "learning", "breadcrumb")
    assert label["statement"].endswith(".") and len(label["quote"]) >= 12
    assert any(label["quote"] in text for text in strings(record.get("message", {}).get("content")))


def test_every_listed_file_exists() -> None:
    for entry in LABELS["files"]:
        assert (FIXTURES / entry["path"]).exists(), entry["path"]
