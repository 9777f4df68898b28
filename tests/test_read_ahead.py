"""The read-ahead worker (adr/0033): an import through it stores exactly what an in-process import
stores, and a worker that fails on a file, or dies, loses nothing.

Each case imports real fixture transcripts into real SQLite files, once in-process and once through
the worker, and compares every table (the import's own clock columns left out) and the keyword index.
"""

from __future__ import annotations

import collections
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import recall.read_ahead
from adapters import get_adapter
from recall.ingest import ImportSummary, run_import
from recall.read_ahead import ReadSource, read_source
from recall.store import Store

if TYPE_CHECKING:
    from adapters.base import ReadOptions

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
HOSTS = {"claude": FIXTURES / "claude-code", "codex": FIXTURES / "codex", "pi": FIXTURES / "pi"}
CLOCK = {"created_at", "updated_at", "imported_at", "extracted_at"}  # when the import ran, not what it read


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table and the keyword index, by table, without the import's clock."""
    store = Store(path)
    conn = store.connection
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'search_index%' "
            "AND name NOT LIKE 'sqlite%' ORDER BY name"
        )
    ]
    rows: dict[str, list[tuple[object, ...]]] = {}
    for table in tables:
        columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] not in CLOCK]
        listed = ", ".join(columns)
        rows[table] = [tuple(r) for r in conn.execute(f"SELECT {listed} FROM {table} ORDER BY {listed}")]
    rows["search_index"] = [
        tuple(r)
        for r in conn.execute("SELECT rowid, content, detail, tags, scope FROM search_index ORDER BY rowid")
    ]
    store.close()
    return rows


def imported(db: Path, host: str, *, read_ahead: bool, force: bool = False) -> ImportSummary:
    store = Store(db)
    try:
        return run_import(
            store,
            [get_adapter(host)],
            paths=[HOSTS[host]],
            embed_budget_seconds=0,
            read_ahead=read_ahead,
            force=force,
        )
    finally:
        store.close()


def files(host: str) -> int:
    return len(list(get_adapter(host).discover([HOSTS[host]])))


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_read_ahead_stores_exactly_what_an_in_process_import_stores(tmp_path: Path, host: str) -> None:
    alone = imported(tmp_path / "alone.db", host, read_ahead=False)
    ahead = imported(tmp_path / "ahead.db", host, read_ahead=True)

    # the first file is read in-process while the worker starts
    assert alone.read_ahead == {} and ahead.read_ahead["files"] == files(host) - 1 > 0
    assert ahead.messages_added == alone.messages_added > 0
    assert (ahead.links, ahead.redactions, ahead.summaries) == (
        alone.links,
        alone.redactions,
        alone.summaries,
    )
    assert ahead.files_failed == alone.files_failed
    assert dump(tmp_path / "ahead.db") == dump(tmp_path / "alone.db")


def test_a_forced_re_import_through_the_worker_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    first = imported(db, "claude", read_ahead=True)
    before = dump(db)

    again = imported(db, "claude", read_ahead=True, force=True)

    assert first.messages_added > 0 and again.read_ahead["files"] == files("claude") - 1
    assert (again.messages_added, again.messages_updated, again.links) == (0, 0, 0)
    assert dump(db) == before


def failing_reader(
    how: str, name: str, host: str, path: Path, options: ReadOptions, database: str, share: int
) -> ReadSource:
    """In the worker: on file ``name``, kill the process (as a segfault in a parser would) or raise
    (as a reader bug would)."""
    if path.name == name and how == "crash":
        os._exit(3)
    if path.name == name:
        raise RuntimeError("reader bug")
    return read_source(host, path, options, database, share)


@pytest.mark.parametrize("how", ["crash", "raise"])
def test_a_worker_failing_on_a_file_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    sources = list(get_adapter("claude").discover([HOSTS["claude"]]))
    reader = functools.partial(failing_reader, how, sources[2].name)
    monkeypatch.setattr(recall.read_ahead, "read_source", reader)
    alone = imported(tmp_path / "alone.db", "claude", read_ahead=False)

    ahead = imported(tmp_path / "ahead.db", "claude", read_ahead=True)

    assert ahead.files_failed == alone.files_failed and ahead.files_read == alone.files_read
    if how == "crash":  # the worker is gone: that file and every later one are read here
        assert ahead.read_ahead.get("files", 0) <= 1 < len(sources) - 2
    else:  # only the first file (read while the worker starts) and the one it failed on are read here
        assert ahead.read_ahead["files"] == len(sources) - 2
    assert ahead.messages_added == alone.messages_added
    assert dump(tmp_path / "ahead.db") == dump(tmp_path / "alone.db")


def test_few_files_are_read_in_process(tmp_path: Path) -> None:
    summary = imported(tmp_path / "recall.db", "pi", read_ahead=False)
    store = Store(tmp_path / "auto.db")
    auto = run_import(
        store, [get_adapter("pi")], paths=[next(HOSTS["pi"].rglob("*.jsonl"))], embed_budget_seconds=0
    )
    store.close()

    assert summary.files_read > 1 and auto.files_read == 1 and auto.read_ahead == {}


OPENCODE_DB = FIXTURES / "opencode/synthetic/built-from-source/v1.2-sqlite/opencode/opencode.db"


def opencode_imported(db: Path, *, read_ahead: bool) -> ImportSummary:
    store = Store(db)
    try:
        return run_import(
            store,
            [get_adapter("opencode")],
            paths=[OPENCODE_DB],
            embed_budget_seconds=0,
            read_ahead=read_ahead,
        )
    finally:
        store.close()


@pytest.fixture
def in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every source is read in parts, of one session each (the database holds two)."""
    monkeypatch.setattr(recall.read_ahead, "PART_BYTES", 0)
    monkeypatch.setattr(recall.read_ahead, "PART_MESSAGES", 1)


@pytest.mark.usefixtures("in_parts")
def test_a_source_read_in_parts_stores_what_an_in_process_import_stores(tmp_path: Path) -> None:
    alone = opencode_imported(tmp_path / "alone.db", read_ahead=False)
    parts = opencode_imported(tmp_path / "parts.db", read_ahead=True)

    # one part per session, and the empty last one that found the end
    assert alone.read_ahead == {} and parts.read_ahead["files"] == 3
    assert (parts.files_read, parts.sessions_new, parts.messages_added) == (1, 2, alone.messages_added)
    assert (parts.links, parts.summaries, parts.errors) == (alone.links, alone.summaries, alone.errors)
    assert dump(tmp_path / "parts.db") == dump(tmp_path / "alone.db")
    again = opencode_imported(tmp_path / "parts.db", read_ahead=True)
    assert (again.files_unchanged, again.messages_added) == (1, 0)


def failing_part(
    host: str, path: Path, options: ReadOptions, database: str, part: int, size: int, share: int
) -> ReadSource:
    """In the worker: the second part fails, as a reader bug in the middle of a database would."""
    if part == 1:
        raise RuntimeError("reader bug")
    return recall.read_ahead.read_part(host, path, options, database, part, size, share)


@pytest.mark.usefixtures("in_parts")
def test_a_worker_failing_partway_through_a_source_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = opencode_imported(tmp_path / "alone.db", read_ahead=False)
    monkeypatch.setattr(recall.read_ahead, "read_part", failing_part)
    parts = opencode_imported(tmp_path / "parts.db", read_ahead=True)

    # the first part was stored; then the whole source was read here and only the rest written
    assert parts.read_ahead["files"] == 1 and parts.files_failed == 0
    assert (parts.sessions_new, parts.messages_added) == (2, alone.messages_added)
    assert dump(tmp_path / "parts.db") == dump(tmp_path / "alone.db")


def test_idle_cores_count_idle_and_waiting_time_over_all_time() -> None:
    before = [100, 5, 50, 800, 50, 1, 2, 0]  # user nice system idle iowait irq softirq steal
    after = [160, 5, 70, 900, 70, 1, 2, 0]  # 60 + 20 busy, 100 + 20 idle of 200 jiffies
    assert recall.read_ahead.idle_cores(before, after, 2) == pytest.approx(1.2)
    assert recall.read_ahead.idle_cores(before, before, 2) == 2.0  # no time passed: nothing is known busy


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="no /proc/stat on this system")
def test_idle_now_reads_this_machine() -> None:
    idle = recall.read_ahead.idle_now(0.01)
    assert idle is not None and 0.0 <= idle <= (os.cpu_count() or 1)


def test_the_worker_waits_for_an_idle_core_now_not_for_a_quiet_minute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.0))  # the minute that just ended was busy
    monkeypatch.setattr(recall.read_ahead, "idle_now", lambda: 1.6)
    assert recall.read_ahead.has_spare_core()
    monkeypatch.setattr(recall.read_ahead, "idle_now", lambda: 0.4)
    assert not recall.read_ahead.has_spare_core()
    monkeypatch.setattr(recall.read_ahead, "idle_now", lambda: None)  # no /proc/stat: the load average
    assert not recall.read_ahead.has_spare_core()
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.5, 0.5))
    assert recall.read_ahead.has_spare_core()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not recall.read_ahead.has_spare_core()


@pytest.mark.parametrize("share", [recall.read_ahead.PARSE, recall.read_ahead.ROWS])
@pytest.mark.parametrize("host", ["claude", "codex"])
def test_a_worker_doing_less_stores_what_an_in_process_import_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str, share: int
) -> None:
    """The importing process does itself what the worker's share leaves out (adr/0046)."""
    alone = imported(tmp_path / "alone.db", host, read_ahead=False)
    monkeypatch.setattr(recall.read_ahead, "FIRST_SHARE", share)
    monkeypatch.setattr(recall.read_ahead.ReadAhead, "_balance", lambda self, waited: None)
    ahead = imported(tmp_path / "ahead.db", host, read_ahead=True)
    assert ahead.read_ahead["files_by_share"] == {recall.read_ahead.SHARE_NAMES[share]: files(host) - 1}
    assert (ahead.messages_added, ahead.links) == (alone.messages_added, alone.links)
    assert dump(tmp_path / "ahead.db") == dump(tmp_path / "alone.db")


def _balanced(share: int, *, waited: bool, done_ahead: int, taken: int = 5) -> int:
    """The share ``ReadAhead._balance`` leaves after a take, with ``done_ahead`` files read and waiting."""
    from concurrent.futures import Future

    ahead = recall.read_ahead.ReadAhead.__new__(recall.read_ahead.ReadAhead)
    ahead.share, ahead._taken = share, taken
    futures: list[tuple[int, Future[ReadSource]]] = []
    for index in range(3):
        future: Future[ReadSource] = Future()
        if index < done_ahead:
            future.set_result(None)  # type: ignore[arg-type]
        futures.append((0, future))
    ahead._futures = {("claude", Path("next.jsonl")): collections.deque(futures)}
    ahead._balance(waited=waited)
    return ahead.share


def test_the_worker_is_given_less_when_waited_for_and_more_when_files_ahead() -> None:
    full, rows, parse = recall.read_ahead.FULL, recall.read_ahead.ROWS, recall.read_ahead.PARSE
    assert _balanced(full, waited=True, done_ahead=0) == rows
    assert _balanced(parse, waited=True, done_ahead=0) == parse
    assert _balanced(parse, waited=False, done_ahead=2) == rows
    assert _balanced(full, waited=False, done_ahead=3) == full
    assert _balanced(rows, waited=False, done_ahead=1) == rows  # neither waiting nor ahead: as it was
    assert _balanced(full, waited=True, done_ahead=0, taken=0) == full  # the first file: the worker starts
