"""`recall connect` / `disconnect` for OpenCode, Pi and Gemini CLI, against config files full of the
user's own settings: connect adds recall's entries, a re-run changes nothing, disconnect restores
every byte of an edited file and deletes what connect created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recall.cli import cli
from recall.connect import connect, make_setup
from recall.connect.ownedfile import MARKER
from recall.connect.plan import FileResult

HOSTS = ["opencode", "pi", "gemini"]

OPENCODE_JSON = """\
{
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "mcp": {
    "sentry": {
      "type": "remote",
      "url": "https://mcp.sentry.dev/mcp"
    }
  },
  "plugin": ["opencode-wakatime"]
}
"""

GEMINI_SETTINGS = """\
{
  "general": {
    "sessionRetention": {"enabled": true, "maxAge": "60d"}
  },
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"]
    }
  },
  "hooks": {
    "SessionEnd": [
      {
        "hooks": [{"type": "command", "command": "notify-send 'Gemini session ended'"}]
      }
    ]
  }
}
"""

PI_MCP = '{\n\t"mcpServers": {\n\t\t"chrome": {"command": "npx", "args": ["chrome-devtools-mcp"]}\n\t}\n}\n'


@pytest.fixture
def project(tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shop"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def write(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def actions(files: list[FileResult]) -> set[str]:
    return {step.action for result in files for step in result.steps}


def test_project_files_are_added_kept_on_rerun_and_restored_byte_for_byte(
    project: Path, db_path: Path
) -> None:
    write({project / "opencode.json": OPENCODE_JSON, project / ".gemini" / "settings.json": GEMINI_SETTINGS,
           project / ".pi" / "mcp.json": PI_MCP})  # fmt: skip
    before = tree(project)
    setup = make_setup(db_path, project, global_scope=False)

    first = connect(setup, HOSTS, hooks=True)
    assert not first.refused
    after = tree(project)
    opencode = json.loads(after["opencode.json"])
    assert list(opencode["mcp"]) == ["sentry", "recall"] and opencode["plugin"] == ["opencode-wakatime"]
    assert opencode["mcp"]["recall"] == {
        "type": "local",
        "command": [*setup.launcher, "--db", str(db_path), "mcp"],
        "environment": {"RECALL_PROJECT": "shop"},
        "enabled": True,
    }
    plugin = after[".opencode/plugins/recall.js"].decode()
    assert plugin.startswith(MARKER + "\n") and '"dump", "--from-hook", "--source", "opencode"]' in plugin
    gemini = json.loads(after[".gemini/settings.json"])
    assert gemini["general"] == {"sessionRetention": {"enabled": True, "maxAge": "60d"}}
    assert list(gemini["mcpServers"]) == ["github", "recall"] and "type" not in gemini["mcpServers"]["recall"]
    (users, ours) = gemini["hooks"]["SessionEnd"]
    assert users["hooks"][0]["command"] == "notify-send 'Gemini session ended'"
    assert ours["hooks"][0]["command"].endswith("dump --from-hook --source gemini --detach")
    assert ours["hooks"][0]["timeout"] == 5000  # Gemini CLI counts milliseconds
    pi = json.loads(after[".pi/mcp.json"])
    assert list(pi["mcpServers"]) == ["chrome", "recall"]
    assert '"dump", "--from-hook", "--source", "pi"]' in after[".pi/extensions/recall.ts"].decode()

    again = connect(setup, HOSTS, hooks=True)
    assert actions(again.files) == {"unchanged"} and tree(project) == after

    removed = connect(setup, HOSTS, remove=True)
    assert not removed.refused and tree(project) == before
    assert not (project / ".opencode").exists() and not (project / ".pi" / "extensions").exists()


def test_files_connect_created_go_with_their_folders(project: Path, db_path: Path) -> None:
    setup = make_setup(db_path, project, global_scope=False)
    connect(setup, HOSTS, hooks=True)
    assert {".gemini", ".opencode", ".pi", "opencode.json"} <= {p.name for p in project.iterdir()}

    connect(setup, HOSTS, remove=True)
    assert sorted(p.name for p in project.iterdir()) == [".git"]


def test_user_files_under_the_variables_that_move_them(
    project: Path, user_home: Path, tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    write({tmp_path / "gemini-home" / ".gemini" / "settings.json": GEMINI_SETTINGS})
    before = tree(tmp_path)
    setup = make_setup(db_path, project, global_scope=True)

    report = connect(setup, HOSTS, hooks=True)
    written = sorted(str(r.path.relative_to(tmp_path)) for r in report.files if r.written)
    assert written == [
        "config/opencode/opencode.json",
        "config/opencode/plugins/recall.js",
        "gemini-home/.gemini/settings.json",
        "pi-agent/extensions/recall.ts",
        "pi-agent/mcp.json",
    ]
    assert (
        "environment"
        not in json.loads((tmp_path / "config/opencode/opencode.json").read_text())["mcp"]["recall"]
    )
    assert not (project / "opencode.json").exists() and not (user_home / ".pi").exists()

    connect(setup, HOSTS, remove=True)
    assert tree(tmp_path) == before


def test_a_plugin_of_the_users_with_recalls_name_is_never_touched(project: Path, db_path: Path) -> None:
    mine = "// my own recall helper\nexport const Mine = async () => ({})\n"
    write({project / ".opencode" / "plugins" / "recall.js": mine})
    setup = make_setup(db_path, project, global_scope=False)

    report = connect(setup, ["opencode"], hooks=True)
    assert [step.action for result in report.refused for step in result.steps] == ["refused"]
    connect(setup, ["opencode"], remove=True)
    assert (project / ".opencode" / "plugins" / "recall.js").read_text() == mine


def test_an_opencode_jsonc_with_comments_is_reported_and_left_alone(project: Path, db_path: Path) -> None:
    commented = '{\n  // my settings\n  "theme": "nord"\n}\n'
    write({project / "opencode.jsonc": commented})

    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "connect", "--agent", "opencode", "--json"], catch_exceptions=False
    )
    assert result.exit_code == 1
    (file,) = json.loads(result.output)["files"]
    assert file["path"].endswith("opencode.jsonc") and file["steps"][0]["action"] == "refused"
    assert "not valid JSON" in file["steps"][0]["note"]
    assert (project / "opencode.jsonc").read_text() == commented


def test_connect_on_the_command_line_names_the_new_agents(project: Path, db_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(
        cli, ["--db", str(db_path), "connect", "--agent", "pi", "--agent", "gemini", "--hooks", "--dry-run"]
    )
    assert shown.exit_code == 0
    assert "Pi has no MCP client of its own" in shown.output and "+++ b/.pi/mcp.json" in shown.output
    assert not (project / ".pi").exists()

    done = runner.invoke(cli, ["--db", str(db_path), "connect", "--agent", "opencode", "--hooks"])
    undone = runner.invoke(cli, ["--db", str(db_path), "disconnect"])
    assert done.exit_code == undone.exit_code == 0
    assert "opencode hooks" in " ".join(undone.output.split()) and not (project / "opencode.json").exists()
