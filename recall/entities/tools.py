"""What a tool call touched and what its result reported, for every host's tools.

Claude Code (``Edit``, ``MultiEdit``, ``Write``, ``NotebookEdit``, ``Read``, ``Bash``), Codex
(``apply_patch``, ``exec_command``, ``shell``, ``local_shell``), Cursor (``edit_file``,
``search_replace``, ``write``, ``delete_file``, ``read_file``, ``run_terminal_cmd``, and the newer
``Write``/``StrReplace``/``Read``/``Shell``) and the Anthropic text editor tool name the same few
actions differently. A call arrives with its full arguments on import; a call read back from the
database has only its stored one-line gist (``Edit: src/x.py``), which still names its file or
command, so an older database can be connected too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from recall.entities.code import added_lines, definitions, header_symbols, imports, parse_patch
from recall.entities.mention import EntityType, Mention, Relation, words
from recall.entities.paths import ProjectPaths
from recall.entities.shell import MAX_COMMAND_CHARS, ShellCommand, split_commands
from recall.entities.text import error_lines, exit_code, urls

_EDIT_TOOLS = words(
    """edit multiedit multi_edit write notebookedit edit_notebook editnotebook edit_file search_replace
    str_replace strreplace create create_file write_file write_to_file replace_in_file apply_diff
    delete_file delete deletefile"""
)
_DELETE_TOOLS = words("delete_file delete deletefile")
_READ_TOOLS = words("read read_file readfile view view_file open_file notebookread")
_PATCH_TOOLS = words("apply_patch applypatch")
_SHELL_TOOLS = words(
    """bash shell exec_command shell_command local_shell run_terminal_cmd run_terminal_command terminal
    container.exec execute_command run_command powershell"""
)
_TEXT_EDITOR = "str_replace_based_edit_tool"
# Commands whose exit code 1 answers "no" (no line matched, the files differ), not "failed".
_NO_MATCH_IS_ONE = words("grep egrep fgrep rg ag diff cmp test [ git diff")
_PATH_KEYS = (
    "file_path", "path", "target_file", "notebook_path", "target_notebook", "filePath", "file",
    "filename", "relative_workspace_path", "absolute_path", "uri",
)  # fmt: skip
_COMMAND_KEYS = ("command", "cmd", "commandLine")
_WORKDIR_KEYS = ("workdir", "cwd", "working_directory")
_WHOLE_TEXT_KEYS = ("content", "contents", "file_text", "code_edit", "new_source", "text")
_GIST_CUT = " …"  # how a stored gist marks a line it shortened (adapters._text.first_line)
_SHELL_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic", "-Command", "/c"})


def call_mentions(
    name: str, arguments: Any, paths: ProjectPaths, is_local: Callable[[str], bool]
) -> tuple[list[Mention], list[ShellCommand]]:
    """What one tool call touched, and the shell commands it ran (to read its result by)."""
    tool = name.strip().lower()
    args = _parsed(arguments)
    if tool in _SHELL_TOOLS:
        return _shell_call(args, paths, is_local)
    if tool in _PATCH_TOOLS:
        return _patch(_patch_text(args), paths, is_local), []
    if tool in _EDIT_TOOLS or tool == _TEXT_EDITOR:
        return _file_call(tool, args, paths, is_local), []
    if tool in _READ_TOOLS:
        path = _path_of(args, paths)
        return ([Mention(EntityType.FILE, path, Relation.READ)] if path else []), []
    if isinstance(args, dict) and isinstance(args.get("url"), str):
        return _web_mentions(args["url"], Relation.READ), []
    return [], []


def result_mentions(text: str, commands: Sequence[ShellCommand]) -> list[Mention]:
    """What a shell command's output says about failure: its exit code and the errors it printed.

    A failure is pinned on the command line's last command: ``cd x && pytest`` failed in pytest.
    """
    if not commands:
        return []
    code = exit_code(text)
    last = commands[-1]
    failed = code not in (None, 0) and not (code == 1 and last.stem in _NO_MATCH_IS_ONE)
    found = error_lines(text, failed=failed) if failed or "Traceback" in text else []
    if not failed and not found:
        return []
    via = (EntityType.COMMAND, last.stem)
    mentions = []
    if failed:
        mentions.append(
            Mention(EntityType.COMMAND, last.stem, Relation.FAILED_ON, f"exit {code}: {last.text}")
        )
    for error in found:
        detail = f"{last.text}\n{error.line}"[:MAX_COMMAND_CHARS]
        mentions.append(Mention(EntityType.ERROR, error.name, Relation.FAILED_ON, detail, via))
    if failed and not found:
        mentions.append(
            Mention(EntityType.ERROR, f"{last.stem}: exit {code}", Relation.FAILED_ON, last.text, via)
        )
    return mentions


def _parsed(arguments: Any) -> Any:
    """Arguments as an object when they are JSON text (Codex and Cursor store them that way)."""
    if isinstance(arguments, str) and arguments.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _shell_call(
    args: Any, paths: ProjectPaths, is_local: Callable[[str], bool]
) -> tuple[list[Mention], list[ShellCommand]]:
    command = _command_text(args)
    if not command:
        return [], []
    if "*** Begin Patch" in command:  # Codex before apply_patch was its own tool
        return _patch(command[command.index("*** Begin Patch") :], paths, is_local), []
    workdir = next(
        (args[k] for k in _WORKDIR_KEYS if isinstance(args, dict) and isinstance(args.get(k), str)), None
    )
    here = paths.at(workdir) if workdir else paths
    commands = split_commands(command)
    mentions: list[Mention] = []
    for run in commands:
        via = (EntityType.COMMAND, run.stem)
        mentions.append(Mention(EntityType.COMMAND, run.stem, Relation.RAN, run.text))
        mentions += [Mention(EntityType.PACKAGE, p, Relation.INSTALLED, run.text, via) for p in run.packages]
        for raw in run.reads:
            path = here.file(raw)
            if path:
                mentions.append(Mention(EntityType.FILE, path, Relation.READ, run.text, via))
    return mentions, commands


def _command_text(args: Any) -> str:
    """The command line of a shell call: a string, an argv list, or one of them under a key."""
    if isinstance(args, dict):
        args = next((args[k] for k in _COMMAND_KEYS if args.get(k)), None)
    if isinstance(args, list):
        parts = [str(a) for a in args]
        return parts[-1] if len(parts) >= 3 and parts[-2] in _SHELL_FLAGS else " ".join(parts)
    if isinstance(args, str):
        return args.removesuffix(_GIST_CUT)
    return ""


def _patch_text(args: Any) -> str:
    if isinstance(args, dict):
        args = next((args[k] for k in ("input", "patch", "diff") if isinstance(args.get(k), str)), "")
    return args if isinstance(args, str) else ""


def _patch(text: str, paths: ProjectPaths, is_local: Callable[[str], bool]) -> list[Mention]:
    """Files, definitions and imports of a patch; a stored gist lists only the files (``a.py, b.py``)."""
    if "*** Begin Patch" not in text and "\n+++ " not in text:
        names = [n.strip() for n in text.removesuffix(_GIST_CUT).split(",")]
        return [Mention(EntityType.FILE, p, Relation.EDITED) for n in names if n and (p := paths.file(n))]
    mentions: list[Mention] = []
    for change in parse_patch(text):
        path = paths.file(change.path)
        if path is None:
            continue
        mentions.append(
            Mention(EntityType.FILE, path, Relation.EDITED, "deleted" if change.deleted else None)
        )
        symbols = header_symbols(path, change.headers) + definitions(path, change.added)
        mentions += _code_mentions(path, dict.fromkeys(symbols), imports(path, change.added, is_local))
    return mentions


def _file_call(tool: str, args: Any, paths: ProjectPaths, is_local: Callable[[str], bool]) -> list[Mention]:
    path = _path_of(args, paths)
    if path is None:
        return []
    if tool == _TEXT_EDITOR and isinstance(args, dict) and args.get("command") == "view":
        return [Mention(EntityType.FILE, path, Relation.READ)]
    detail = "deleted" if tool in _DELETE_TOOLS else None
    added = _added(args) if isinstance(args, dict) else []
    symbols = dict.fromkeys(definitions(path, added))
    return [
        Mention(EntityType.FILE, path, Relation.EDITED, detail),
        *_code_mentions(path, symbols, imports(path, added, is_local)),
    ]


def _added(args: dict[str, Any]) -> list[str]:
    """The lines an edit call adds: a replacement's new lines, or a whole new text."""
    edits = args.get("edits")
    pairs = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else [args]
    lines: list[str] = []
    for edit in pairs:
        new = edit.get("new_string", edit.get("new_str"))
        if isinstance(new, str):
            old = edit.get("old_string", edit.get("old_str"))
            lines += added_lines(old if isinstance(old, str) else None, new)
    for key in _WHOLE_TEXT_KEYS:
        if isinstance(args.get(key), str):
            lines += added_lines(None, args[key])
            break
    return lines


def _code_mentions(path: str, symbols: dict[str, None], packages: list[str]) -> list[Mention]:
    via = (EntityType.FILE, path)
    return [Mention(EntityType.SYMBOL, s, Relation.EDITED, None, via) for s in symbols] + [
        Mention(EntityType.PACKAGE, p, Relation.IMPORTED, None, via) for p in packages
    ]


def _path_of(args: Any, paths: ProjectPaths) -> str | None:
    if isinstance(args, str):
        return paths.file(args.removesuffix(_GIST_CUT))
    if isinstance(args, dict):
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return paths.file(value)
    return None


def _web_mentions(url: str, relation: Relation) -> list[Mention]:
    mentions = []
    for address, host in urls(url):
        mentions.append(Mention(EntityType.URL, address, relation))
        mentions.append(Mention(EntityType.HOST, host, relation))
    return mentions
