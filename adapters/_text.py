"""Shaping host text for a small, searchable store: tool one-liners, caps and image markers.

Ground truth (shared/ref/transcript-formats.md §2.6–2.8, §4.5, §5):

- Tool calls carry their input as an object (Claude ``tool_use.input``) or a JSON string that may be
  invalid (Codex ``function_call.arguments``) or raw text (Codex ``custom_tool_call.input``, e.g. an
  apply_patch body). Only the tool name and a one-line gist are worth keeping.
- Tool results can be tens of KB (whole files, build logs); they are handed over whole with the
  most the store keeps of them (a :class:`recall.transcript.Cut`), and the store cuts them after
  scrubbing with a marker that says how much was dropped (adr/0013).
- Images arrive as base64 blocks or inline ``data:<mime>;base64,`` URLs of up to several MB; they
  are replaced by ``[image]`` (other base64 data URLs by ``[data URL]``). URL-encoded data URLs
  (``data:image/svg+xml,%3Csvg…``, seen inside CSS a tool read) are short and stay as they are.
- Command output is recorded verbatim, terminal colour codes included; those are removed.
"""

from __future__ import annotations

import json
import re
from typing import Any

TEXT_CAP = 100_000  # longest non-tool text kept per message (a pasted log, a long summary)
LINE_CAP = 240  # longest one-line gist of a tool call's input the store keeps
IMAGE_MARKER = "[image]"
EMPTY_RESULT = "[empty result]"

_DATA_URL_RE = re.compile(
    r"data:([A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+)?(?:;[A-Za-z0-9.+=-]+)*;base64,[A-Za-z0-9+/=]+"
)
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Input keys that name what a tool acts on, most telling first (Claude, Codex, OpenCode, Gemini tools).
_GIST_KEYS = (
    "command",
    "cmd",
    "file_path",
    "filePath",
    "notebook_path",
    "pattern",
    "query",
    "url",
    "path",
    "description",
    "skill",
    "prompt",
    "input",
)
_SHELL_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic", "-Command", "/c"})
_PATCH_FILE_PREFIXES = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def result_text(text: str) -> str:
    """A tool result as stored: an empty one becomes a marker, so every call keeps its result."""
    return text if text.strip() else EMPTY_RESULT


def clean(text: str) -> str:
    """Text fit to store: base64 data URLs become markers and terminal colour codes go.

    Data URLs are megabytes of noise to search and storage; ANSI codes (in command output the
    hosts record verbatim) only break words apart.
    """
    if "data:" in text:
        text = _DATA_URL_RE.sub(_data_url_marker, text)
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    return text


def _data_url_marker(match: re.Match[str]) -> str:
    mime = match.group(1) or ""
    return IMAGE_MARKER if mime.startswith("image/") else "[data URL]"


def tool_call_text(name: str, arguments: Any) -> str:
    """``"<tool>: <one-line gist>"``, e.g. ``Bash: git status`` or ``Edit: src/app.py``.

    The gist is whole; the store cuts it to :func:`tool_call_limit` after scrubbing.
    """
    gist = _gist(arguments)
    return f"{name}: {gist}" if gist else name


def tool_call_limit(name: str, tool_text_cap: int) -> int:
    """The most of a tool call's text the store keeps: its name and ``LINE_CAP`` of gist."""
    return min(tool_text_cap, len(name) + 2 + LINE_CAP)


def _gist(arguments: Any) -> str:
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if stripped[:1] in ("{", "["):
            try:
                arguments = json.loads(stripped)
            except ValueError:
                return first_line(stripped)
        else:
            return _patch_files(stripped) or first_line(stripped)
    if isinstance(arguments, list):
        return first_line(_shell_command(arguments))
    if not isinstance(arguments, dict):
        return "" if arguments is None else first_line(str(arguments))
    for key, unit in (("todos", "items"), ("plan", "steps")):
        value = arguments.get(key)
        if isinstance(value, list):
            return f"{len(value)} {unit}"
    for key in _GIST_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return _patch_files(value) or first_line(value)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return first_line(_shell_command(value))
    if not arguments:
        return ""
    return first_line(json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str))


def _shell_command(argv: list[Any]) -> str:
    """``["bash", "-lc", "git status"]`` → ``git status``; other argv lists joined by spaces."""
    parts = [str(a) for a in argv]
    if len(parts) >= 3 and parts[-2] in _SHELL_FLAGS:
        return parts[-1]
    return " ".join(parts)


def _patch_files(text: str) -> str:
    """The files an apply_patch body touches, or "" when ``text`` is not a patch."""
    if "*** Begin Patch" not in text:
        return ""
    files = [
        line[len(prefix) :].strip()
        for line in text.splitlines()
        for prefix in _PATCH_FILE_PREFIXES
        if line.startswith(prefix)
    ]
    return first_line(", ".join(files)) if files else "patch"


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, with ``…`` when lines were left out."""
    stripped = text.strip()
    line, _, rest = stripped.partition("\n")
    line = line.strip()
    return f"{line} …" if rest.strip() else line
