"""Edit a JSON document as text, touching only the bytes of the member or item that changes.

Agents' config files are written by hand and by the agents themselves (``~/.claude.json`` is rewritten
by Claude Code all the time). Re-serialising them would re-flow every inline array and reorder
nothing but still change bytes the user never asked us to touch. Instead the text is scanned once
for the spans of its values and an edit splices one span: an insertion goes after the last member
of its container with the indentation of its neighbours, and a removal deletes exactly the text an
insertion would have added, so connect followed by disconnect gives back the original bytes.

Only strict JSON is edited (``json.loads`` must accept it); anything else is refused untouched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from recall.connect.plan import Refused

JsonPath = tuple[str | int, ...]

_WS = re.compile(r"[ \t\r\n\ufeff]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


@dataclass
class _Node:
    start: int
    end: int
    kind: str  # "object" | "array" | "scalar"
    keys: list[str] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)

    def starts(self) -> list[int]:
        """Where each member (its key) or item begins."""
        return self.key_starts if self.kind == "object" else [child.start for child in self.children]

    def index(self, key: str | int) -> int | None:
        if self.kind == "object" and isinstance(key, str):
            found = [i for i, name in enumerate(self.keys) if name == key]
            return found[-1] if found else None  # json.loads keeps the last duplicate
        if self.kind == "array" and isinstance(key, int) and -len(self.children) <= key < len(self.children):
            return key % len(self.children)
        return None


def load(text: str) -> Any:
    """The parsed document; a file that is not strict JSON is refused with the parser's reason."""
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        raise Refused(f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def get(text: str, path: JsonPath) -> Any:
    """The value at ``path``, or None when any step is missing."""
    value = load(text)
    for key in path:
        if isinstance(value, dict) and isinstance(key, str):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def set_value(text: str, path: JsonPath, value: Any) -> str:
    """``document[path] = value``, creating missing objects on the way; unchanged text if equal."""
    node = _parse(text)
    for depth, key in enumerate(path):
        position = node.index(key)
        if position is None:
            if node.kind != "object" or not isinstance(key, str):
                raise Refused(f"{_name(path[:depth])} is not an object")
            nested = value
            for outer in reversed(path[depth + 1 :]):
                if not isinstance(outer, str):
                    raise Refused(f"{_name(path[: depth + 1])} is missing")
                nested = {outer: nested}
            return _insert(text, node, key, nested)
        node = node.children[position]
    if json.loads(text[node.start : node.end]) == value:
        return text
    return _splice(text, node.start, node.end, _render(text, value, node.start, _multiline(text, node)))


def append(text: str, path: JsonPath, value: Any) -> str:
    """Add ``value`` at the end of the array at ``path`` (created when missing)."""
    node = _find(_parse(text), path)
    if node is None:
        return set_value(text, path, [value])
    if node.kind != "array":
        raise Refused(f"{_name(path)} is not a list")
    return _insert(text, node, None, value)


def remove(text: str, path: JsonPath) -> str:
    """Delete the member or item at ``path`` (unchanged text when it is not there)."""
    parent = _find(_parse(text), path[:-1])
    position = None if parent is None else parent.index(path[-1])
    if parent is None or position is None:
        return text
    starts = parent.starts()
    if len(parent.children) == 1:
        return _splice(text, parent.start + 1, parent.end - 1, "")
    if position > 0:
        return _splice(text, parent.children[position - 1].end, parent.children[position].end, "")
    return _splice(text, starts[0], starts[1], "")


def prune(text: str, path: JsonPath) -> str:
    """Remove the container at ``path`` and then its parents, deepest first, while they are empty."""
    for depth in range(len(path), 0, -1):
        value = get(text, path[:depth])
        if value not in ({}, []):
            break
        text = remove(text, path[:depth])
    return text


# -- scanning --------------------------------------------------------------------------------------


def _parse(text: str) -> _Node:
    load(text)  # strictness first: the scanner below trusts its input
    node, _ = _value(text, _skip(text, 0))
    return node


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _value(text: str, i: int) -> tuple[_Node, int]:
    opener = text[i]
    if opener in "{[":
        node = _Node(i, -1, "object" if opener == "{" else "array")
        closer = "}" if opener == "{" else "]"
        i = _skip(text, i + 1)
        while text[i] != closer:
            if node.kind == "object":
                key = _STRING.match(text, i)
                assert key is not None
                node.keys.append(json.loads(key.group()))
                node.key_starts.append(i)
                i = _skip(text, _skip(text, key.end()) + 1)  # past the colon
            child, i = _value(text, i)
            node.children.append(child)
            i = _skip(text, i)
            if text[i] == ",":
                i = _skip(text, i + 1)
        node.end = i + 1
        return node, i + 1
    match = (_STRING if opener == '"' else _SCALAR).match(text, i)
    assert match is not None
    return _Node(i, match.end(), "scalar"), match.end()


def _find(root: _Node, path: JsonPath) -> _Node | None:
    node = root
    for key in path:
        position = node.index(key)
        if position is None:
            return None
        node = node.children[position]
    return node


# -- writing ---------------------------------------------------------------------------------------


def _insert(text: str, container: _Node, key: str | None, value: Any) -> str:
    """Add a member (``key``) or an item (``key`` None) after the container's last entry."""
    label = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    newline = _newline(text)
    if container.children:
        last = container.children[-1]
        if not _multiline(text, container):
            return _splice(text, last.end, last.end, ", " + label + json.dumps(value, ensure_ascii=False))
        indent = _line_indent(text, container.starts()[-1])
        entry = label + _render(text, value, container.starts()[-1], True)
        return _splice(text, last.end, last.end, "," + newline + indent + entry)
    if "\n" not in text.strip() and len(text.strip()) > 2:  # a one-line document stays one line
        return _splice(
            text, container.start + 1, container.end - 1, label + json.dumps(value, ensure_ascii=False)
        )
    outer = _line_indent(text, container.start)
    inner = outer + _unit(text)
    body = label + _render(text, value, None, True, base=inner)
    return _splice(text, container.start + 1, container.end - 1, newline + inner + body + newline + outer)


def _render(text: str, value: Any, at: int | None, multiline: bool, *, base: str | None = None) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    base = _line_indent(text, at) if base is None else base
    rendered = json.dumps(value, ensure_ascii=False, indent=_unit(text))
    return rendered.replace("\n", _newline(text) + base)


def _multiline(text: str, node: _Node) -> bool:
    return "\n" in text[node.start : node.end] or (node.kind == "scalar" and "\n" in text.strip())


def _line_indent(text: str, at: int | None) -> str:
    if at is None:
        return ""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _unit(text: str) -> str:
    """The file's indentation step: a tab, or the smallest run of leading spaces (two by default)."""
    indents = _INDENT.findall(text)
    if any(indent.startswith("\t") for indent in indents):
        return "\t"
    return " " * min((len(indent) for indent in indents), default=2)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _splice(text: str, start: int, end: int, replacement: str) -> str:
    return text[:start] + replacement + text[end:]


def _name(path: JsonPath) -> str:
    return ".".join(str(part) for part in path) or "the document"
