"""The health page's report, made in the background: `recall doctor`, the embedding backlog, redactions.

On a store of 100,000 messages a full check takes about a second (doctor's integrity check reads
the whole file; the backlog is counted over every message), far more than a page may take. So the
report is made on a thread of its own, over a ``Memory`` of its own on the same file (its reads never
wait behind the pages'), when the server starts and whenever the page is asked for and the last
report is older than ``MAX_AGE``. The page shows the last report and when it was made; while a newer
one is on its way it reloads itself (a meta refresh: no script).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from recall.errors import RecallError

if TYPE_CHECKING:
    from recall.doctor import Section
    from recall.redactions import Redactions
    from recall.results import Stats

log = logging.getLogger(__name__)

MAX_AGE = 60.0  # seconds a report is shown before the page asks for a new one
FIRST_WAIT = 60.0  # with no report yet, how long a page waits for the first


@dataclass(frozen=True, slots=True)
class HealthReport:
    sections: Sequence[Section]
    stats: Stats | None  # None when the store could not be read (the sections say why)
    redactions: Redactions | None
    error: str | None
    checked_at: datetime
    seconds: float


class HealthCheck:
    """The last report, and at most one check running at a time."""

    def __init__(self, db: Path, cwd: Path) -> None:
        self._db = db
        self._cwd = cwd
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._last: HealthReport | None = None
        self._made = 0.0  # time.monotonic() when the last report was made
        self._running = False

    def start(self) -> None:
        """Begin a check unless one is running."""
        with self._lock:
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._check, name="recall-ui-health", daemon=True).start()

    def report(self) -> tuple[HealthReport | None, bool]:
        """The last report (waiting for the first), and whether a newer one is being made."""
        with self._lock:
            stale = self._last is None or time.monotonic() - self._made > MAX_AGE
        if stale:
            self.start()
        with self._done:
            if self._last is None:
                self._done.wait_for(lambda: self._last is not None, timeout=FIRST_WAIT)
            return self._last, self._running

    def _check(self) -> None:
        from recall.memory import Memory

        started = time.monotonic()
        stats = redactions = error = None
        try:
            with Memory(self._db) as memory:
                sections = memory.doctor(self._cwd)
                try:
                    stats, redactions = memory.stats(), memory.redactions()
                except RecallError as exc:
                    error = str(exc)
        except Exception as exc:  # the page must say the check failed, not wait for it forever
            log.exception("recall ui: the health check failed")
            sections, error = [], f"the check failed ({type(exc).__name__}: {exc}); `recall doctor` says more"
        report = HealthReport(
            sections, stats, redactions, error, datetime.now(UTC), round(time.monotonic() - started, 2)
        )
        with self._done:
            self._last, self._made, self._running = report, time.monotonic(), False
            self._done.notify_all()
