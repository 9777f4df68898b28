"""Entities in free text: file paths, URLs and their hosts, error lines, and code-like words.

Paths are recognised by a known file extension (or a well-known file name such as ``Makefile``), so
``e.g.``, ``v1.2.3``, ``github.com`` and ``Node.js`` are not files. Error lines are recognised by
their shape (``ValueError: ...``, ``error[E0308]: ...``, ``fatal: ...``) and named by their class and
message with the variable parts masked, so the same failure seen twice is one entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from recall.entities.mention import EntityType, Mention, Relation, words
from recall.entities.paths import ProjectPaths

MAX_TEXT_CHARS = 20_000  # a message is read this far for entities
MAX_ERROR_CHARS = 100

_EXTENSIONS = words(
    "py pyi ipynb js jsx ts tsx mjs cjs mts cts json jsonc json5 yaml yml toml ini cfg conf md mdx rst txt "
    "csv tsv sql sh bash zsh fish ps1 bat go mod rs rb erb ex exs heex eex leex erl hs java kt kts scala "
    "cs fs swift m mm c h cc cpp cxx hpp hh php pl lua r jl dart vue svelte astro html htm css scss sass "
    "less xml svg lock gradle tf tfvars proto graphql gql nix zig ml mli clj cljs edn elm sol log patch "
    "diff j2 jinja tmpl env example sample db sqlite wasm cmake mk"
)
_NAMED_FILES = words(
    "Makefile Dockerfile Containerfile Gemfile Rakefile Procfile Justfile justfile Vagrantfile "
    "Jenkinsfile Brewfile CODEOWNERS \\.gitignore \\.gitattributes \\.dockerignore \\.env \\.envrc "
    "\\.npmrc \\.nvmrc \\.editorconfig \\.bashrc \\.zshrc \\.profile"
)
# A file path is found from its extension: a dot, a known extension, then nothing that continues the
# name; the path is then read leftwards. A regex tried at every position costs ten times as much.
_DOT_EXT = re.compile(r"\.([A-Za-z0-9]{1,10})\b")
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@.+~/-")
_NOT_BEFORE = frozenset("$%&=:\\})]*?")  # `{dir}/x.md`, `a=b.py`, `**/x.md` are not paths of their own
_PATH = re.compile(r"@?((?:~/|\.{1,2}/|/)?(?:\.?[\w@+-][\w@.+-]*/)*\.?[\w@+-][\w@.+-]*)")
_NAMED_FILE = re.compile(
    rf"(?<![\w$%&=+/.~:\\}})\]-])@?((?:~/|\.{{1,2}}/|/)?(?:\.?[\w@+-][\w@.+-]*/)*(?:{'|'.join(_NAMED_FILES)}))"
    r"(?![\w/@.-])"
)
# Names of tools and libraries that look like file names in prose.
_NOT_FILES = words(
    "node.js vue.js next.js nuxt.js express.js d3.js three.js chart.js react.js angular.js ember.js "
    "backbone.js p5.js alpine.js moment.js nest.js nestjs.js solid.js svelte.js deno.js bun.js"
)
_URL = re.compile(r"\bhttps?://[^\s<>\"'`)\]}|\\]+", re.IGNORECASE)
_URL_TAIL = ".,;:!?'\")]}*"

_EXCEPTION = re.compile(
    r"^\s*(?:E\s+|Uncaught\s+|Caused by:\s+|Exception in thread \"[^\"]*\"\s+)?"
    r"((?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit|Fault|Failure|Timeout))"
    r"(?::\s*(.*))?$"
)
_ELIXIR = re.compile(r"^\s*\*\* \(([A-Z][\w.]*)\) (.*)$")
_CODED = re.compile(r"^\s*(error(?:\[E\d{4}\])?|fatal|panic|npm ERR!|npm error)(?::)?\s+(.+)$")
# npm follows its error with lines of context (code, path, workspace, log file): not errors of their own.
_NPM_CONTEXT = re.compile(
    r"^(?:code \d+$|path |workspace |location |command |errno |syscall |A complete log|Log files)"
)
_NOT_FOUND = re.compile(
    r"^[\w.-]+: (?:.*: )?(No such file or directory|Permission denied|command not found)$"
)
_TSC = re.compile(r"\berror (TS\d{3,5}): (.+)$")
_FAILED = re.compile(r"^FAILED \S+ - (.+)$")
_TRACEBACK = "Traceback (most recent call last)"
# Every error line holds one of these; text without any is not scanned line by line.
_ERROR_HINTS = (
    "rror", "xception", "arning", "nterrupt", "Exit", "Fault", "Failure", "Timeout", "fatal", "panic", "** (",
    "No such file", "Permission denied", "not found",
)  # fmt: skip
_EXIT = re.compile(
    r"^(?:Exit code:?|Process exited with code|Command exited with code|exit status|exited with code)"
    r"\s*(-?\d+)|\"exit_?[cC]ode(?:V2)?\"\s*:\s*(-?\d+)",
    re.MULTILINE | re.IGNORECASE,
)
_MASKS = (
    (re.compile(r"'[^'\n]*'"), "'…'"),
    (re.compile(r'"[^"\n]*"'), '"…"'),
    (re.compile(r"`[^`\n]*`"), "`…`"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x…"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"), "…"),  # commit and object ids
    (re.compile(r"(?:[\w.~-]*/)+[\w.-]+"), "…"),
    (re.compile(r"\b\d+(?:\.\d+)*\b"), "N"),
    (re.compile(r"\s+"), " "),
)
_CODE_SPAN = re.compile(r"`([^`\n]{2,120})`")
_CODE_WORD = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:[.:][A-Za-z_]\w*)*)(?:\(\))?(?![\w])")


@dataclass(frozen=True, slots=True)
class ErrorLine:
    """An error as an entity: ``name`` is its shape (class and masked message), ``line`` the text."""

    name: str
    line: str


def file_paths(text: str) -> list[str]:
    """Paths of files written in ``text``, as written (URLs are not read as paths)."""
    text = _URL.sub(" ", text[:MAX_TEXT_CHARS]) if "://" in text else text[:MAX_TEXT_CHARS]
    found: dict[str, None] = {}
    for match in _DOT_EXT.finditer(text):
        path = _path_ending_at(text, match) if match.group(1) in _EXTENSIONS else None
        if path and path.lower() not in _NOT_FILES and any(c.isalpha() for c in path):
            found.setdefault(path, None)
    if "file" in text or "CODEOWNERS" in text or "." in text[:1] or any(c + "." in text for c in " /`'\"(@"):
        for match in _NAMED_FILE.finditer(text):
            found.setdefault(match.group(1), None)
    return list(found)


def _path_ending_at(text: str, match: re.Match[str]) -> str | None:
    """The path whose extension ``match`` found, read leftwards from it; None if the name goes on."""
    end = match.end()
    after = text[end : end + 2]
    if after[:1] and (after[0].isalnum() or after[0] in "_/@-"):
        return None
    if after[:1] == "." and len(after) > 1 and (after[1].isalnum() or after[1] == "_"):
        return None  # config.json.bak
    start = match.start()
    while start > 0 and text[start - 1] in _PATH_CHARS:
        start -= 1
    if start > 0 and text[start - 1] in _NOT_BEFORE:
        return None
    path = _PATH.fullmatch(text, start, end)
    return path.group(1) if path else None


def urls(text: str) -> list[tuple[str, str]]:
    """(URL without query and fragment, host) for each web address in ``text``."""
    found: dict[str, str] = {}
    if "://" not in text:
        return []
    for match in _URL.finditer(text[:MAX_TEXT_CHARS]):
        raw = match.group(0).rstrip(_URL_TAIL)
        try:
            parts = urlsplit(raw)
            host = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            continue
        if not host or ("." not in host and host != "localhost") or "…" in host:
            continue
        netloc = f"{host}:{port}" if port else host
        path = parts.path.rstrip("/")
        found.setdefault(f"{parts.scheme.lower()}://{netloc}{path}", netloc)
    return list(found.items())


def error_lines(text: str, *, failed: bool) -> list[ErrorLine]:
    """Error lines of ``text``; ``failed`` (the command failed) also admits ``error:``/``fatal:`` lines.

    Output of a command that succeeded can still hold a Python traceback; other error-like lines in
    it (a warning, a log line) are not failures and are left alone.
    """
    text = text[:MAX_TEXT_CHARS]
    if not any(map(text.__contains__, _ERROR_HINTS)):
        return []
    traceback = _TRACEBACK in text
    found: dict[str, ErrorLine] = {}
    for line in text.splitlines():
        error = _error(line.rstrip(), failed=failed, traceback=traceback)
        if error is not None:
            found.setdefault(error.name, error)
        if len(found) >= 5:
            break
    return list(found.values())


def _error(line: str, *, failed: bool, traceback: bool) -> ErrorLine | None:
    if len(line) > 2000 or not line.strip():
        return None
    failing = _FAILED.match(line)
    if failing:
        line = failing.group(1)
    match = _EXCEPTION.match(line) or _ELIXIR.match(line)
    if match and (match.group(2) is not None or traceback):
        kind, message = match.group(1), match.group(2) or ""
        if kind.endswith("Warning") and not traceback:
            return None
        return ErrorLine(error_name(kind, message), line.strip())
    tsc = _TSC.search(line)
    if tsc:
        return ErrorLine(error_name(f"error {tsc.group(1)}", tsc.group(2)), line.strip())
    coded = _CODED.match(line) if failed else None
    if coded and not (coded.group(1).startswith("npm") and _NPM_CONTEXT.match(coded.group(2))):
        return ErrorLine(error_name(coded.group(1), coded.group(2)), line.strip())
    missing = _NOT_FOUND.match(line) if failed else None
    if missing:
        return ErrorLine(error_name(line.split(":", 1)[0], missing.group(1)), line.strip())
    return None


def error_name(kind: str, message: str) -> str:
    """``ModuleNotFoundError: No module named 'x'`` → ``ModuleNotFoundError: No module named '…'``."""
    shape = message
    for pattern, replacement in _MASKS:
        shape = pattern.sub(replacement, shape)
    shape = shape.strip()
    if len(shape) > MAX_ERROR_CHARS:
        shape = shape[: MAX_ERROR_CHARS - 1].rstrip() + "…"
    return f"{kind}: {shape}" if shape else kind


def exit_code(text: str) -> int | None:
    """The exit code a command's output reports (each host writes it its own way), if any."""
    match = _EXIT.search(text[:4000])
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def code_words(text: str) -> list[str]:
    """Words written as code: inside backticks, or shaped like identifiers (``snake_case``,
    ``CamelCase``, ``Store.add``, ``build()``). These are the words that may name a symbol, package or
    command already known; plain prose words are not."""
    found: dict[str, None] = {}
    for span in _CODE_SPAN.findall(text[:MAX_TEXT_CHARS]):
        found.setdefault(span.strip(), None)
    for match in _CODE_WORD.finditer(text[:MAX_TEXT_CHARS]):
        word = match.group(1)
        if (
            "_" in word.strip("_")
            or "." in word
            or ":" in word
            or match.group(0).endswith("()")
            or (re.search(r"[a-z][A-Z]", word))
        ):
            found.setdefault(word, None)
    return list(found)


def text_mentions(text: str, paths: ProjectPaths) -> list[Mention]:
    """The files, web addresses and errors a person or agent wrote about."""
    mentions: list[Mention] = []
    for raw in file_paths(text):
        path = paths.file(raw)
        if path:
            mentions.append(Mention(EntityType.FILE, path, Relation.MENTIONS))
    for address, host in urls(text):
        mentions.append(Mention(EntityType.URL, address, Relation.MENTIONS))
        mentions.append(Mention(EntityType.HOST, host, Relation.MENTIONS))
    for error in error_lines(text, failed=False):
        mentions.append(Mention(EntityType.ERROR, error.name, Relation.MENTIONS, error.line))
    return mentions
