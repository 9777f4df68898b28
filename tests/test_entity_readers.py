"""The entity readers on their own: paths, shell commands, code in edits and patches, text and errors.

Inputs are lines from the real fixture transcripts where one exists (quoted in the test), else the
documented shape of the host (shared/ref/transcript-formats.md).
"""

from __future__ import annotations

import pytest

from recall.entities.code import definitions, header_symbols, imports, parse_patch
from recall.entities.mention import EntityType, Relation
from recall.entities.paths import ProjectPaths
from recall.entities.shell import split_commands
from recall.entities.text import code_words, error_lines, exit_code, file_paths, urls
from recall.entities.tools import call_mentions, result_mentions

WORKTREE = "/home/USER/projects/spotter-worktrees/spotter-dov"  # real: spotter 4d5611e5 session cwd
MAIN = "/home/marco/projects/spotter"  # real: spotter short.jsonl cwd


def never_local(name: str) -> bool:
    return False


# -- paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "raw", "name"),
    [
        (
            WORKTREE,
            f"{WORKTREE}/lib/spotter_web/live/session_live.ex",
            "lib/spotter_web/live/session_live.ex",
        ),
        (MAIN, f"{MAIN}/assets/js/app.js", "assets/js/app.js"),
        (MAIN, "assets/js/app.js", "assets/js/app.js"),  # Codex patches and shell: relative to the cwd
        (MAIN, "./assets/js/app.js", "assets/js/app.js"),
        (MAIN, f"file://{MAIN}/mix.exs", "mix.exs"),  # Cursor URIs
        (MAIN, "lib/spotter.ex:42:7", "lib/spotter.ex"),  # a line reference
        (MAIN, "/tmp/foo.txt", "/tmp/foo.txt"),  # outside the checkout stays absolute
        (MAIN, "/home/marco/.claude/settings.json", "~/.claude/settings.json"),
        (r"C:\Users\a\repo", r"c:\users\a\repo\src\x.py", "src/x.py"),  # Windows, any case
        (None, "./src/x.py", "src/x.py"),
    ],
)
def test_paths_are_named_relative_to_the_checkout_root(cwd: str | None, raw: str, name: str) -> None:
    assert ProjectPaths(cwd).file(raw) == name


@pytest.mark.parametrize(
    "path",
    [
        "/home/a/repo/.claude/worktrees/feat/src/x.py",  # Claude Code worktree
        "/home/a/repo/.worktrees/feat/src/x.py",
        "/home/a/repo-worktrees/feat/src/x.py",
        "/home/a/.codex/worktrees/1a2b/repo/src/x.py",  # Codex worktree
        "/home/a/repo/src/x.py",
    ],
)
def test_one_file_has_one_name_in_every_worktree_and_from_the_main_checkout(path: str) -> None:
    # The session ran in the main checkout; the file may lie in any of its worktrees.
    assert ProjectPaths("/home/a/repo").file(path) == "src/x.py"
    # A session in a worktree names the main checkout's copy the same way.
    assert ProjectPaths("/home/a/repo/.claude/worktrees/feat", ["/home/a/repo"]).file(path) == "src/x.py"


def test_a_session_in_a_subfolder_uses_the_root_its_project_knows() -> None:
    paths = ProjectPaths("/home/a/repo/frontend", known_roots=["/home/a/repo"])
    assert paths.file("/home/a/repo/frontend/src/a.ts") == "frontend/src/a.ts"
    assert paths.file("src/a.ts") == "frontend/src/a.ts"


def test_things_that_are_not_file_paths_are_refused() -> None:
    paths = ProjectPaths("/home/a/repo")
    for raw in ("", "   ", "/home/a/repo", "src/*.py", "-rf", "a b.py"):
        assert paths.file(raw) is None, raw


# -- shell commands ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "stems"),
    [
        ("pytest tests/x.py -k y", ["pytest"]),
        ("bd show spotter-dov", ["bd show"]),  # real: spotter
        ("git push 2>&1", ["git push"]),  # real: spotter
        ("cd /repo && mix format && mix test test/a_test.exs", ["mix format", "mix test"]),
        ("npm run check 2>&1", ["npm run check"]),  # real: pi-mono
        ("uv run pytest -q", ["pytest"]),
        ("python -m pytest tests", ["pytest"]),
        ("python3 scripts/build.py --fast", ["python3 scripts/build.py"]),
        ("FOO=1 sudo timeout 5 pytest", ["pytest"]),
        ("git -C /x status", ["git status"]),
        ("npx -y prettier --write .", ["prettier"]),
        ("docker compose up -d", ["docker compose"]),
        ("echo hi; cd x; export A=1", []),
        ('find . -name "*.md" -exec cat {} \\; 2>&1 | head', ["find", "head"]),
    ],
)
def test_commands_are_named_by_their_stable_part(line: str, stems: list[str]) -> None:
    assert [c.stem for c in split_commands(line)] == stems


def test_a_commit_message_in_a_heredoc_is_not_a_command() -> None:
    line = "git add a.ex && git commit -m \"$(cat <<'EOF'\nAdd thing\n\n- Runs foo\nEOF\n)\""
    commands = split_commands(line)
    assert [c.stem for c in commands] == ["git add", "git commit"]
    assert all(c.text == line for c in commands)  # the full text is kept


@pytest.mark.parametrize(
    ("line", "packages"),
    [
        ('pip install requests==2.31 "uvicorn[standard]>=0.2" -r req.txt', ["requests", "uvicorn"]),
        ("uv pip install -e . numpy", ["numpy"]),
        ("uv add httpx", ["httpx"]),
        (
            "npm install -g @mariozechner/pi-coding-agent",
            ["@mariozechner/pi-coding-agent"],
        ),  # real: pi-mono text
        ("npm i -D @types/node@20 express", ["@types/node", "express"]),
        ("pnpm add -w zod", ["zod"]),
        ("yarn add react@18", ["react"]),
        ("cargo add serde --features derive", ["serde"]),
        ("go get github.com/spf13/cobra@v1.8.0", ["github.com/spf13/cobra"]),
        ("pip install pytesseract pdf2image", ["pytesseract", "pdf2image"]),  # real: pi-mono text
    ],
)
def test_install_commands_name_their_packages(line: str, packages: list[str]) -> None:
    assert [p for c in split_commands(line) for p in c.packages] == packages


def test_shell_reads_name_their_files() -> None:
    assert split_commands("sed -n '1,80p' src/app.py")[0].reads == ("src/app.py",)  # how Codex reads
    assert split_commands("nl -ba src/app.py | sed -n '10,20p'")[0].reads == ("src/app.py",)
    assert split_commands("sed -i 's/a/b/' src/app.py")[0].reads == ()


# -- code in edits and patches ----------------------------------------------------------------------


def test_definitions_are_read_by_the_files_language() -> None:
    # Real: the Write of lib/spotter_web/live/transcript_computers.ex in spotter 4d5611e5.
    assert definitions(
        "lib/x.ex", ["defmodule SpotterWeb.Live.TranscriptComputers do", "  defp helper?(x)"]
    ) == [
        "SpotterWeb.Live.TranscriptComputers",
        "helper?",
    ]
    assert definitions("a.py", ["def foo(x):", "  class Bar(Base):", "async def baz():", "x = 1"]) == [
        "foo",
        "Bar",
        "baz",
    ]
    assert definitions(
        "a.ts", ["export function foo(a) {", "export const bar = async (x) => 1", "interface Baz {"]
    ) == [
        "foo",
        "bar",
        "Baz",
    ]
    assert definitions(
        "a.go", ["func (s *Server) Handle(w http.ResponseWriter) {", "type Config struct {"]
    ) == [
        "Handle",
        "Config",
    ]
    assert definitions("a.rs", ["pub async fn run() {", "struct State {"]) == ["run", "State"]
    assert definitions("notes.md", ["def foo():"]) == []  # no language, no definitions


def test_imports_name_packages_but_not_the_standard_library_or_the_project() -> None:
    lines = [
        "import os, numpy as np",
        "from recall.store import X",
        "from sqlmodel import Field",
        "import yaml",
    ]
    assert imports("tests/test_x.py", lines, lambda name: name == "recall") == ["numpy", "sqlmodel", "yaml"]
    js = [
        'import hljs from "highlight.js";',
        'import { x } from "@scope/pkg/sub"',
        'const fs = require("fs")',
    ]
    assert imports("src/a.ts", [*js, 'import y from "./y"'], never_local) == ["highlight.js", "@scope/pkg"]
    assert imports("mix.exs", ['  {:credo, "~> 1.7", only: [:dev]},'], never_local) == ["credo"]
    manifest = ['"dependencies": {', '  "express": "^4.19.2",', '"version": "1.0.0"']
    assert imports("package.json", manifest, never_local) == ["express"]
    assert imports("package.json", ['"version": "1.0.0"'], never_local) == []


def test_patches_name_their_files_hunk_symbols_and_added_definitions() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@ def handler(request):\n-    return 1\n"
        "+    return helper()\n+def helper():\n+    import requests\n*** Add File: docs/x.md\n+hello\n"
        "*** Delete File: old.py\n*** End Patch"
    )
    changes = parse_patch(patch)
    assert [(c.path, c.deleted) for c in changes] == [
        ("src/app.py", False),
        ("docs/x.md", False),
        ("old.py", True),
    ]
    assert header_symbols("src/app.py", changes[0].headers) == ["handler"]
    assert definitions("src/app.py", changes[0].added) == ["helper"]
    diff = "--- a/src/b.py\n+++ b/src/b.py\n@@ -1,2 +1,3 @@ class Store:\n+    def close(self):\n"
    (change,) = parse_patch(diff)
    assert (
        change.path,
        header_symbols(change.path, change.headers),
        definitions(change.path, change.added),
    ) == (
        "src/b.py",
        ["Store"],
        ["close"],
    )


# -- text, URLs and errors --------------------------------------------------------------------------


def test_file_paths_in_prose_need_a_file_extension_and_are_not_libraries() -> None:
    text = (
        "See src/auth/session.py:42 and ./lib/x.ex, also /home/a/repo/README.md. We use Node.js, "
        "github.com, e.g. v1.2.3 and highlight.js. Check the Makefile, .gitignore and @src/y.ts, not "
        "~/.codex/skills/**/SKILL.md or {baseDir}/SKILL.md, and "
        "https://github.com/org/repo/blob/main/z.py"
    )
    assert file_paths(text) == [
        "src/auth/session.py",
        "./lib/x.ex",
        "/home/a/repo/README.md",
        "highlight.js",  # a bare .js name: the store keeps it only if the project has that file
        "src/y.ts",
        "Makefile",
        ".gitignore",
    ]


def test_urls_drop_query_and_fragment_and_name_their_host() -> None:
    text = "https://github.com/xtermjs/xterm.js/issues/1343?x=1#a and http://localhost:4000/dev."
    assert urls(text) == [
        ("https://github.com/xtermjs/xterm.js/issues/1343", "github.com"),
        ("http://localhost:4000/dev", "localhost:4000"),
    ]


def test_errors_are_named_by_class_and_message_shape() -> None:
    output = (
        'Traceback (most recent call last):\n  File "x.py", line 3\n'
        "ModuleNotFoundError: No module named 'requests'\n"
        "FAILED tests/test_a.py::test_b - KeyError: 'abc'\n"
        "src/a.ts(3,5): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n"
    )
    assert [e.name for e in error_lines(output, failed=True)] == [
        "ModuleNotFoundError: No module named '…'",
        "KeyError: '…'",
        "error TS2345: Argument of type '…' is not assignable to parameter of type '…'.",
    ]
    # Real: spotter 4d5611e5, the result of `git push` ("Exit code 128\nfatal: ...").
    real = "fatal: The current branch spotter-dov has no upstream branch."
    assert [e.name for e in error_lines(real, failed=True)] == [real]
    assert error_lines(real, failed=False) == []  # only a failed command's output names such lines
    assert [e.name for e in error_lines("error[E0308]: mismatched types", failed=True)] == [
        "error[E0308]: mismatched types"
    ]
    assert error_lines("DeprecationWarning: old api", failed=False) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Exit code 128\nfatal: no upstream", 128),  # Claude Code (real: spotter)
        ("Chunk ID: 1\nWall time: 2\nProcess exited with code 0\nOutput:\n", 0),  # Codex exec_command
        ('{"output":"x","exitCodeV2":1}', 1),  # Cursor toolFormerData result
        ("all good", None),
    ],
)
def test_exit_codes_are_read_the_way_each_host_writes_them(text: str, code: int | None) -> None:
    assert exit_code(text) == code


def test_code_words_are_backticked_or_shaped_like_identifiers() -> None:
    words = code_words("Call `build_summary()` from SessionLive, not the summary builder; see Store.add.")
    assert {"build_summary()", "build_summary", "SessionLive", "Store.add"} <= set(words)
    assert "summary" not in words and "builder" not in words


# -- tool calls and results -------------------------------------------------------------------------


def test_every_hosts_edit_tools_name_the_file_they_edited() -> None:
    paths = ProjectPaths("/home/a/repo")
    calls = [
        (
            "Edit",
            {"file_path": "/home/a/repo/src/x.py", "old_string": "a", "new_string": "def f():"},
        ),  # Claude
        (
            "MultiEdit",
            {"file_path": "/home/a/repo/src/x.py", "edits": [{"old_string": "", "new_string": "x"}]},
        ),
        ("Write", {"file_path": "/home/a/repo/src/x.py", "content": "x = 1"}),
        ("NotebookEdit", {"notebook_path": "/home/a/repo/src/x.py", "new_source": "x"}),
        ("edit_file", '{"target_file": "src/x.py", "code_edit": "def g():"}'),  # Cursor, JSON text
        ("search_replace", {"file_path": "src/x.py", "old_string": "a", "new_string": "b"}),
        ("StrReplace", {"path": "/home/a/repo/src/x.py", "old_string": "a", "new_string": "b"}),
        ("apply_patch", "*** Begin Patch\n*** Update File: src/x.py\n+x\n*** End Patch"),  # Codex custom tool
        ("apply_patch", '{"input": "*** Begin Patch\\n*** Add File: src/x.py\\n+x\\n*** End Patch"}'),
        (
            "shell",
            {"command": ["apply_patch", "*** Begin Patch\n*** Update File: src/x.py\n+x\n*** End Patch"]},
        ),
        ("Edit", "/home/a/repo/src/x.py"),  # a stored gist, read back from an older database
        ("apply_patch", "src/x.py"),
    ]
    for name, arguments in calls:
        mentions, _ = call_mentions(name, arguments, paths, never_local)
        edited = [(m.type, m.name) for m in mentions if m.relation is Relation.EDITED]
        assert (EntityType.FILE, "src/x.py") in edited, name


def test_reads_and_shell_calls_of_every_host() -> None:
    paths = ProjectPaths("/home/a/repo")
    for name, arguments in [
        ("Read", {"file_path": "/home/a/repo/src/x.py"}),
        ("read_file", {"target_file": "src/x.py"}),
        ("exec_command", '{"cmd": "sed -n \'1,40p\' x.py", "workdir": "/home/a/repo/src"}'),
        ("shell", {"command": ["bash", "-lc", "cat x.py"], "workdir": "src"}),
    ]:
        mentions, _ = call_mentions(name, arguments, paths, never_local)
        assert (EntityType.FILE, "src/x.py", Relation.READ) in [
            (m.type, m.name, m.relation) for m in mentions
        ]
    mentions, commands = call_mentions(
        "run_terminal_cmd", '{"command": "npm ls express"}', paths, never_local
    )
    assert [(m.type, m.name) for m in mentions] == [(EntityType.COMMAND, "npm ls")]
    assert [c.stem for c in commands] == ["npm ls"]


def test_a_failing_result_names_its_command_and_error() -> None:
    _, commands = call_mentions("Bash", {"command": "git push 2>&1"}, ProjectPaths(MAIN), never_local)  # real
    text = "Exit code 128\nfatal: The current branch spotter-dov has no upstream branch."  # real: spotter
    found = [(m.type, m.name, m.relation) for m in result_mentions(text, commands)]
    assert found == [
        (EntityType.COMMAND, "git push", Relation.FAILED_ON),
        (
            EntityType.ERROR,
            "fatal: The current branch spotter-dov has no upstream branch.",
            Relation.FAILED_ON,
        ),
    ]
    _, grep = call_mentions("Bash", {"command": "grep -rn TODO"}, ProjectPaths(MAIN), never_local)
    assert result_mentions("Exit code 1\n", grep) == []  # grep found nothing: not a failure
    _, pytest_run = call_mentions("Bash", {"command": "pytest -q"}, ProjectPaths(MAIN), never_local)
    assert [m.name for m in result_mentions("Exit code 2\n", pytest_run)] == ["pytest", "pytest: exit 2"]
