"""`recall connect` / `disconnect` against real-looking agent config files full of other people's settings."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.connect import codex, connect, cursor, make_setup
from recall.connect.launcher import (
    CONTEXT_HOOK,
    DUMP_HOOK,
    Setup,
    is_recall_hook,
    is_recall_server,
)

ALL_AGENTS = ["claude", "cursor", "vscode", "codex"]

CLAUDE_MCP = """\
{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}
    },
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp"}
  }
}
"""

CLAUDE_SETTINGS = """\
{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "~/.claude/hooks/check-bash.sh"}]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [{"type": "command", "command": "notify-send 'Claude session ended'"}]
      }
    ]
  },
  "cleanupPeriodDays": 60
}
"""

CURSOR_MCP = """\
{
    "mcpServers": {
        "postgres": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/app"]
        }
    }
}
"""

CURSOR_HOOKS = """\
{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./scripts/format.sh" }]
  }
}
"""

VSCODE_MCP = (
    '{\n\t"inputs": [\n\t\t{"type": "promptString", "id": "token", "description": "API token", "password": true}\n'
    '\t],\n\t"servers": {\n\t\t"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}\n\t}\n}\n'
)

CODEX_CONFIG = """\
# Codex settings (hand-edited)
model = "gpt-5.3-codex"
approval_policy = "on-request"

[profiles.fast]
model = "gpt-5.3-codex-mini"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]   # keep inline

[mcp_servers.github.env]
GITHUB_TOKEN = "from-keychain"

[tui]
notifications = true
"""

CLAUDE_MD = "# Project notes\n\nRun `make test` before pushing.\n"
AGENTS_MD = "# Agents\n\nUse British spelling in docs.\n"


@pytest.fixture
def home(user_home: Path) -> Path:
    """connect must never read or write the real user home."""
    return user_home


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shop"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def setup_for(project: Path, db: Path, *, global_scope: bool = False) -> Setup:
    return make_setup(db, project, global_scope=global_scope)


def write_files(files: dict[Path, str]) -> dict[Path, bytes]:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return {path: path.read_bytes() for path in files}


def project_files(project: Path, home: Path) -> dict[Path, str]:
    return {
        project / ".mcp.json": CLAUDE_MCP,
        project / ".claude" / "settings.json": CLAUDE_SETTINGS,
        project / ".cursor" / "mcp.json": CURSOR_MCP,
        project / ".cursor" / "hooks.json": CURSOR_HOOKS,
        project / ".vscode" / "mcp.json": VSCODE_MCP,
        project / "CLAUDE.md": CLAUDE_MD,
        project / "AGENTS.md": AGENTS_MD,
        home / ".codex" / "config.toml": CODEX_CONFIG,
    }


def without_recall(value: Any) -> Any:
    """The parsed document with recall's own entries (and the containers they alone fill) taken out."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if key == "recall" and is_recall_server(item):
                continue
            if key == "notify" and is_recall_hook(item, ("dump", "--from-hook")):
                continue
            cleaned = without_recall(item)
            if cleaned in ({}, []) and item not in ({}, []):
                continue
            kept[key] = cleaned
        return kept
    if isinstance(value, list):
        kept_items = []
        for item in value:
            cleaned = without_recall(item)
            if _is_recall_hook_entry(item) or (cleaned in ({}, []) and item not in ({}, [])):
                continue
            kept_items.append(cleaned)
        return kept_items
    return value


def _is_recall_hook_entry(item: Any) -> bool:
    return isinstance(item, dict) and any(
        is_recall_hook(item.get("command"), verb) for verb in (("dump", "--from-hook"), ("context", "--hook"))
    )


def parse(path: Path) -> Any:
    return parse_text(path, path.read_text(encoding="utf-8"))


def parse_text(path: Path, text: str) -> Any:
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def test_connect_adds_then_reruns_as_a_no_op_and_disconnect_restores_every_byte(
    project: Path, home: Path, db_path: Path
) -> None:
    originals = write_files(project_files(project, home))
    setup = setup_for(project, db_path)

    first = connect(setup, ALL_AGENTS, hooks=True, instructions=True)
    assert not first.refused
    after_first = {p: p.read_bytes() for p in originals}
    assert all(after_first[p] != originals[p] for p in originals)
    for path in originals:
        if path.suffix in (".json", ".toml"):
            assert without_recall(parse(path)) == parse_text(path, originals[path].decode())

    mcp = parse(project / ".mcp.json")["mcpServers"]
    assert list(mcp) == ["github", "sentry", "recall"]
    assert mcp["recall"]["args"] == ["--db", str(db_path), "mcp"]
    assert mcp["recall"]["env"] == {"RECALL_PROJECT": "shop"}
    settings = parse(project / ".claude" / "settings.json")
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == "notify-send 'Claude session ended'"
    commands = {
        event: [h["command"] for g in groups for h in g["hooks"]]
        for event, groups in settings["hooks"].items()
    }
    assert any(c.endswith("context --hook") for c in commands["SessionStart"])
    assert any(c.endswith("dump --from-hook --source claude") for c in commands["SessionEnd"])
    assert any(c.endswith("dump --from-hook --source claude") for c in commands["PreCompact"])
    assert parse(project / ".vscode" / "mcp.json")["servers"]["recall"]["type"] == "stdio"
    cursor_hooks = parse(project / ".cursor" / "hooks.json")["hooks"]
    assert cursor_hooks["stop"][0]["command"].endswith("dump --from-hook --source cursor")
    assert cursor_hooks["sessionStart"][0]["command"].endswith("context --hook")
    codex = parse(home / ".codex" / "config.toml")
    assert codex["mcp_servers"]["recall"]["args"] == ["--db", str(db_path), "mcp"]
    assert codex["notify"][-4:] == ["dump", "--from-hook", "--source", "codex"]
    assert (project / "CLAUDE.md").read_text().startswith(CLAUDE_MD)
    assert (project / ".cursor" / "rules" / "recall.mdc").is_file()

    second = connect(setup, ALL_AGENTS, hooks=True, instructions=True)
    assert {step.action for f in second.files for step in f.steps} == {"unchanged"}
    assert {p: p.read_bytes() for p in originals} == after_first

    removed = connect(setup, ALL_AGENTS, remove=True)
    assert not removed.refused
    assert {p: p.read_bytes() for p in originals} == originals
    assert not (project / ".cursor" / "rules").exists()


def test_files_connect_created_are_deleted_by_disconnect(project: Path, home: Path, db_path: Path) -> None:
    setup = setup_for(project, db_path)
    connect(setup, ALL_AGENTS, hooks=True, instructions=True)
    assert (project / ".mcp.json").is_file() and (home / ".codex" / "config.toml").is_file()

    connect(setup, ALL_AGENTS, remove=True)

    assert sorted(p.name for p in project.iterdir()) == [".git"]
    assert not (home / ".codex" / "config.toml").exists()


def test_global_scope_edits_user_files_and_pins_no_project(project: Path, home: Path, db_path: Path) -> None:
    claude_json = '{\n  "numStartups": 42,\n  "projects": {\n    "/work/app": {"allowedTools": []}\n  }\n}\n'
    originals = write_files({home / ".claude.json": claude_json})
    setup = setup_for(project, db_path, global_scope=True)

    connect(setup, ["claude", "cursor"], hooks=True)

    entry = parse(home / ".claude.json")["mcpServers"]["recall"]
    assert "env" not in entry
    assert (home / ".claude" / "settings.json").is_file()
    assert (home / ".cursor" / "hooks.json").is_file()
    assert not (project / ".mcp.json").exists()
    connect(setup, ["claude", "cursor"], remove=True)
    assert (home / ".claude.json").read_bytes() == originals[home / ".claude.json"]
    assert not (home / ".cursor").exists()


@pytest.mark.parametrize(
    ("relative", "broken"),
    [
        (".mcp.json", '{\n  "mcpServers": {\n    "github": {"command": "npx"},\n  }\n}\n'),
        (".cursor/mcp.json", "// my servers\n{}\n"),
        ("home:.codex/config.toml", 'model = "o3"\n[mcp_servers.github\ncommand = "npx"\n'),
    ],
    ids=["trailing-comma", "jsonc-comment", "broken-toml"],
)
def test_a_file_that_does_not_parse_is_left_untouched_and_reported(
    project: Path, home: Path, db_path: Path, relative: str, broken: str
) -> None:
    path = home / relative.removeprefix("home:") if relative.startswith("home:") else project / relative
    originals = write_files({path: broken})

    result = CliRunner().invoke(cli, ["--db", str(db_path), "connect", *_agents(ALL_AGENTS), "--hooks"])

    assert result.exit_code == 1
    assert "left untouched" in result.output and (
        "not valid JSON" in result.output or "not valid TOML" in result.output
    )
    assert path.read_bytes() == originals[path]
    assert (project / ".vscode" / "mcp.json").is_file()  # the other agents were still connected


def test_dry_run_prints_a_unified_diff_and_writes_nothing(project: Path, home: Path, db_path: Path) -> None:
    originals = write_files({project / ".mcp.json": CLAUDE_MCP})

    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "connect", "--agent", "claude", "--hooks", "--dry-run"]
    )

    assert result.exit_code == 0, result.output
    assert "dry run, nothing written" in result.output
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n" in result.output
    assert '+    "recall": {' in result.output
    assert "+++ b/.claude/settings.json" in result.output
    assert (project / ".mcp.json").read_bytes() == originals[project / ".mcp.json"]
    assert not (project / ".claude").exists()


def test_a_different_server_named_recall_is_never_replaced(project: Path, home: Path, db_path: Path) -> None:
    theirs = '{\n  "mcpServers": {\n    "recall": {"command": "node", "args": ["/opt/other-recall/server.js"]}\n  }\n}\n'
    originals = write_files({project / ".mcp.json": theirs})

    report = connect(setup_for(project, db_path), ["claude"])

    (refused,) = report.refused
    assert "different MCP server" in refused.steps[0].note
    assert (project / ".mcp.json").read_bytes() == originals[project / ".mcp.json"]
    connect(setup_for(project, db_path), ["claude"], remove=True)
    assert (project / ".mcp.json").read_bytes() == originals[project / ".mcp.json"]


def test_moving_the_database_updates_recall_entries_in_place(
    project: Path, home: Path, tmp_path: Path
) -> None:
    originals = write_files(project_files(project, home))
    connect(setup_for(project, tmp_path / "a.db"), ALL_AGENTS, hooks=True, instructions=True)

    report = connect(setup_for(project, tmp_path / "b.db"), ALL_AGENTS, hooks=True, instructions=True)

    actions = {(s.agent, s.part): s.action for f in report.files for s in f.steps}
    assert actions[("claude", "MCP server")] == "updated" and actions[("codex", "hooks")] == "updated"
    assert actions[("claude", "instructions")] == "unchanged"
    text = (project / ".claude" / "settings.json").read_text()
    assert str(tmp_path / "b.db") in text and str(tmp_path / "a.db") not in text
    assert str(tmp_path / "a.db") not in (home / ".codex" / "config.toml").read_text()
    connect(setup_for(project, tmp_path / "b.db"), ALL_AGENTS, remove=True)
    assert {p: p.read_bytes() for p in originals} == originals


def test_codex_notify_already_taken_is_left_alone_with_the_watch_fallback(
    project: Path, home: Path, db_path: Path
) -> None:
    config = 'notify = ["terminal-notifier", "-title", "Codex"]\nmodel = "o3"\n'
    originals = write_files({home / ".codex" / "config.toml": config})

    result = CliRunner().invoke(cli, ["--db", str(db_path), "connect", "--agent", "codex", "--hooks"])

    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "recall import --watch" in result.output
    data = parse(home / ".codex" / "config.toml")
    assert data["notify"] == ["terminal-notifier", "-title", "Codex"] and "recall" in data["mcp_servers"]
    CliRunner().invoke(cli, ["--db", str(db_path), "disconnect", "--agent", "codex"])
    assert (home / ".codex" / "config.toml").read_bytes() == originals[home / ".codex" / "config.toml"]


def test_crlf_tab_and_one_line_files_keep_their_style(project: Path, home: Path, db_path: Path) -> None:
    crlf = '{\r\n    "mcpServers": {\r\n        "a": {"command": "x"}\r\n    }\r\n}\r\n'
    one_line = '{"version": 1, "hooks": {"afterFileEdit": [{"command": "fmt"}]}}'
    originals = write_files({project / ".mcp.json": crlf, project / ".cursor" / "hooks.json": one_line})

    connect(setup_for(project, db_path), ["claude", "cursor"], hooks=True)

    claude_text = (project / ".mcp.json").read_bytes().decode()
    assert "\n" not in claude_text.replace("\r\n", "") and '\r\n        "recall": {\r\n' in claude_text
    assert "\n" not in (project / ".cursor" / "hooks.json").read_text().strip()
    connect(setup_for(project, db_path), ["claude", "cursor"], remove=True)
    assert {p: p.read_bytes() for p in originals} == originals


def test_instruction_block_never_touches_the_users_text(project: Path, home: Path, db_path: Path) -> None:
    write_files({project / "CLAUDE.md": CLAUDE_MD})
    setup = setup_for(project, db_path)
    connect(setup, ["claude"], instructions=True)
    text = (project / "CLAUDE.md").read_text()
    (project / "CLAUDE.md").write_text(text + "\n## Later notes\n\nWritten after connect.\n")

    connect(setup, ["claude"], instructions=True)
    connect(setup, ["claude"], remove=True)

    assert (project / "CLAUDE.md").read_text() == CLAUDE_MD + "\n## Later notes\n\nWritten after connect.\n"


def test_hooks_only_with_hooks_flag_and_json_output(project: Path, home: Path, db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db_path), "connect", "--agent", "claude", "--json"])

    data = json.loads(result.output)
    assert data["project"] == "shop" and data["scope"] == "project"
    assert [(f["path"], f["steps"][0]["action"]) for f in data["files"]] == [
        (str(project / ".mcp.json"), "added")
    ]
    assert not (project / ".claude" / "settings.json").exists()


def _agents(names: list[str]) -> list[str]:
    return [part for name in names for part in ("--agent", name)]


def test_without_agent_flags_connect_picks_the_agents_installed_here(
    project: Path, home: Path, db_path: Path
) -> None:
    (home / ".cursor").mkdir()
    (home / ".codex").mkdir()

    result = CliRunner().invoke(cli, ["--db", str(db_path), "connect"])

    assert result.exit_code == 0, result.output
    assert (project / ".cursor" / "mcp.json").is_file() and (home / ".codex" / "config.toml").is_file()
    assert not (project / ".mcp.json").exists() and not (project / ".vscode").exists()


def test_a_symlinked_settings_file_stays_a_link(
    project: Path, home: Path, db_path: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    originals = write_files({dotfiles: CLAUDE_SETTINGS})
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(dotfiles)
    setup = setup_for(project, db_path, global_scope=True)

    connect(setup, ["claude"], hooks=True)

    assert (home / ".claude" / "settings.json").is_symlink()
    assert "context --hook" in dotfiles.read_text()
    connect(setup, ["claude"], remove=True)
    assert dotfiles.read_bytes() == originals[dotfiles]


CURSOR_HOOKS_WITH_SESSION_START = """\
{
  "version": 1,
  "hooks": {
    "sessionStart": [
      { "command": "./scripts/print-branch-context.sh" }
    ],
    "afterFileEdit": [{ "command": "./scripts/format.sh" }]
  }
}
"""


def cursor_commands(path: Path) -> dict[str, list[str]]:
    return {event: [entry["command"] for entry in entries] for event, entries in parse(path)["hooks"].items()}


def test_cursor_gets_session_start_and_stop_beside_the_users_own_session_start_hook(
    project: Path, home: Path, db_path: Path
) -> None:
    hooks_file = project / ".cursor" / "hooks.json"
    originals = write_files({hooks_file: CURSOR_HOOKS_WITH_SESSION_START})
    setup = setup_for(project, db_path)

    first = connect(setup, ["cursor"], hooks=True)

    (step,) = [s for f in first.files for s in f.steps if s.part == "hooks"]
    assert (step.action, step.note) == ("added", "sessionStart, stop")
    commands = cursor_commands(hooks_file)
    assert commands["sessionStart"] == [
        "./scripts/print-branch-context.sh",
        setup.hook_command(CONTEXT_HOOK),
    ]
    assert commands["stop"] == [setup.hook_command(DUMP_HOOK, "--source", "cursor")]
    assert commands["afterFileEdit"] == ["./scripts/format.sh"]
    assert parse(hooks_file)["version"] == 1
    (link,) = cursor.connections(setup)
    assert link.hooks == ["sessionStart", "stop"]
    after_first = hooks_file.read_bytes()

    second = connect(setup, ["cursor"], hooks=True)

    assert {s.action for f in second.files for s in f.steps} == {"unchanged"}
    assert hooks_file.read_bytes() == after_first

    connect(setup, ["cursor"], remove=True)

    assert hooks_file.read_bytes() == originals[hooks_file]
    (link,) = cursor.connections(setup)
    assert link.hooks == []


def test_a_cursor_file_from_an_older_recall_gets_session_start_added(
    project: Path, home: Path, db_path: Path
) -> None:
    setup = setup_for(project, db_path)
    stop_only = {"command": setup.hook_command(DUMP_HOOK, "--source", "cursor")}
    older = (
        '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{ "command": "./scripts/format.sh" }],\n'
        f'    "stop": [\n      {json.dumps(stop_only)}\n    ]\n  }}\n}}\n'
    )
    hooks_file = project / ".cursor" / "hooks.json"
    write_files({hooks_file: older})
    (link,) = cursor.connections(setup)
    assert link.hooks == ["stop"]

    report = connect(setup, ["cursor"], hooks=True)

    (step,) = [s for f in report.files for s in f.steps if s.part == "hooks"]
    assert (step.action, step.note) == ("added", "sessionStart")
    commands = cursor_commands(hooks_file)
    assert commands["sessionStart"] == [setup.hook_command(CONTEXT_HOOK)]
    assert commands["stop"] == [stop_only["command"]]  # the existing entry is kept, not duplicated
    assert hooks_file.read_text().startswith(older.split('    "stop"')[0])
    connect(setup, ["cursor"], remove=True)
    assert cursor_commands(hooks_file) == {"afterFileEdit": ["./scripts/format.sh"]}


def test_cursor_hooks_of_the_wrong_shape_are_refused_untouched(
    project: Path, home: Path, db_path: Path
) -> None:
    broken = '{\n  "version": 1,\n  "hooks": {\n    "sessionStart": {"command": "./mine.sh"}\n  }\n}\n'
    hooks_file = project / ".cursor" / "hooks.json"
    originals = write_files({hooks_file: broken})
    setup = setup_for(project, db_path)

    report = connect(setup, ["cursor"], hooks=True)

    (refused,) = report.refused
    assert refused.path == hooks_file and "hooks.sessionStart is not a list" in refused.steps[0].note
    assert hooks_file.read_bytes() == originals[hooks_file]
    connect(setup, ["cursor"], remove=True)
    assert hooks_file.read_bytes() == originals[hooks_file]


CODEX_HOOKS_WITH_SESSION_START = """\
{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume",
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/.codex/hooks/branch_context.py",
            "statusMessage": "Loading branch context"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "~/.codex/hooks/check-bash.sh", "timeout": 5}]
      }
    ]
  }
}
"""


def session_start_commands(path: Path) -> list[list[str]]:
    """The commands of each SessionStart matcher group, in order."""
    return [[hook["command"] for hook in group["hooks"]] for group in parse(path)["hooks"]["SessionStart"]]


def codex_hooks_step(report: Any, path: Path) -> tuple[str, str]:
    (step,) = [s for f in report.files if f.path == path for s in f.steps]
    return step.action, step.note


@pytest.mark.parametrize("scope", ["project", "user", "codex-home"])
def test_codex_session_start_goes_in_the_scopes_hooks_json_and_reruns_byte_identical(
    project: Path, home: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scope: str
) -> None:
    if scope == "codex-home":
        monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    setup = setup_for(project, db_path, global_scope=scope != "project")
    candidates = {
        "project": project / ".codex" / "hooks.json",
        "user": home / ".codex" / "hooks.json",
        "codex-home": tmp_path / "codex-home" / "hooks.json",
    }
    wanted = candidates[scope]

    first = connect(setup, ["codex"], hooks=True)

    assert not first.refused and codex_hooks_step(first, wanted) == ("added", "SessionStart")
    assert [p for p in candidates.values() if p.exists()] == [wanted]
    assert parse(wanted) == {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": setup.hook_command(CONTEXT_HOOK), "timeout": 10}]}
            ]
        }
    }
    assert setup.hook_command(CONTEXT_HOOK).endswith(f"--db {db_path} context --hook")
    assert parse(codex.config_file(setup))["notify"][-4:] == ["dump", "--from-hook", "--source", "codex"]
    (link,) = codex.connections(setup)
    assert link.hooks == ["notify", f"SessionStart ({wanted})"]
    other_scope = setup_for(project, db_path, global_scope=not setup.global_scope)
    assert codex.connections(other_scope)[0].hooks == link.hooks  # doctor keeps one Codex row of the two
    notes = " ".join(note for agent, note in first.notes if agent == "codex")
    assert str(wanted) in notes and "trust" in notes and "codex_hooks = true" in notes
    written = wanted.read_bytes()

    second = connect(setup, ["codex"], hooks=True)

    assert {s.action for f in second.files for s in f.steps} == {"unchanged"}
    assert wanted.read_bytes() == written

    removed = connect(setup, ["codex"], remove=True)

    assert codex_hooks_step(removed, wanted) == ("removed", "")
    assert not wanted.exists() and not (project / ".codex").exists()
    (link,) = codex.connections(setup)
    assert link.hooks == []


def test_codex_session_start_sits_beside_the_users_own_and_disconnect_restores_every_byte(
    project: Path, home: Path, db_path: Path, tmp_path: Path
) -> None:
    hooks_file = project / ".codex" / "hooks.json"
    originals = write_files({hooks_file: CODEX_HOOKS_WITH_SESSION_START})
    setup = setup_for(project, db_path)
    theirs = "python3 ~/.codex/hooks/branch_context.py"

    first = connect(setup, ["codex"], hooks=True)

    assert codex_hooks_step(first, hooks_file) == ("added", "SessionStart")
    assert session_start_commands(hooks_file) == [[theirs], [setup.hook_command(CONTEXT_HOOK)]]
    assert without_recall(parse(hooks_file)) == json.loads(CODEX_HOOKS_WITH_SESSION_START)
    assert hooks_file.read_text().startswith(
        CODEX_HOOKS_WITH_SESSION_START.split('\n    ],\n    "PreToolUse"')[0]
    )
    after_first = hooks_file.read_bytes()
    again = connect(setup, ["codex"], hooks=True)
    assert codex_hooks_step(again, hooks_file) == ("unchanged", "")
    assert hooks_file.read_bytes() == after_first

    moved = setup_for(project, tmp_path / "moved.db")
    report = connect(moved, ["codex"], hooks=True)

    assert codex_hooks_step(report, hooks_file) == ("updated", "SessionStart")
    assert session_start_commands(hooks_file) == [[theirs], [moved.hook_command(CONTEXT_HOOK)]]
    assert str(db_path) not in hooks_file.read_text()

    connect(moved, ["codex"], remove=True)

    assert hooks_file.read_bytes() == originals[hooks_file]
    assert codex.connections(moved)[0].hooks == []


def test_codex_handler_moved_into_the_users_group_is_updated_there_and_removed_alone(
    project: Path, home: Path, db_path: Path, tmp_path: Path
) -> None:
    older = setup_for(project, tmp_path / "old.db").hook_command(CONTEXT_HOOK)
    shared = CODEX_HOOKS_WITH_SESSION_START.replace(
        '"statusMessage": "Loading branch context"\n          }',
        '"statusMessage": "Loading branch context"\n          },\n'
        f'          {{"type": "command", "command": {json.dumps(older)}, "timeout": 10}}',
    )
    hooks_file = project / ".codex" / "hooks.json"
    write_files({hooks_file: shared})
    setup = setup_for(project, db_path)
    theirs = "python3 ~/.codex/hooks/branch_context.py"

    report = connect(setup, ["codex"], hooks=True)

    assert codex_hooks_step(report, hooks_file) == ("updated", "SessionStart")
    assert session_start_commands(hooks_file) == [[theirs, setup.hook_command(CONTEXT_HOOK)]]
    assert parse(hooks_file)["hooks"]["SessionStart"][0]["matcher"] == "startup|resume"

    connect(setup, ["codex"], remove=True)

    assert parse(hooks_file) == json.loads(CODEX_HOOKS_WITH_SESSION_START)


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ('{\n  "hooks": {\n    "SessionStart": {"hooks": []}\n  }\n}\n', "hooks.SessionStart is not a list"),
        ('{\n  "hooks": [\n    {"SessionStart": []}\n  ]\n}\n', "hooks is not an object"),
        ('[\n  {"hooks": {}}\n]\n', "the document is not an object"),
        ('{\n  "hooks": {\n    "SessionStart": [],\n  }\n}\n', "not valid JSON"),
    ],
    ids=["event-not-a-list", "hooks-not-an-object", "not-an-object", "trailing-comma"],
)
def test_codex_hooks_json_of_the_wrong_shape_is_refused_untouched(
    project: Path, home: Path, db_path: Path, broken: str, reason: str
) -> None:
    hooks_file = project / ".codex" / "hooks.json"
    originals = write_files({hooks_file: broken})
    setup = setup_for(project, db_path)

    report = connect(setup, ["codex"], hooks=True)

    (refused,) = report.refused
    assert refused.path == hooks_file and reason in refused.steps[0].note
    assert hooks_file.read_bytes() == originals[hooks_file]
    assert parse(codex.config_file(setup))["notify"][-1] == "codex"  # the rest of Codex was still wired
    assert codex.connections(setup)[0].hooks == ["notify"]
    connect(setup, ["codex"], remove=True)
    assert hooks_file.read_bytes() == originals[hooks_file]


def test_remote_points_agents_at_the_team_server_without_writing_the_token(
    project: Path, home: Path, db_path: Path
) -> None:
    (project / ".mcp.json").write_text(CLAUDE_MCP)
    args = ["--db", str(db_path), "connect", "--agent", "claude", "--remote", "https://recall.example.org/"]
    result = CliRunner().invoke(cli, args, env={"RECALL_TOKEN": "rcl_secret_never_written"})
    assert result.exit_code == 0, result.output
    written = (project / ".mcp.json").read_text()
    entry = json.loads(written)["mcpServers"]["recall"]
    assert entry == {
        "type": "http",
        "url": "https://recall.example.org/mcp",
        "headers": {"Authorization": "Bearer ${RECALL_TOKEN}"},
    }
    assert "rcl_secret_never_written" not in written and is_recall_server(entry)
    assert json.loads(written)["mcpServers"]["sentry"] == {
        "type": "http",
        "url": "https://mcp.sentry.dev/mcp",
    }
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and (project / ".mcp.json").read_text() == written
    CliRunner().invoke(cli, ["--db", str(db_path), "disconnect", "--agent", "claude"])
    assert (project / ".mcp.json").read_text() == CLAUDE_MCP
    bad = CliRunner().invoke(
        cli, ["--db", str(db_path), "connect", "--agent", "claude", "--remote", "ftp://x"]
    )
    assert bad.exit_code != 0


def test_remote_points_every_agent_at_the_team_server_and_back(
    project: Path, home: Path, db_path: Path
) -> None:
    """Each host gets the team server in its own config shape, with the token read from RECALL_TOKEN in
    that host's own syntax; connecting locally again restores the local server (Codex's table included)."""
    originals = write_files(project_files(project, home))
    url = "https://recall.example.org/team"
    args = ["--db", str(db_path), "connect", "--remote", url + "/"]
    agents = [
        arg
        for name in ("claude", "cursor", "vscode", "codex", "opencode", "pi", "gemini")
        for arg in ("--agent", name)
    ]
    result = CliRunner().invoke(cli, [*args, *agents], env={"RECALL_TOKEN": "rcl_secret_never_written"})
    assert result.exit_code == 0, result.output
    assert "keeps the local server" not in result.output
    mcp = url + "/mcp"
    entries = {
        "claude": parse(project / ".mcp.json")["mcpServers"]["recall"],
        "cursor": parse(project / ".cursor" / "mcp.json")["mcpServers"]["recall"],
        "vscode": parse(project / ".vscode" / "mcp.json")["servers"]["recall"],
        "opencode": parse(project / "opencode.json")["mcp"]["recall"],
        "pi": parse(project / ".pi" / "mcp.json")["mcpServers"]["recall"],
        "gemini": parse(project / ".gemini" / "settings.json")["mcpServers"]["recall"],
        "codex": parse(home / ".codex" / "config.toml")["mcp_servers"]["recall"],
    }
    assert entries["claude"] == {
        "type": "http",
        "url": mcp,
        "headers": {"Authorization": "Bearer ${RECALL_TOKEN}"},
    }
    assert entries["cursor"] == {"url": mcp, "headers": {"Authorization": "Bearer ${env:RECALL_TOKEN}"}}
    assert entries["opencode"] == {
        "type": "remote", "url": mcp, "headers": {"Authorization": "Bearer {env:RECALL_TOKEN}"}, "enabled": True,
    }  # fmt: skip
    assert entries["gemini"] == {"httpUrl": mcp, "headers": {"Authorization": "Bearer ${RECALL_TOKEN}"}}
    assert entries["codex"] == {"url": mcp, "bearer_token_env_var": "RECALL_TOKEN"}
    assert entries["pi"]["url"] == entries["vscode"]["url"] == mcp
    for name, entry in entries.items():
        assert is_recall_server(entry), name
        assert "command" not in entry and "args" not in entry and "environment" not in entry, name
    written = {
        path: path.read_bytes()
        for path in [*originals, project / "opencode.json", project / ".pi" / "mcp.json"]
    }
    assert not any(b"rcl_secret_never_written" in data for data in written.values())
    assert parse(home / ".codex" / "config.toml")["mcp_servers"]["github"]  # the user's own servers stay
    again = CliRunner().invoke(cli, [*args, *agents])
    assert again.exit_code == 0 and {path: path.read_bytes() for path in written} == written
    local = CliRunner().invoke(
        cli, ["--db", str(db_path), "connect", "--agent", "codex", "--agent", "opencode"]
    )
    assert local.exit_code == 0, local.output
    codex_entry = parse(home / ".codex" / "config.toml")["mcp_servers"]["recall"]
    assert set(codex_entry) == {"command", "args"} and codex_entry["args"][-1] == "mcp"
    assert parse(project / "opencode.json")["mcp"]["recall"]["type"] == "local"
    gone = CliRunner().invoke(cli, ["--db", str(db_path), "disconnect"])
    assert gone.exit_code == 0, gone.output
    for path, data in originals.items():
        assert path.read_bytes() == data, path
