"""Reading the next sources in a worker process while this one writes (adr/0033).

An import of many files spends about a third of its time reading and parsing them and scrubbing
their messages (``clean_row``), work that needs no lock and no write. A worker process does that for
the next files while the importing process writes, connects and extracts the current one. The
worker hands back the transcripts and, for the messages the store does not hold as they are, their
cleaned rows (``recall.store.transcripts.preclean``), and for a session new to the store what its
messages touched and what extraction finds in it (``ahead_of_new_session``, adr/0045); the importing process still plans, re-checks
inside the write transaction and writes, so what is stored is what an in-process read stores.

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
from collections.abc import Callable, Sequence
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


Reader = Callable[[str, Path, "ReadOptions", str], ReadSource]

_DATABASE: dict[str, sqlite3.Connection] = {}  # the worker's read-only connection, per database


def read_source(host: str, path: Path, options: ReadOptions, database: str) -> ReadSource:
    """In the worker: read one source and clean the rows of what the store does not hold yet."""
    from adapters import get_adapter
    from recall.extract.stage import analyse
    from recall.ingest import source_key, source_signature
    from recall.store.transcripts import ahead_of_new_session, preclean, stored_hashes

    started = time.process_time()
    adapter = get_adapter(host)
    signature = source_signature(adapter, path)
    report = ParseReport()
    transcripts = list(adapter.read(path, options, report))
    conn = _read_only(database)
    ready: list[Ready] = []
    for transcript in transcripts:
        try:
            stored = stored_hashes(conn, transcript) if conn is not None else {}
        except sqlite3.Error:  # busy or damaged: clean everything, the plan decides
            stored = {}
        made = preclean(transcript, stored)
        if conn is not None and not stored:
            try:
                ahead_of_new_session(conn, transcript, made, analyse)
            except sqlite3.Error:  # busy or damaged: the importing process reads the session itself
                pass
        ready.append(made)
    return ReadSource(signature, source_key(path), transcripts, ready, report, time.process_time() - started)


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
    """A worker reading ``sources`` in order, at most ``AHEAD`` files (``AHEAD_BYTES``) before the one
    taken."""

    def __init__(
        self,
        sources: Sequence[tuple[HostAdapter, Path]],
        options: ReadOptions,
        database: Path,
        reader: Reader | None = None,
    ) -> None:
        self._waiting = deque(sources)
        self._options = options
        self._database = str(database)
        self._reader = reader or read_source
        self._futures: dict[tuple[str, Path], tuple[int, Future[ReadSource]]] = {}
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=1, mp_context=_context(), initializer=roomy_for_good
        )
        self._fill()

    def take(self, adapter: HostAdapter, path: Path) -> ReadSource | None:
        """What the worker read of ``path``; None when it was not sent or the worker failed on it."""
        sent = self._futures.pop((adapter.name, path), None)
        if sent is None:
            return None
        try:
            result = sent[1].result()
        except BrokenProcessPool:
            log.warning("the read-ahead worker stopped; reading the remaining files in this process")
            self.close()
            return None
        except Exception:  # a reader bug, a pickling error: the caller reads the file itself
            log.warning("read-ahead of %s failed; reading it in this process", path, exc_info=True)
            result = None
        self._fill()
        return result

    def _fill(self) -> None:
        while self._pool is not None and self._waiting and len(self._futures) < AHEAD:
            adapter, path = self._waiting[0]
            size = _size(path)
            if self._futures and sum(sent[0] for sent in self._futures.values()) + size > AHEAD_BYTES:
                return
            self._waiting.popleft()
            try:
                future = self._pool.submit(self._reader, adapter.name, path, self._options, self._database)
            except (BrokenProcessPool, RuntimeError):
                self.close()
                return
            self._futures[adapter.name, path] = (size, future)

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


def has_spare_core() -> bool:
    """Whether a core sits idle for the worker (load average below the cores less one).

    A busy machine gives the worker no core of its own: Linux shares CPU between sessions
    (autogroup), so the worker and the importer split one share, and pickling is pure cost. On
    the shared 2-core bench machine at load 12-14 the worker made a Claude import slower (28.2 s
    against 22.6 s for 20,000 messages).
    """
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average
        return cores > 1
    return cores > 1 and load <= cores - 1


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
