"""What an edit added to a file: the definitions in its added lines, the packages it imports.

Read by the file's extension only, so a definition pattern never runs on text of another language.
Patches (Codex ``apply_patch`` bodies, unified diffs) are split into the files they change, each with
its added lines and its hunk headers (``@@ def foo():``), which name the definition a hunk changed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from recall.entities.mention import words

MAX_LINES = 2000  # an edit is read this far; a 50,000-line generated file adds nothing but time
MAX_SYMBOLS = 40

_P = re.compile
_DEFINITIONS: dict[str, tuple[re.Pattern[str], ...]] = {
    "python": (
        _P(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*[(\[]"),
        _P(r"^\s*class\s+([A-Za-z_]\w*)\s*[(:\[]"),
    ),
    "javascript": (
        _P(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]"),
        _P(r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)"),
        _P(
            r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?"
            r"(?:function\b|\([^()]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
        _P(r"^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+([A-Z][\w$]*)"),
    ),
    "go": (
        _P(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[\[(]"),
        _P(r"^type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b"),
    ),
    "rust": (
        _P(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)"),
        _P(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union)\s+([A-Z]\w*)"),
    ),
    "ruby": (
        _P(r"^\s*def\s+(?:self\.)?([A-Za-z_]\w*[?!]?)"),
        _P(r"^\s*(?:class|module)\s+([A-Z][\w:]*)"),
    ),
    "elixir": (
        _P(r"^\s*(?:def|defp|defmacro|defmacrop|defguard)\s+([a-z_]\w*[?!]?)"),
        _P(r"^\s*defmodule\s+([A-Z][\w.]*)"),
    ),
    "jvm": (
        _P(
            r"^\s*(?:(?:public|private|protected|internal|static|final|abstract|sealed|data|open|"
            r"override)\s+)*(?:class|interface|enum|record|object|struct|protocol)\s+([A-Z]\w*)"
        ),
        _P(
            r"^\s*(?:(?:public|private|protected|internal|static|override|open|suspend|final)\s+)*"
            r"fun\s+([A-Za-z_]\w*)\s*[<(]"
        ),
        _P(
            r"^\s*(?:(?:public|private|fileprivate|internal|static|override|mutating|@\w+)\s+)*"
            r"func\s+([A-Za-z_]\w*)\s*[<(]"
        ),
        _P(
            r"^\s*(?:public|private|protected|internal)\s+(?:(?:static|final|abstract|synchronized|async|"
            r"override|virtual|sealed)\s+)*[\w<>\[\],.?]+\s+([A-Za-z_]\w*)\s*\("
        ),
    ),
    "php": (
        _P(r"^\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+([A-Za-z_]\w*)\s*\("),
        _P(r"^\s*(?:abstract\s+|final\s+)?(?:class|interface|trait|enum)\s+([A-Z]\w*)"),
    ),
}
_LANGUAGES = {
    "python": "py pyi",
    "javascript": "js jsx ts tsx mjs cjs mts cts vue svelte",
    "go": "go",
    "rust": "rs",
    "ruby": "rb rake",
    "elixir": "ex exs",
    "jvm": "java kt kts scala cs swift dart groovy",
    "php": "php",
}
LANGUAGE_OF = {ext: language for language, exts in _LANGUAGES.items() for ext in exts.split()}

_PY_IMPORT = _P(
    r"^\s*import\s+([A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*(?:\s+as\s+\w+)?)*)\s*(?:#.*)?$"
)
_PY_FROM = _P(r"^\s*from\s+([A-Za-z_][\w.]*)\s+import\b")
_JS_IMPORT = _P(
    r"""(?:^\s*(?:import|export)\s+(?:[\w*${}\s,]+\s+from\s+)?|\brequire\(\s*|\bimport\(\s*)['"]([^'"\s]+)['"]"""
)
_GO_IMPORT = _P(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"([a-z0-9.-]+\.[a-z]{2,}/[^"\s]+)"\s*$')
_RUST_USE = _P(r"^\s*(?:pub\s+)?(?:use|extern\s+crate)\s+([a-z_]\w*)")
_PY_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
_NODE_BUILTINS = words(
    """assert buffer child_process cluster crypto dgram dns events fs http http2 https module net os path
    perf_hooks process querystring readline stream string_decoder timers tls tty url util v8 vm
    worker_threads zlib"""
)
_RUST_LOCAL = frozenset({"std", "core", "alloc", "crate", "self", "super"})
_MANIFEST_LINES: dict[str, re.Pattern[str]] = {
    "requirements": _P(r"^\s*([A-Za-z0-9][\w.-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~]=?.*|;.*)?$"),
    "package.json": _P(r'^\s*"(@?[\w.-]+(?:/[\w.-]+)?)"\s*:\s*"(?:[\^~<>=*]|\d|workspace:|npm:|latest)'),
    "Cargo.toml": _P(r'^\s*([A-Za-z0-9_-]+)\s*=\s*(?:"[\^~=<>]?\d|\{\s*(?:version|path|git|workspace))'),
    "pyproject.toml": _P(r'^\s*"([A-Za-z0-9][\w.-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~]=?[^"]*)?"\s*,?\s*$'),
    "mix.exs": _P(r"^\s*\{:(\w+),"),
    "go.mod": _P(r"^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}/\S+)\s+v\d"),
    "Gemfile": _P(r"""^\s*gem\s+['"]([\w.-]+)['"]"""),
}
_MANIFEST_NOT_DEPS = frozenset({"version", "name", "edition", "node", "npm", "pnpm", "yarn", "rust-version"})
_HUNK = _P(r"^@@(?:\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@)?\s?(.*)$")
_PATCH_FILE = _P(r"^\*\*\* (Add|Update|Delete) File: (.+)$")
_DIFF_FILE = _P(r"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$")


@dataclass(slots=True)
class FileChange:
    """One file a patch touches: its path as written, whether it was deleted, what it added."""

    path: str
    deleted: bool = False
    added: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)


def language(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    return LANGUAGE_OF.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None


def definitions(path: str, lines: Iterable[str]) -> list[str]:
    """Names defined in ``lines`` of the file ``path``, in order, each once."""
    patterns = _DEFINITIONS.get(language(path) or "", ())
    if not patterns:
        return []
    found: dict[str, None] = {}
    for count, line in enumerate(lines):
        if count >= MAX_LINES or len(found) >= MAX_SYMBOLS:
            break
        for pattern in patterns:
            match = pattern.match(line)
            if match and len(match.group(1)) > 1:
                found.setdefault(match.group(1), None)
                break
    return list(found)


def imports(path: str, lines: Iterable[str], is_local: Callable[[str], bool]) -> list[str]:
    """Third-party packages ``lines`` import or declare: not the standard library, not the project.

    ``is_local`` says whether a top-level name is the project's own (one of its folders or modules):
    that is an import of the project itself, not of a package. The edited file's own folders count.
    """
    text = list(lines)[:MAX_LINES]
    manifest = _manifest(path.rsplit("/", 1)[-1])
    if manifest is not None:
        return _declared(manifest, text)
    reader = _IMPORT_READERS.get(language(path) or "")
    if reader is None:
        return []
    own = set(path.split("/")[:-1]) | {path.rsplit("/", 1)[-1].split(".", 1)[0]}
    found: dict[str, None] = {}
    for line in text:
        for package in reader(line):
            if package not in own and not is_local(package):
                found.setdefault(package, None)
    return list(found)


def _declared(manifest: str, lines: list[str]) -> list[str]:
    """Dependencies a manifest edit lists; package.json, Cargo.toml and pyproject.toml only in a
    dependencies section, as their other keys look the same."""
    if manifest not in ("requirements", "mix.exs", "go.mod", "Gemfile") and not any(
        "dependencies" in line.lower() for line in lines
    ):
        return []
    pattern = _MANIFEST_LINES[manifest]
    found: dict[str, None] = {}
    for line in lines:
        match = pattern.match(line)
        if match and match.group(1) not in _MANIFEST_NOT_DEPS and not line.lstrip().startswith(("#", "-")):
            found.setdefault(match.group(1), None)
    return list(found)


def _manifest(name: str) -> str | None:
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return "requirements"
    return name if name in _MANIFEST_LINES else None


def _python_imports(line: str) -> list[str]:
    match = _PY_IMPORT.match(line)
    modules = [part.split()[0] for part in match.group(1).split(",")] if match else []
    match = _PY_FROM.match(line)
    if match:
        modules.append(match.group(1))
    tops = (module.split(".", 1)[0] for module in modules)
    return [top for top in tops if top not in _PY_STDLIB and not top.startswith("_")]


def _javascript_imports(line: str) -> list[str]:
    found = []
    for spec in _JS_IMPORT.findall(line):
        if spec.startswith((".", "/", "~", "#", "@/", "node:", "http:", "https:", "$")):
            continue
        parts = spec.split("/")
        name = "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]
        if name not in _NODE_BUILTINS and re.match(r"^@?[\w.-]+(?:/[\w.-]+)?$", name):
            found.append(name)
    return found


def _go_imports(line: str) -> list[str]:
    match = _GO_IMPORT.match(line)
    if not match:
        return []
    parts = match.group(1).split("/")
    return [
        "/".join(parts[:3]) if parts[0] in ("github.com", "gitlab.com", "bitbucket.org") else match.group(1)
    ]


def _rust_imports(line: str) -> list[str]:
    match = _RUST_USE.match(line)
    crate = match.group(1) if match else None
    return [crate] if crate and crate not in _RUST_LOCAL else []


_IMPORT_READERS: dict[str, Callable[[str], list[str]]] = {
    "python": _python_imports,
    "javascript": _javascript_imports,
    "go": _go_imports,
    "rust": _rust_imports,
}


def header_symbols(path: str, headers: Iterable[str]) -> list[str]:
    """The definitions hunk headers name: ``@@ def build(self):`` says the hunk changed ``build``."""
    return definitions(path, (h.strip() for h in headers))


def parse_patch(text: str) -> list[FileChange]:
    """The files an ``apply_patch`` body or a unified diff changes, with added lines and hunk headers."""
    changes: list[FileChange] = []
    current: FileChange | None = None
    for line in text.splitlines():
        started = _file_of(line)
        if started is not None:
            current = started if started.path != "/dev/null" else None
            if current is not None:
                changes.append(current)
        elif line.startswith("*** Move to: ") and current is not None:
            current = FileChange(line[len("*** Move to: ") :].strip())
            changes.append(current)
        elif current is None:
            continue
        elif line.startswith("@@"):
            header = _HUNK.match(line)
            if header and header.group(1).strip():
                current.headers.append(header.group(1))
        elif line.startswith("+"):
            current.added.append(line[1:])
    return changes


def _file_of(line: str) -> FileChange | None:
    """The file a patch line starts: ``*** Update File: x`` (apply_patch) or ``+++ b/x`` (diff)."""
    if line.startswith("*** "):
        match = _PATCH_FILE.match(line)
        return FileChange(match.group(2).strip(), deleted=match.group(1) == "Delete") if match else None
    if line.startswith("+++ "):
        match = _DIFF_FILE.match(line)
        return FileChange(match.group(1).strip()) if match else None
    return None


def added_lines(old: str | None, new: str) -> list[str]:
    """The lines of ``new`` that ``old`` did not have: what a search-and-replace edit added."""
    before = set(old.splitlines()) if old else set()
    return [line for line in new.splitlines()[:MAX_LINES] if line not in before]
