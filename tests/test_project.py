"""The one project resolver: git root, worktrees, origin remote, and paths that no longer exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall.project import UNKNOWN_PROJECT, repo_name_from_url, resolve_project


def _repo(root: Path, origin: str | None = None) -> Path:
    (root / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if origin:
        config += f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    (root / ".git" / "config").write_text(config)
    return root


def test_subfolder_resolves_to_repo_named_after_origin(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "checkout-dir", origin="git@github.com:acme/widget-service.git")
    (repo / "src" / "pkg").mkdir(parents=True)
    assert resolve_project(repo / "src" / "pkg") == "widget-service"


def test_repo_without_origin_is_named_after_its_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "localproj")
    (repo / "docs").mkdir()
    assert resolve_project(repo / "docs") == "localproj"


def test_worktree_maps_to_its_main_repository(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main-checkout", origin="https://gitlab.com/team/engine")
    admin = main / ".git" / "worktrees" / "feature-x"
    admin.mkdir(parents=True)
    (admin / "commondir").write_text("../..\n")
    worktree = tmp_path / "engine-feature-x"
    (worktree / "lib").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {admin}\n")
    assert resolve_project(worktree / "lib") == "engine"
    bare_main = _repo(tmp_path / "plain-main")
    admin2 = bare_main / ".git" / "worktrees" / "wt"
    admin2.mkdir(parents=True)
    (admin2 / "commondir").write_text("../..\n")
    wt2 = tmp_path / "wt-folder"
    wt2.mkdir()
    (wt2 / ".git").write_text(f"gitdir: {admin2}\n")
    assert resolve_project(wt2) == "plain-main"


def test_folder_outside_git_is_its_own_name(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    assert resolve_project(folder) == "scratch"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/home/someone/gone/project-x", "project-x"),
        ("/home/someone/gone/project-x/", "project-x"),
        ("C:\\Users\\dev\\code\\winproj", "winproj"),
        ("", UNKNOWN_PROJECT),
    ],
)
def test_missing_paths_use_their_last_component(path: str, expected: str) -> None:
    assert resolve_project(path) == expected


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("git@github.com:org/repo.git", "repo"),
        ("https://github.com/org/repo", "repo"),
        ("https://github.com/org/repo/", "repo"),
        ("ssh://git@host:2222/group/sub/repo.git", "repo"),
        ("", None),
    ],
)
def test_repo_name_from_url(url: str, name: str | None) -> None:
    assert repo_name_from_url(url) == name


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/home/someone/gone/spotter/.claude/worktrees/feat-login", "spotter"),
        ("/home/someone/gone/spotter/.claude/worktrees/feat-login/src/app", "spotter"),
        ("/home/someone/gone/spotter/.worktrees/hotfix", "spotter"),
        ("/home/someone/projects/spotter-worktrees/spotter-dov", "spotter"),
        ("/home/someone/.codex/worktrees/9f3a/engine", "engine"),
        ("/home/someone/.codex/worktrees/9f3a/engine/lib", "engine"),
        ("C:\\Users\\dev\\code\\winproj\\.claude\\worktrees\\wt1", "winproj"),
        # Not worktree layouts: a folder that merely is called "worktrees", or ends a path.
        ("/home/someone/worktrees/myapp", "myapp"),
        ("/home/someone/gone/spotter/.worktrees", ".worktrees"),
        ("/home/someone/.codex/worktrees/9f3a", "9f3a"),
        ("/home/someone/-worktrees/x", "x"),
    ],
)
def test_a_deleted_worktree_is_named_after_its_repository(path: str, expected: str) -> None:
    assert resolve_project(path) == expected


def test_a_deleted_worktree_of_a_repository_that_still_exists_takes_its_remote_name(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "checkout", origin="git@github.com:acme/widget-service.git")
    gone = repo / ".claude" / "worktrees" / "feat-x" / "src"
    assert not gone.exists()
    assert resolve_project(gone) == "widget-service"
    sibling = tmp_path / "checkout-worktrees" / "feat-y"
    assert resolve_project(sibling) == "widget-service"
