"""Reading the next sources in a worker process while this one writes (adr/0033).

An import of many files spends about a third of its time reading and parsing them and scrubbing
their messages (``clean_row``), work that needs no lock and no write. A worker process does that for
the next files while the importing process writes, connects and extracts the current one. The
worker hands back the transcripts and, for the messages the store does not hold as they are, their
cleaned rows (``recall.store.transcripts.preclean``), and for a session new to the store what its
messages touched, what extraction finds in it and its summary (recall.store.ahead, adr/0045). The
importing process still plans, re-checks inside the write transaction and writes, so what is
stored is what an in-process read stores. A big source is read in parts (``read_part``).

The worker is started with the ``forkserver`` (else ``spawn``) context, never ``fork``: the importing
process holds SQLite connections and may hold threads. Whatever goes wrong in the worker (a reader
bug, a crash, a pickling error) makes ``take`` return None for that file, and the caller reads it
in-process, so no file is lost; after a crash no more files are sent to it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from recall.heap import roomy_for_good
from recall.transcript import ParseReport, Transcript

if TYPE_CHECKING:
    from adapters.base import HostAdapter, ReadOptions
    from recall.store.transcripts import Ready

log = logging.getLogger(__name__)

MIN_FILES = 6  # fewer files to read are read in-process: starting a worker costs ~0.3 s
# Files read ahead at most, and their bytes on disk (the file taken next is sent whatever its size):
# enough to ride out the worker's turns on a shared CPU, few enough to bound what parsed files hold.
AHEAD = 8
AHEAD_BYTES = 32 * 1024 * 1024
# A source this big is read in parts of about ``PART_MESSAGES`` messages (whole transcripts), so the
# importing process writes the first parts while the worker reads the next: one OpenCode database
# holds every session, and read whole it left the worker nothing to overlap (adr/0045).
PART_BYTES = 4 * 1024 * 1024
PART_MESSAGES = 2000
# How much of the importing process's work the worker does on a file (adr/0046): only read it; also
# clean its rows; also read its new sessions for the connect, extraction and summary stages. Each
# file goes with the share in force when it is sent, lowered when the importing process had to wait
# for the worker and raised when the worker is files ahead, so neither process idles while the
# other works, whatever the format costs to read.
PARSE, ROWS, FULL = 0, 1, 2
SHARE_NAMES = ("parse", "rows", "full")
FIRST_SHARE = FULL
SPARE_CORE = 0.75  # idle cores the worker needs (``has_spare_core``)
IDLE_WINDOW_S = 0.05


@dataclass(slots=True)
class ReadSource:
    """One source as the worker read it: its signature taken before reading, its key in
    ``source_files``, what it held, and what was made ahead for each transcript (same order)."""

    signature: tuple[int, int]
    key: str
    transcripts: list[Transcript]
    ready: list[Ready]
    report: ParseReport
    cpu_seconds: float = 0.0  # what reading it cost the worker, for the import's report
    last: bool = True  # False for a part a later one follows (``read_part``)
    share: int = FULL  # what the worker did (``PARSE``, ``ROWS``, ``FULL``)


Reader = Callable[[str, Path, "ReadOptions", str, int], ReadSource]

_DATABASE: dict[str, sqlite3.Connection] = {}  # the worker's read-only connection, per database


def read_source(host: str, path: Path, options: ReadOptions, database: str, share: int = FULL) -> ReadSource:
    """In the worker: read one source and do its ``share`` of what storing it takes."""
    from adapters import get_adapter
    from recall.ingest import source_key, source_signature

    started = time.process_time()
    adapter = get_adapter(host)
    signature = source_signature(adapter, path)
    report = ParseReport()
    transcripts = list(adapter.read(path, options, report))
    ready = _made_ahead(transcripts, database, share)
    cpu = time.process_time() - started
    return ReadSource(signature, source_key(path), transcripts, ready, report, cpu, share=share)


@dataclass(slots=True)
class _Stream:
    """A source the worker reads in parts: its transcripts still to come, and the next part's number."""

    signature: tuple[int, int]
    key: str
    transcripts: Iterator[Transcript]
    report: ParseReport
    part: int = 0


_STREAMS: dict[tuple[str, str], _Stream | None] = {}  # None: read to its end


def read_part(
    host: str,
    path: Path,
    options: ReadOptions,
    database: str,
    part: int,
    size: int = PART_MESSAGES,
    share: int = FULL,
) -> ReadSource:
    """In the worker: part ``part`` of a source read in parts, its next transcripts up to about
    ``size`` messages. Parts are asked for in order from the one worker process, which keeps
    the source's reader open between them; a part asked for past the end comes back empty and last."""
    from adapters import get_adapter
    from recall.ingest import source_key, source_signature

    started = time.process_time()
    name = (host, str(path))
    if part == 0:
        adapter = get_adapter(host)
        report = ParseReport()
        signature = source_signature(adapter, path)
        _STREAMS[name] = _Stream(
            signature, source_key(path), iter(adapter.read(path, options, report)), report
        )
    stream = _STREAMS.get(name)
    if stream is None:
        if name in _STREAMS:
            return ReadSource((0, 0), "", [], [], ParseReport())
        raise RuntimeError(f"part {part} of {path} asked for before its first part")
    if stream.part != part:
        raise RuntimeError(f"part {part} of {path} asked for out of order (expected {stream.part})")
    stream.part += 1
    transcripts: list[Transcript] = []
    messages = 0
    for transcript in stream.transcripts:
        transcripts.append(transcript)
        messages += len(transcript.messages)
        if messages >= size:
            break
    else:
        _STREAMS[name] = None
    ready = _made_ahead(transcripts, database, share)
    last = _STREAMS[name] is None
    report = stream.report if last else ParseReport()
    cpu = time.process_time() - started
    return ReadSource(stream.signature, stream.key, transcripts, ready, report, cpu, last=last, share=share)


def _made_ahead(transcripts: list[Transcript], database: str, share: int = FULL) -> list[Ready]:
    """For each transcript, its rows cleaned ahead (from ``ROWS``) and, for a session new to the
    store, what the connect, extraction and summary stages would read in it (``FULL``:
    ``ahead_of_new_session``). What is not made here the importing process makes itself."""
    from recall.extract.stage import analyse
    from recall.store.ahead import ahead_of_new_session
    from recall.store.transcripts import Ready, preclean, stored_hashes

    if share == PARSE:
        return [Ready() for _ in transcripts]
    conn = _read_only(database)
    ready: list[Ready] = []
    for transcript in transcripts:
        try:
            stored = stored_hashes(conn, transcript) if conn is not None else {}
        except sqlite3.Error:  # busy or damaged: clean everything, the plan decides
            stored = {}
        made = preclean(transcript, stored)
        if share == FULL and conn is not None and not stored:
            try:
                ahead_of_new_session(conn, transcript, made, analyse)
            except sqlite3.Error:  # busy or damaged: the importing process reads the session itself
                pass
        ready.append(made)
    return ready


def _read_only(database: str) -> sqlite3.Connection | None:
    """A read-only connection to the store (never a writer: only the importing process writes)."""
    if database not in _DATABASE:
        try:
            conn = sqlite3.connect(Path(database).as_uri() + "?mode=ro", uri=True, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.row_factory = sqlite3.Row
        except sqlite3.Error:
            return None
        _DATABASE[database] = conn
    return _DATABASE[database]


class ReadAhead:
    """A worker reading ``sources`` in order, at most ``AHEAD`` files or parts (``AHEAD_BYTES``)
    before the one taken. A source of ``PART_BYTES`` or more is read in parts (``read_part``)."""

    def __init__(
        self,
        sources: Sequence[tuple[HostAdapter, Path]],
        options: ReadOptions,
        database: Path,
        reader: Reader | None = None,
    ) -> None:
        # (adapter, path, the part to ask for next or None for the whole file, bytes it counts for):
        # each file's size is read once, here.
        self._waiting: deque[tuple[HostAdapter, Path, int | None, int]] = deque()
        for adapter, path in sources:
            size = _size(path)
            parted = size >= PART_BYTES
            self._waiting.append((adapter, path, 0 if parted else None, PART_BYTES if parted else size))
        self._parted = {(adapter.name, path) for adapter, path, part, _ in self._waiting if part is not None}
        self._options = options
        self._database = str(database)
        self._reader = reader or read_source
        self._part_reader = read_part
        self._futures: dict[tuple[str, Path], deque[tuple[int, Future[ReadSource]]]] = {}
        self.share = FIRST_SHARE  # for the files sent next (``take`` moves it)
        self._taken = 0
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=1, mp_context=_context(), initializer=roomy_for_good
        )
        self._fill()

    def take(self, adapter: HostAdapter, path: Path) -> ReadSource | None:
        """What the worker read of ``path`` (or its next part); None when it was not sent or the
        worker failed on it."""
        sent = self._futures.get((adapter.name, path))
        if not sent:
            return None
        future = sent.popleft()[1]
        if not sent:
            del self._futures[adapter.name, path]
        self._balance(waited=not future.done())
        try:
            result = future.result()
        except BrokenProcessPool:
            log.warning("the read-ahead worker stopped; reading the remaining files in this process")
            self.close()
            return None
        except Exception:  # a reader bug, a pickling error: the caller reads the file itself
            log.warning("read-ahead of %s failed; reading it in this process", path, exc_info=True)
            result = None
        if (result is None or result.last) and (adapter.name, path) in self._parted:
            self._forget_parts(adapter, path)
        self._fill()
        return result

    def _balance(self, *, waited: bool) -> None:
        """Give the worker less of the work when this process had to wait for it, more when it is
        two files or more ahead. The first file taken is waited for while the worker starts."""
        self._taken += 1
        if waited and self._taken > 1:
            self.share = max(PARSE, self.share - 1)
        elif not waited and sum(f.done() for sent in self._futures.values() for _, f in sent) >= 2:
            self.share = min(FULL, self.share + 1)

    def _forget_parts(self, adapter: HostAdapter, path: Path) -> None:
        """A source read to its end (or failed): no more of its parts are asked for or waited on."""
        self._parted.discard((adapter.name, path))
        self._waiting = deque(entry for entry in self._waiting if entry[:2] != (adapter, path))
        for _, future in self._futures.pop((adapter.name, path), ()):
            future.cancel()

    def _fill(self) -> None:
        while self._pool is not None and self._waiting and self._in_flight() < AHEAD:
            adapter, path, part, size = self._waiting[0]
            if self._futures and self._bytes() + size > AHEAD_BYTES:
                return
            self._waiting.popleft()
            try:
                if part is None:
                    future = self._pool.submit(
                        self._reader, adapter.name, path, self._options, self._database, self.share
                    )
                else:
                    future = self._pool.submit(
                        self._part_reader,
                        adapter.name,
                        path,
                        self._options,
                        self._database,
                        part,
                        PART_MESSAGES,
                        self.share,
                    )
                    self._waiting.appendleft(
                        (adapter, path, part + 1, size)
                    )  # until a part says it is the last
            except (BrokenProcessPool, RuntimeError):
                self.close()
                return
            self._futures.setdefault((adapter.name, path), deque()).append((size, future))

    def _in_flight(self) -> int:
        return sum(len(sent) for sent in self._futures.values())

    def _bytes(self) -> int:
        return sum(size for sent in self._futures.values() for size, _ in sent)

    def close(self) -> None:
        """Stop the worker; files not taken yet are read in-process by the caller."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._futures.clear()
        self._waiting.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def read_in_parts(path: Path) -> bool:
    """Whether the worker reads this source in parts (it is ``PART_BYTES`` or bigger)."""
    return _size(path) >= PART_BYTES


def has_spare_core() -> bool:
    """Whether a core sits idle for the worker: ``SPARE_CORE`` of one, idle now.

    A busy machine gives the worker no core of its own: Linux shares CPU between sessions
    (autogroup), so the worker and the importer split one share, and pickling is pure cost. On
    the shared 2-core bench machine at load 12-14 the worker made a Claude import slower (28.2 s
    against 22.6 s for 20,000 messages).

    Idle time is read from ``/proc/stat`` over ``IDLE_WINDOW_S``, where there is one. The load
    average it replaced is a mean over a minute: after a busy minute (a test run, a build) it
    still called an idle machine busy, and the import ran in one process for no reason. Elsewhere
    (macOS) the load average decides, below the cores less one; Windows has neither.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return False
    idle = idle_now()
    if idle is not None:
        return idle >= SPARE_CORE
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average
        return True
    return load <= cores - 1


def idle_now(window: float = IDLE_WINDOW_S) -> float | None:
    """How many cores were idle over the next ``window`` seconds; None without ``/proc/stat``."""
    before = _cpu_times()
    if before is None:
        return None
    time.sleep(window)
    after = _cpu_times()
    return None if after is None else idle_cores(before, after, os.cpu_count() or 1)


def idle_cores(before: Sequence[int], after: Sequence[int], cores: int) -> float:
    """Idle cores between two readings of ``/proc/stat``'s ``cpu`` line (user, nice, system, idle,
    iowait, irq, softirq, steal jiffies): time waiting for a disk counts as idle."""
    spent = [later - earlier for earlier, later in zip(before, after, strict=True)]
    total = sum(spent)
    return float(cores) if total <= 0 else cores * (spent[3] + spent[4]) / total


def _cpu_times() -> list[int] | None:
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return [int(value) for value in fields[1:9]]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _context() -> multiprocessing.context.BaseContext:
    """``forkserver`` where the platform has it, else ``spawn``: never ``fork`` (see the module doc)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


def eligible(sources: Sequence[tuple[HostAdapter, Path]]) -> list[tuple[HostAdapter, Path]]:
    """The sources a worker can read: those of the registered adapters (it builds its own by name)."""
    from adapters import HOSTS, get_adapter

    return [(a, p) for a, p in sources if a.name in HOSTS and get_adapter(a.name) is a]
