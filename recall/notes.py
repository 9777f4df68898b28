"""Notes: markdown documents kept at a path inside a project (``notes/architecture.md``), with
optional frontmatter, for what does not fit a one-line decision or learning: an architecture
overview, a runbook, a glossary. Agents write them whole or edit them in place; they are searched
with everything else and exported as files (adr/0032).

Paths are relative, ``/``-separated, with no ``..`` or hidden segments, so an export writes each
note inside its folder and nowhere else; ``.md`` is added when a path has no suffix. Prepending keeps a frontmatter block first. An edit by
``str_replace`` changes exactly one passage: it is refused when the passage occurs more than once
or not at all, so an agent never edits a place it did not mean.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from recall.errors import InvalidInput, NotFound

EditMode = Literal["replace", "append", "prepend", "str_replace"]
EDIT_MODES: tuple[str, ...] = ("replace", "append", "prepend", "str_replace")
MAX_NOTE_CHARS = 200_000
MAX_PATH_CHARS = 300
_SEGMENT = re.compile(r"^[\w][\w .@+-]*$")
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


def clean_path(path: str) -> str:
    """The note's path as stored, or an error that says what a path may be."""
    text = str(path).strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    segments = text.split("/")
    if not text or text.startswith("/") or len(text) > MAX_PATH_CHARS:
        raise InvalidInput(
            f"a note path is relative and at most {MAX_PATH_CHARS} characters, like notes/architecture.md; got {path!r}"
        )
    for segment in segments:
        if not _SEGMENT.match(segment) or segment.endswith(" "):
            raise InvalidInput(
                f"cannot use {segment!r} in a note path: folders and names are letters, digits, spaces, "
                f"'.', '-', '_', '@' or '+', not starting with '.' (e.g. notes/architecture.md)"
            )
    if "." not in segments[-1]:
        text += ".md"
    return text


def clean_folder(folder: str | None) -> str:
    if folder is None or not str(folder).strip().strip("/"):
        return ""
    text = str(folder).strip().replace("\\", "/").strip("/")
    for segment in text.split("/"):
        if not _SEGMENT.match(segment):
            raise InvalidInput(
                f"cannot read {folder!r} as a folder of notes; write it like notes or notes/design"
            )
    return text


def check_text(content: str | None, field: str = "content") -> str:
    if content is None:
        raise InvalidInput(f"{field} is required")
    if len(content) > MAX_NOTE_CHARS:
        raise InvalidInput(f"{field} is {len(content):,} characters; a note holds at most {MAX_NOTE_CHARS:,}")
    return content


def edited(current: str | None, mode: str, content: str | None, old: str | None, new: str | None) -> str:
    """The note's text after one edit; ``current`` is None when there is no note yet."""
    if mode not in EDIT_MODES:
        raise InvalidInput(f"unknown edit mode {mode!r}; use one of: {', '.join(EDIT_MODES)}")
    if mode == "str_replace":
        if current is None:
            raise NotFound("there is no such note to edit; write it with note_write first")
        if not old:
            raise InvalidInput("str_replace needs old: the exact passage to replace")
        times = current.count(old)
        if times != 1:
            where = "does not occur in the note" if times == 0 else f"occurs {times} times"
            raise InvalidInput(
                f"old {where}; give a passage that occurs exactly once (add surrounding lines)"
            )
        return check_text(current.replace(old, check_text(new, "new")), "the edited note")
    text = check_text(content)
    if mode == "replace" or not current:
        return text
    if mode == "append":
        return check_text(current + ("" if current.endswith("\n") else "\n") + text, "the edited note")
    # Prepending keeps a frontmatter block first, where readers of the file look for it.
    match = _FRONTMATTER.match(current)
    head, body = (current[: match.end()], current[match.end() :]) if match else ("", current)
    if head and not head.endswith("\n"):
        head += "\n"
    return check_text(head + text + ("" if text.endswith("\n") else "\n") + body, "the edited note")


def frontmatter(content: str) -> dict[str, Any]:
    """``key: value`` lines between a leading pair of ``---`` lines (a small subset of YAML: what notes use)."""
    match = _FRONTMATTER.match(content)
    if match is None:
        return {}
    found: dict[str, Any] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-", "#")):
            found[key.strip()] = value.strip().strip("'\"")
    return found


def title(path: str, content: str) -> str:
    """The frontmatter's title, else the first heading, else the file name."""
    named = frontmatter(content).get("title")
    if named:
        return str(named)
    body = _FRONTMATTER.sub("", content, count=1)
    for line in body.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.rsplit("/", 1)[-1]
