"""`recall import --watch`: keep importing as transcripts grow, for agents without a usable hook.

Idle cost is what matters for a process left running all day, so a quiet poll only ``stat``s the
files already known: no file is opened until its size or modification time changes. While nothing
changes the pause doubles up to ``max_interval``; any change brings it back to ``interval``. New
files are found by a full discovery every ``rescan_every`` seconds (discovery walks folders and may
open Cursor's databases, so it is kept off the fast path). A file counts as changed when it differs
from what the store recorded at its last import, so lines written before watching started are not
missed; changed files go through the ordinary importer, which writes only the messages it does not
hold yet.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from recall.errors import RecallError
from recall.ingest import ImportSummary, collect_sources, run_import, source_key, source_signature

if TYPE_CHECKING:
    from adapters.base import HostAdapter, ReadOptions
    from recall.store import Store

OnImport = Callable[[list[Path], ImportSummary], None]
Stamp = tuple[int, int] | None  # (size, mtime_ns); None for a file never imported, or vanished


def watch(
    store: Store,
    adapters: Sequence[HostAdapter],
    *,
    paths: Sequence[Path] | None = None,
    project: str | None = None,
    options: ReadOptions | None = None,
    interval: float = 2.0,
    max_interval: float = 30.0,
    rescan_every: float = 60.0,
    on_import: OnImport | None = None,
    stop: threading.Event | None = None,
    max_iterations: int | None = None,
) -> int:
    """Poll until ``stop`` is set (or ``max_iterations`` polls); returns how many imports ran."""
    stop = stop or threading.Event()
    by_name = {adapter.name: adapter for adapter in adapters}
    known = {key: _imported(store, key) for key in _sources(adapters, paths)}
    last_scan = time.monotonic()
    delay = interval
    polls = imports = 0
    while max_iterations is None or polls < max_iterations:
        if stop.wait(delay):
            break
        polls += 1
        if time.monotonic() - last_scan >= rescan_every:
            for key in _sources(adapters, paths):
                if key not in known:
                    known[key] = _imported(store, key)
            last_scan = time.monotonic()
        changed: dict[str, list[Path]] = {}
        for key, seen in known.items():
            now = _stamp(by_name[key[0]], key[1])
            if now != seen and now is not None:
                changed.setdefault(key[0], []).append(key[1])
            known[key] = now
        if not changed:
            delay = min(delay * 2, max_interval)
            continue
        delay = interval
        for adapter in adapters:
            files = changed.get(adapter.name)
            if files:
                try:
                    summary = run_import(store, [adapter], paths=files, project=project, options=options)
                except RecallError as exc:  # a locked store or a vanished file: try again next change
                    summary = ImportSummary(files_seen=len(files), files_failed=len(files), errors=[str(exc)])
                imports += 1
                if on_import:
                    on_import(files, summary)
    return imports


def _sources(adapters: Sequence[HostAdapter], paths: Sequence[Path] | None) -> list[tuple[str, Path]]:
    return [(adapter.name, path) for adapter, path in collect_sources(adapters, paths, None)]


def _imported(store: Store, key: tuple[str, Path]) -> Stamp:
    """(size, mtime_ns) as of the last import of this file, the same key ``run_import`` records."""
    return store.known_source(key[0], source_key(key[1]))


def _stamp(adapter: HostAdapter, path: Path) -> Stamp:
    """The signature the importer records, so a file counts as changed exactly when an import would
    read it (a database's ``-wal``, every file of a spread source)."""
    try:
        return source_signature(adapter, path)
    except OSError:
        return None
