"""Small text operations on TOML files, for edits that must leave every other byte alone.

``tomllib`` reads TOML but cannot write it, and a round trip through any writer would drop comments
and reorder keys. These helpers find table spans and single-line keys by their line shapes; callers
check the outcome by parsing before and after (``recall.connect.codex._checked``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from typing import Any

from recall.connect.plan import Refused

_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)


def parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused(f"it is not valid TOML ({exc})") from None


def string(value: str) -> str:
    """A TOML basic string (JSON's escapes are a subset of TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def array(values: Sequence[str]) -> str:
    return "[" + ", ".join(string(value) for value in values) + "]"


def first_header(text: str, after: int = 0) -> int | None:
    match = _HEADER.search(text, after)
    return match.start() if match else None


def table_span(text: str, start: int) -> tuple[int, int]:
    """From the table's header line to the next header (or the end of the file)."""
    line_end = text.find("\n", start)
    following = None if line_end < 0 else first_header(text, line_end + 1)
    return start, len(text) if following is None else following


def set_line(table: str, key: str, value: str) -> str:
    """Give ``key = value`` in a table's text, replacing its one-line assignment or adding one."""
    line = f"{key} = {value}"
    pattern = re.compile(rf"^{re.escape(key)}[ \t]*=[^\r\n]*", re.MULTILINE)
    if pattern.search(table):
        return pattern.sub(lambda _: line, table, count=1)
    header_end = table.find("\n") + 1
    newline = "\r\n" if "\r\n" in table else "\n"
    return table[:header_end] + line + newline + table[header_end:]


def drop_line(table: str, key: str) -> str:
    """Remove ``key``'s one-line assignment (and its line ending) from a table's text, if there."""
    return re.sub(rf"^{re.escape(key)}[ \t]*=[^\r\n]*(?:\r?\n)?", "", table, count=1, flags=re.MULTILINE)


def append(text: str, block: str) -> str:
    """Add a table at the end, after one blank line (``cut`` undoes exactly this)."""
    if not text:
        return block
    newline = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", newline)
    return text + (newline if text.endswith(newline) else newline * 2) + block


def cut(text: str, start: int, end: int) -> str:
    """Remove ``text[start:end]``, and the blank line ``append`` put before it when it was last."""
    before, after = text[:start], text[end:]
    newline = "\r\n" if "\r\n" in text else "\n"
    if not after and before.endswith(newline * 2):
        before = before[: -len(newline)]
    return before + after
