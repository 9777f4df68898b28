"""Every benchmark script still runs on the current library API, at a tiny size.

Each bench is run through its own ``main`` with its own options (in this process: the model loads
once and the imports are paid once), so an option, an import or a library call that no longer exists
fails here instead of at the next measurement. The figures are not judged (speed goals live in
bench/, not in timed tests), except that each run must have measured something: a bench that
silently measures nothing (briefs whose lines it no longer recognises, a store left empty) is as
broken as one that raises. LoCoMo and the labelled transcripts live in ``../shared`` next to the
repository; without them those benches skip, saying where they looked. serve_load needs PostgreSQL
(tests/postgres.py starts a throwaway server, or skips).
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp.client.stdio  # noqa: F401 - imported now, on purpose (below)
import pytest

from recall.search.embedder import Embedder, FakeEmbedder

# The MCP SDK's stdio client binds ``sys.stderr`` as its default error log when its module is first
# imported. Imported by a bench inside a test, that would be the test's capture, closed when the test
# ends, and the next bench's server could not start; imported here, it is the session's.

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(autouse=True)
def bench_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/ first on the path, as when a script runs: the benches import each other by name."""
    monkeypatch.syspath_prepend(str(BENCH))


def bench(name: str) -> ModuleType:
    return importlib.import_module(name)


def run_main(
    name: str, *argv: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> str:
    """``python bench/<name>.py ARGV``'s main, in this process; returns what it printed."""
    module = bench(name)
    monkeypatch.setattr(sys, "argv", [str(BENCH / f"{name}.py"), *argv])
    module.main()
    return capfd.readouterr().out


def run_json(
    name: str, *argv: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Any:
    return json.loads(run_main(name, *argv, "--json", monkeypatch=monkeypatch, capfd=capfd))


def shared_fixtures() -> Path:
    labelled = bench("labelled")
    if not labelled.FIXTURES.is_dir():
        pytest.skip(
            f"the labelled transcripts are not at {labelled.FIXTURES} (../shared/fixtures next to the repository)"
        )
    return Path(labelled.FIXTURES)


def small_labels(folder: Path) -> Path:
    """The labels of three short spotter files and two of their tasks: the whole path, in seconds."""
    labelled = bench("labelled")
    data = json.loads(labelled.LABELS.read_text(encoding="utf-8"))
    keep = {f"claude-code/real/spotter/{name}.jsonl" for name in ("subagent", "short", "tool_heavy")}
    small = {
        "files": [f for f in data["files"] if f["path"] in keep],
        "tasks": data["tasks"][:2],
        "labels": [label for label in data["labels"] if label["file"] in keep],
    }
    assert len(small["files"]) == len(keep) and small["labels"], "the labelled files were renamed"
    path = folder / "labels.json"
    path.write_text(json.dumps(small), encoding="utf-8")
    return path


# -- stores built from generated transcripts ------------------------------------------------------


def test_import_bench_every_host(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    for host in ("claude", "codex", "cursor", "opencode", "pi", "gemini"):
        out = run_json("import_bench", "--messages", "120", "--sessions", "2", "--host", host,
                       monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
        assert out["messages_added"] > 0 and out["second_run_messages_added"] == 0, host


@pytest.mark.slow
def test_import_bench_embed_without_connections(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import recall.store.entities
    import recall.store.transcripts

    # The bench turns the connect stage off for the rest of its process: put it back after this test.
    monkeypatch.setattr(recall.store.transcripts, "connect_written", recall.store.transcripts.connect_written)
    monkeypatch.setattr(recall.store.entities, "connect_pending", recall.store.entities.connect_pending)
    out = run_json("import_bench", "--messages", "60", "--sessions", "2", "--without-connections",
                   "--read-ahead", "on", "--embed", monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["connections"] is False and out["embedded"] > 0


def test_connections_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("connections_bench", "--messages", "200", "--sessions", "2", "--records", "10",
                   "--queries", "10", monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["messages"] == 200 and out["links"] > 0 and out["answered"] != "0/10"


def test_forget_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        "forget_bench", "--messages", "200", "--sessions", "2", monkeypatch=monkeypatch, capfd=capfd
    )
    assert out["store"]["vectors"] > 0 and out["forget_session"]["messages"] > 0
    assert out["forget_many_delete"]["records"] > 0 and out["rescrub"]["rows"] > 0


@pytest.mark.slow
def test_ui_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("ui_bench", "--messages", "200", "--sessions", "2", "--calls", "2", "--runs", "1",
                   monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["store"]["vectors"] > 0 and out["pages"]


@pytest.mark.slow
def test_write_contention(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    module = bench("write_contention")
    private_home = module._env

    def env_without_embedding(home: Path) -> dict[str, str]:
        """The bench's own home for its processes, where `recall import` embeds nothing (that is
        seconds of model time, and tests/test_embed_later.py covers the import's budget)."""
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text("[import]\nembed_budget = 0\n", encoding="utf-8")
        return dict(private_home(home))

    monkeypatch.setattr(module, "_env", env_without_embedding)
    monkeypatch.setattr(module, "CLI_WRITERS", 1)  # each call is a new process
    out = run_json("write_contention", "--messages", "200", "--sessions", "2", "--big", "0", "--pause", "0.05",
                   "--warmup", "0", "--idle-calls", "1", "--no-alone", monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["idle"]["failures"] == 0 and out["during_import"]["import"]["messages"] == 200
    assert out["during_import"]["import"]["embedded"] == 0 and out["lock_holds"]["transactions"] > 0


# -- stores of generated rows and vectors ---------------------------------------------------------


@pytest.mark.slow
def test_vector_latency(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("vector_latency", "--sizes", "300", "--queries", "3", "--recall-queries", "2",
                   monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["curve"][0]["rows"] == 300 and out["curve"][0]["prefilter_recall"]


@pytest.mark.slow
def test_eval_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("eval_bench", "--rows", "1000", monkeypatch=monkeypatch, capfd=capfd)
    assert sum(out["probes"].values()) > 0


def test_filters_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("filters_bench", "--records", "100", "--calls", "2", monkeypatch=monkeypatch, capfd=capfd)
    assert "hybrid, 2 tags" in out["searches"]


@pytest.mark.slow
def test_floors(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("floors", "--lines", "200", "--sessions", "2", "--rows", "300", "--queries", "3", "--runs", "1",
                   monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["import"]["messages"] == 200 and "recall_add" in out["commands"]


@pytest.mark.slow
def test_mcp_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("mcp_bench", "--runs", "1", "--records", "100", "--calls", "2",
                   monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["vectors"] > 0 and out["context_for_agent_p50_ms"] > 0


@pytest.mark.slow
def test_mcp_memory(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("mcp_memory", "--rows", "300", "--searches", "2", monkeypatch=monkeypatch, capfd=capfd)
    assert out["vectors"] == 300 and out["restart"]["at_rest"]["rss_mib"] > out["restart"]["idle"]["rss_mib"]


@pytest.mark.parametrize("phase", ["load", "search", "crash"])
def test_serve_load(
    phase: str, pg_url: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    out = run_json("serve_load", "--db", pg_url, "--only", phase, "--clients", "2", "--ops", "3", "--messages", "200",
                   "--queries", "2", "--sync-messages", "100", monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out[phase]


# -- the real model and the repository's own fixtures ---------------------------------------------


@pytest.mark.slow
def test_embed_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("embed_bench", "--short", "4", "--long", "2", "--queries", "2", "--repeat", "1",
                   monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["short_per_s"] > 0


@pytest.mark.slow
def test_add_dedup_bench(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_main("add_dedup_bench", "--records", "20", "--adds", "2", monkeypatch=monkeypatch, capfd=capfd)
    assert "rewording" in out and "refreshed 2/2" in out  # a rewording of a stored learning refreshes it


@pytest.mark.slow
def test_near_duplicates(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("rank_bm25", reason="a bench-only baseline: pip install -e '.[bench]'")
    out = run_json("near_duplicates", monkeypatch=monkeypatch, capfd=capfd)
    assert out["pairs"] > 0


def test_entity_sample(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    out = run_json("entity_sample", "--count", "3", monkeypatch=monkeypatch, capfd=capfd)
    assert out["population"] > 0 and len(out["sample"]) == 3


def test_connections_brief(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    import recall.search.embedder

    module = bench("connections_brief")
    # It embeds every message of its real transcripts with the real model (half a minute): here the
    # fake one does, on the smaller of its two sources; the path through recall is the same.
    monkeypatch.setattr(recall.search.embedder, "get_embedder", FakeEmbedder)
    monkeypatch.setattr(module, "SOURCES", [s for s in module.SOURCES if s.name == "pi-reshaped"])
    out = run_json("connections_brief", "--distractors", "5", monkeypatch=monkeypatch, capfd=capfd)
    assert out["tasks"] > 0 and out["after"]["records"] > 0


def test_scrub_benches(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    assert run_json("scrub_novel", "--seed", "7", monkeypatch=monkeypatch, capfd=capfd)["secrets"] > 0
    module = bench("scrub_bench")
    monkeypatch.setattr(module, "messages", functools.partial(module.messages, count=100))  # not 2,000
    assert run_json("scrub_bench", "--quick", monkeypatch=monkeypatch, capfd=capfd)["split"]


def test_dynamic_quant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnx", reason="a bench-only experiment: pip install -e '.[bench]'")
    target = Path(
        run_main("dynamic_quant", str(tmp_path / "dynq"), monkeypatch=monkeypatch, capfd=capfd).strip()
    )
    assert (target / "model.onnx").stat().st_size > 0 and (target / "tokenizer.json").exists()


# -- data from ../shared ----------------------------------------------------------------------------


@pytest.mark.slow
def test_extract_and_brief_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], minilm: Embedder
) -> None:
    from recall.extract import stage

    fixtures = shared_fixtures()
    labels = small_labels(tmp_path)
    # The bench swaps the extraction stage for a no-op while it times the import without it.
    monkeypatch.setattr(stage, "extract_sessions", stage.extract_sessions)
    out = run_json("extract", "--fixtures", str(fixtures), "--labels", str(labels), "--messages", "100",
                   "--sessions", "2", monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert out["quality"]["records"] > 0 and out["throughput"]["with_extraction"]["messages"] == 100
    # Brief lines are read back as records (``decision#3``): none read means the bench measures nothing.
    assert all(brief["items"] > 0 for brief in out["briefs"]["briefs"])
    shared = run_json("brief_share", "--fixtures", str(fixtures), "--labels", str(labels), "--budget", "600",
                      monkeypatch=monkeypatch, capfd=capfd)  # fmt: skip
    assert shared["tokens"] > 0 and all(brief["items"] > 0 for brief in shared["briefs"])


@pytest.mark.slow
def test_locomo(tmp_path: Path, minilm: Embedder) -> None:
    """LoCoMo's own path (load, a store per conversation, every mode, the cross-validation, the MCP
    run) on the first eight turns and one question of each category of five conversations (as few
    as the five folds take): the full run takes minutes."""
    locomo = bench("locomo")
    if not locomo.DATA.is_file():
        pytest.skip(
            f"LoCoMo is not at {locomo.DATA} (../shared/bench/locomo/locomo10.json next to the repository)"
        )
    every = set(locomo.CATEGORIES)  # each fold's scores need every category (conv-30 has no 3)
    conversations = [c for c in locomo.load(locomo.DATA) if {q.category for q in c.questions} == every]
    conversations = conversations[: locomo.FOLDS]
    for conversation in conversations:
        conversation.transcripts = [
            replace(conversation.transcripts[0], messages=conversation.transcripts[0].messages[:8])
        ]
        conversation.questions = [
            next(q for q in conversation.questions if q.category == c) for c in locomo.CATEGORIES
        ]
    stores = locomo.ingest(conversations, tmp_path, minilm)
    try:
        run = locomo.store_run(stores, cv=True)
    finally:
        stores.close()
    assert set(run["modes"]) == set(locomo.MODES) and stores.timings["embedded"] > 0
    assert len(run["cv"]["folds"]) == locomo.FOLDS
    via = bench("locomo_mcp").via_mcp(conversations, tmp_path / "mcp", minilm, locomo.summarise)
    assert via["modes"]["hybrid"]["metrics"]["cats 1-5"]["n"] == len(conversations) * len(locomo.CATEGORIES)
