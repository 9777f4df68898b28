"""Which files OpenCode, Pi and Gemini CLI claim when someone names a file without its host: each
claims every source its discovery finds in its samples and none of the others' (Claude Code and
Codex samples included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters import get_adapter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
SAMPLES = {
    **{host: sorted(get_adapter(host).discover([FIXTURES / host])) for host in ("opencode", "pi", "gemini")},
    "claude": sorted((FIXTURES / "claude-code").rglob("*.jsonl")),
    "codex": sorted((FIXTURES / "codex").rglob("*.jsonl")),
}


@pytest.mark.parametrize("host", ["opencode", "pi", "gemini"])
def test_each_new_host_claims_its_own_samples_and_no_other(host: str) -> None:
    adapter = get_adapter(host)
    own = set(SAMPLES[host])
    others = {path for name, paths in SAMPLES.items() if name != host for path in paths}

    assert own and all(adapter.claims(path) for path in own)
    assert [str(path.relative_to(FIXTURES)) for path in sorted(others) if adapter.claims(path)] == []


def test_the_opencode_samples_claimed_are_its_databases_and_session_files() -> None:
    claimed = sorted(str(p.relative_to(FIXTURES / "opencode")) for p in SAMPLES["opencode"])
    assert len(claimed) == 7  # 2 databases, 2 built JSON sessions, 3 third-party JSON sessions
    assert all(name.endswith("opencode.db") or "/session/" in name for name in claimed)


def test_locations_name_the_folders_and_variables_each_host_uses(user_home: Path) -> None:
    assert get_adapter("pi").locations() == [user_home / ".pi" / "agent" / "sessions"]
    assert get_adapter("gemini").locations() == [user_home / ".gemini" / "tmp"]
    assert get_adapter("opencode").locations()[0] == user_home / ".local" / "share" / "opencode"
    assert [get_adapter(h).env_vars for h in ("opencode", "pi", "gemini")] == [
        ("XDG_DATA_HOME", "OPENCODE_DB"),
        ("PI_CODING_AGENT_DIR",),
        ("GEMINI_CLI_HOME",),
    ]
