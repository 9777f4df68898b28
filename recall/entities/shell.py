"""Shell command lines: the commands in them, each one's stable part, and what it installed or read.

A command line is split into commands at ``&&``, ``||``, ``;``, ``|`` and new lines (heredoc bodies
are not commands). Each command is named by its stable part, the part that stays the same from one
run to the next: ``pytest tests/x.py -k y`` is ``pytest``, ``git commit -m "..."`` is ``git commit``,
``npm run build`` is ``npm run build``, ``uv run pytest -q`` and ``python -m pytest`` are ``pytest``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from recall.entities.mention import words

MAX_COMMAND_CHARS = 1000

# Tools whose first word names what they do: `git status` and `git push` are different commands.
_SUBCOMMAND_TOOLS = words(
    """git npm pnpm yarn bun cargo go uv pip pip3 poetry pipenv pdm hatch docker docker-compose podman
    kubectl helm gh glab mix deno brew apt apt-get dnf yum pacman systemctl terraform dotnet rustup conda
    mamba pipx bundle rails rake gradle gradlew mvn make just composer swift flutter dart alembic
    pre-commit tox nox bd jj hg svn az aws gcloud firebase vercel fly heroku supabase wrangler"""
)
# Wrappers run the command that follows them: the stable part is that command's.
_WRAPPERS = frozenset({"sudo", "time", "nohup", "exec", "command", "builtin", "nice", "doas", "caffeinate"})
_RUNNERS = {
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
    ("pnpm", "exec"), ("pnpm", "dlx"), ("bundle", "exec"), ("conda", "run"), ("mise", "exec"),
}  # fmt: skip
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})  # `npm run build`: the script is stable
_NOT_COMMANDS = words(
    "cd pushd popd echo printf true false export set unset source . sleep exit clear : wait"
)
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_INTERPRETERS = frozenset({"node", "bash", "sh", "zsh", "ruby", "deno", "bun", "perl", "php"})
# Flags that take a value, so the value is not mistaken for the subcommand.
_VALUE_FLAGS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "-f", "--file", "-p", "--project", "-n"})
_INSTALLS: dict[tuple[str, ...], str] = {
    ("pip", "install"): "pypi", ("pip3", "install"): "pypi", ("uv", "pip", "install"): "pypi",
    ("uv", "add"): "pypi", ("poetry", "add"): "pypi", ("pipx", "install"): "pypi",
    ("pdm", "add"): "pypi", ("conda", "install"): "conda",
    ("npm", "install"): "npm", ("npm", "i"): "npm", ("npm", "add"): "npm",
    ("pnpm", "add"): "npm", ("pnpm", "install"): "npm", ("pnpm", "i"): "npm",
    ("yarn", "add"): "npm", ("bun", "add"): "npm", ("bun", "install"): "npm",
    ("cargo", "add"): "crates", ("cargo", "install"): "crates",
    ("go", "get"): "go", ("go", "install"): "go",
}  # fmt: skip
_INSTALL_VALUE_FLAGS = words(
    """-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -t --target
    --python -F --features --version --vers --registry --git --path --branch --tag --rev --prefix
    --filter --group"""
)
_ALIASES = {("npm", "i"): "install", ("npm", "add"): "install", ("pnpm", "i"): "install"}
_VERSION = re.compile(r"(?:\[[^\]]*\])?(?:[<>=!~^]=?.*|@[^/]*)?$")
_NPM_NAME = re.compile(r"^(@[\w.-]+/)?[\w.-]+")
_READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "wc"})
_SEPARATORS = frozenset(";&|()\n")
_PLAIN_TOKEN = re.compile(r"[;&|()\n]+|[<>]+&?|[^\s;&|()<>]+")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """One command of a command line: its stable part, its own text, and what it installed or read."""

    stem: str
    text: str
    packages: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()


def split_commands(line: str) -> list[ShellCommand]:
    """The commands a shell command line runs, in order; cd, echo and their kind are left out."""
    text = line.strip()[:MAX_COMMAND_CHARS]
    found: list[ShellCommand] = []
    for segment in _segments(_without_heredocs(line[: MAX_COMMAND_CHARS * 4])):
        command = _command(segment, text)
        if command is not None:
            found.append(command)
    return found


def _without_heredocs(text: str) -> str:
    """Drop heredoc bodies: ``python - <<'EOF' ... EOF`` runs python, not the lines it feeds it."""
    lines = text.splitlines()
    kept: list[str] = []
    end: str | None = None
    for line in lines:
        if end is not None:
            if line.strip() == end:
                end = None
            continue
        kept.append(line)
        marker = _HEREDOC.search(line)
        if marker:
            end = marker.group(1)
    return "\n".join(kept)


def _segments(text: str) -> list[list[str]]:
    """Token lists between ``&&``, ``||``, ``;``, ``|``, ``&``, ``(`` and new lines outside quotes."""
    text = text.replace("\\;", "\u241f")  # `find -exec ... \;` ends an argument list, not a command
    tokens = _tokens(text)
    segments: list[list[str]] = []
    current: list[str] = []
    skip_target = False
    for token in tokens:
        if token and set(token) <= _SEPARATORS:
            if current:
                segments.append(current)
            current = []
        elif token and set(token) <= set("<>&"):
            skip_target = True  # the word after a redirection is its target, not an argument
            if current and current[-1].isdigit():
                current.pop()  # the descriptor of `2>&1`
        elif skip_target:
            skip_target = False
        else:
            current.append(token)
    if current:
        segments.append(current)
    return segments


def _tokens(text: str) -> list[str]:
    """Shell words and operators. Most command lines have no quotes, escapes or comments, and a
    regex splits them; the rest go through ``shlex``, which is exact but slow."""
    if not any(char in text for char in "'\"\\#`$"):
        return _PLAIN_TOKEN.findall(text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: fall back to the first line's plain words
        return text.split("\n", 1)[0].split()


def _command(tokens: list[str], text: str) -> ShellCommand | None:
    """One command's stable part; ``text`` is the whole command line it came from, as written."""
    words = _unwrap(tokens)
    if not words:
        return None
    program, rest = _program(words[0]), words[1:]
    if program in _NOT_COMMANDS or not re.match(r"^[\w.@+/][\w.@+/-]*$", program):
        return None
    python = bool(_PYTHON.match(program))
    if python and len(rest) >= 2 and rest[0] == "-m":
        if "." not in rest[1]:
            return _command(rest[1:], text)  # `python -m pytest` runs pytest
        program, rest = f"{program} -m {rest[1]}", rest[2:]
    at = _subcommand_at(rest) if program in _SUBCOMMAND_TOOLS else None
    sub = rest[at] if at is not None else ""
    args = rest[at + 1 :] if at is not None else rest
    if (program, sub) in _RUNNERS:
        return _command(args, text) if args else None
    stem = f"{program} {_ALIASES.get((program, sub), sub)}" if sub else program
    if program in _SCRIPT_RUNNERS and sub == "run" and args and not args[0].startswith("-"):
        stem += " " + args[0]
    elif (python or program in _INTERPRETERS) and args and not args[0].startswith("-") and "." in args[0]:
        stem += " " + args[0]  # `python scripts/build.py`: the script is the stable part
    return ShellCommand(stem, text, _installed(program, sub, args), _read_files(program, args))


def _unwrap(tokens: list[str]) -> list[str]:
    """Drop environment assignments and wrappers (``FOO=1 sudo timeout 5 pytest`` → ``pytest``)."""
    words = list(tokens)
    while words:
        first = words[0]
        if re.match(r"^[A-Za-z_]\w*=", first) or first in _WRAPPERS or first == "env":
            words = words[1:]
        elif first in ("timeout", "xargs") and len(words) > 1:
            words = words[1:]
            while words and (words[0].startswith("-") or re.match(r"^\d+[smhd]?$", words[0])):
                words = words[1:]
        elif first in ("npx", "bunx", "pnpx") and len(words) > 1:
            words = [w for w in words[1:] if w not in ("-y", "--yes")]
        else:
            break
    return words


def _program(word: str) -> str:
    """``/usr/bin/python3`` and ``.venv/bin/pytest`` are ``python3`` and ``pytest``; scripts keep their path."""
    if "/bin/" in word or word.startswith("/usr/") or "/Scripts/" in word:
        return word.rsplit("/", 1)[-1]
    if word.startswith("./gradlew"):
        return "gradlew"
    return word.removeprefix("./")


def _subcommand_at(rest: list[str]) -> int | None:
    """Where the subcommand is: the first word that is not a flag or a flag's value."""
    skip = False
    for index, word in enumerate(rest):
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUE_FLAGS
        else:
            return index if re.match(r"^[\w:.+-]+$", word) and len(word) <= 40 else None
    return None


def _installed(program: str, sub: str, args: list[str]) -> tuple[str, ...]:
    key: tuple[str, ...] = (program, sub)
    if key == ("uv", "pip") and args[:1] == ["install"]:
        key, args = ("uv", "pip", "install"), args[1:]
    if key not in _INSTALLS:
        return ()
    ecosystem = _INSTALLS[key]
    names: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _INSTALL_VALUE_FLAGS
            continue
        name = _package_name(word, ecosystem)
        if name:
            names.append(name)
    return tuple(dict.fromkeys(names))


def _package_name(word: str, ecosystem: str) -> str | None:
    """A package's name without version, extras or tag; None for paths, URLs and files."""
    if ecosystem == "go":
        name = word.split("@", 1)[0]
        return name if "." in name.split("/", 1)[0] and "/" in name else None
    if "://" in word or word.startswith((".", "/", "~")) or word.endswith((".txt", ".whl", ".tgz", ".toml")):
        return None
    if ecosystem == "npm":
        match = _NPM_NAME.match(word)
        return match.group(0) if match else None
    name = _VERSION.sub("", word.split(";", 1)[0]).strip()
    return name if re.match(r"^[A-Za-z0-9][\w.-]*$", name) else None


def _read_files(program: str, args: list[str]) -> tuple[str, ...]:
    """Files a command printed: ``cat x``, ``sed -n '1,80p' x``, ``nl -ba x`` (how Codex reads files)."""
    if program == "sed":
        if not any(a == "-n" or a.startswith("-n") for a in args) or any(a.startswith("-i") for a in args):
            return ()
    elif program not in _READERS:
        return ()
    files = [a for a in args if not a.startswith("-") and re.search(r"[\w-]\.\w{1,8}$", a)]
    return tuple(files[:5])
