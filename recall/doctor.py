"""`recall doctor`: is memory actually being kept? Each check says what it found in plain words.

The worst failure of a memory tool is the silent one: hooks that never fire, a second database no
agent reads, transcripts the host deletes before anyone imported them. Doctor looks at every link
of the chain (database, embedding model, each agent's config and hooks, the hosts' transcript
folders, the hook log) and says what to do about each problem it finds. It reads and never writes,
except that opening an older database upgrades its schema, as every recall command does.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall import hooklog
from recall.integrity import KEYWORD_INDEX, Integrity, check_integrity

if TYPE_CHECKING:
    from recall.store import Store

HOST_LABELS = {
    "claude": "Claude Code",
    "cursor": "Cursor",
    "codex": "Codex",
    "vscode": "VS Code",
    "opencode": "OpenCode",
    "pi": "Pi",
    "gemini": "Gemini CLI",
}
CLAUDE_DEFAULT_RETENTION_DAYS = 30
GEMINI_DEFAULT_RETENTION_DAYS = 30
RETENTION_WARNING_DAYS = 7  # warn this long before the host deletes a transcript
LOG_DAYS = 7


@dataclass(frozen=True, slots=True)
class Finding:
    level: str  # "ok" | "info" | "warn" | "fail"
    text: str


@dataclass(slots=True)
class Section:
    title: str
    findings: list[Finding] = field(default_factory=list)

    def add(self, level: str, text: str) -> None:
        self.findings.append(Finding(level, text))


def diagnose(db_path: Path, cwd: Path, *, now: datetime | None = None) -> list[Section]:
    now = now or datetime.now(UTC)
    database = check_database(db_path)
    with _open_store(db_path, database) as store:
        return [
            database,
            check_embeddings(store),
            check_repair(store),
            check_agents(db_path, cwd),
            check_transcripts(store),
            check_retention(store, now),
            check_hook_log(now),
        ]


def to_dict(sections: Sequence[Section]) -> dict[str, Any]:
    return {
        "ok": not any(f.level == "fail" for s in sections for f in s.findings),
        "sections": [asdict(section) for section in sections],
    }


def check_database(path: Path) -> Section:
    from recall.migrations import latest_version

    section = Section("Database")
    if not path.exists():
        section.add("warn", f"no database yet at {path}; `recall import` creates it (so does the first hook)")
        return section
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        section.add("fail", f"{path} cannot be opened ({exc}); check its permissions or pass another --db")
        return section
    try:
        integrity = check_integrity(conn, path)
        version = _pragma(conn, "user_version")
        counts = {
            t: _count(conn, t) for t in ("sessions", "messages", "decisions", "learnings", "breadcrumbs")
        }
    finally:
        conn.close()
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    section.add("ok" if integrity.ok else "fail", f"{path} ({size / 1_048_576:.1f} MB)")
    if not integrity.ok:
        _report_damage(section, path, integrity)
        return section
    latest = latest_version()
    if version > latest:
        section.add("fail", f"schema version {version} is newer than this recall ({latest}); upgrade recall")
    elif version < latest:
        section.add(
            "info", f"schema version {version}; recall upgrades it to {latest} the next time it opens it"
        )
    else:
        section.add("ok", f"schema version {version} (current)")
    section.add("ok", "integrity check passed")
    section.add("info", ", ".join(f"{n:,} {table}" for table, n in counts.items() if n is not None))
    return section


def _report_damage(section: Section, path: Path, integrity: Integrity) -> None:
    """What is damaged, then one line on what to do."""
    if integrity.truncated:
        section.add(
            "fail", f"the file is cut short: {integrity.truncated} (an interrupted copy or a full disk)"
        )
    if integrity.unreadable:
        section.add(
            "fail", f"it cannot be read as a database ({integrity.unreadable}): not even its list of tables"
        )
    for damage in integrity.damaged:
        section.add("fail", f"damaged table: {damage.table}: {damage.detail}")
    if not (integrity.truncated or integrity.unreadable or integrity.damaged):
        section.add("fail", "integrity check found problems: " + "; ".join(integrity.problems))
    if [d.table for d in integrity.damaged] == [f"{KEYWORD_INDEX} (the keyword index)"]:
        section.add(
            "info", "only the keyword index is damaged: the records and messages themselves are intact"
        )
    section.add(
        "fail",
        f"move {path.name} aside and run `recall import` to rebuild what transcripts still hold; "
        f"`sqlite3 {path} .recover | sqlite3 recovered.db` salvages the rest (decisions, learnings, breadcrumbs)",
    )


def check_embeddings(store: Store | None) -> Section:
    from recall.errors import ModelUnavailable
    from recall.search.embedder import get_embedder, resolve_spec, verify_model_file

    section = Section("Embedding model")
    try:
        spec = resolve_spec()
        digest = verify_model_file(spec)
    except ModelUnavailable as exc:
        section.add("fail", str(exc))
        return section
    pinned = "matches the pinned hash" if spec.sha256 else "no hash pinned for this model"
    section.add("ok", f"{spec.model_id} at {spec.onnx_path}; sha256 {digest[:12]}… {pinned}")
    if store is None:
        return section
    from recall.search.semantic import embedding_stats

    try:
        stats = embedding_stats(store, get_embedder())
        embedded, pending = sum(stats["embedded"].values()), sum(stats["pending"].values())
    except (KeyError, sqlite3.Error):
        section.add("info", "embedded and pending counts are not available")
        return section
    if pending:
        section.add("info", f"{embedded:,} rows embedded, {pending:,} pending: `recall embed` catches up")
    else:
        section.add("ok", f"{embedded:,} rows embedded, none pending")
    return section


def check_repair(store: Store | None) -> Section:
    """Whether an import, dump or embed was interrupted and left work for the next import (adr/0016).

    A message and its keyword index entry are written in one transaction, and a source file is
    stamped only with its last messages, so a file cut short is simply read again. What can be left
    behind is summaries (queued: listed here) and vectors (pending: listed under the embedding
    model; `recall import` embeds them within its budget, `recall embed` all of them).
    """
    from recall.summary_queue import summaries_due

    section = Section("Repair")
    if store is None:
        return section
    due = summaries_due(store)
    if due:
        section.add(
            "warn",
            f"{due:,} sessions wait for their summary (an import or dump was interrupted): run `recall import`",
        )
    else:
        section.add("ok", "nothing left to repair: every imported session has its summary")
    return section


def check_agents(db_path: Path, cwd: Path) -> Section:
    from recall.connect import AGENTS, connections

    section = Section("Agents")
    detected = {name for name, module in AGENTS.items() if module.detected(Path.home())}
    connected = 0
    for link in connections(db_path.absolute(), cwd):
        if link.agent not in detected and not link.server_file.exists():
            continue
        where = f"{HOST_LABELS[link.agent]} ({link.scope}, {link.server_file})"
        if link.server.startswith("unreadable"):
            section.add("fail", f"{where}: {link.server}")
            continue
        if link.server == "connected":
            connected += 1
        level = (
            "ok" if link.server == "connected" else "warn" if link.server.startswith("connected") else "info"
        )
        section.add(level, f"{where}: MCP server {link.server}")
        if link.server.startswith("connected") and link.hooks_file is not None:
            hooks = ", ".join(link.hooks) if link.hooks else "none: sessions arrive only with `recall import`"
            section.add(
                "ok" if link.hooks else "info",
                f"{HOST_LABELS[link.agent]} ({link.hooks_file}): hooks {hooks}",
            )
    if not connected:
        section.add("warn", "no agent uses this database yet: run `recall connect --hooks` in a project")
    return section


def check_transcripts(store: Store | None) -> Section:
    from adapters import HOSTS, get_adapter

    section = Section("Transcripts")
    for host in HOSTS:
        label = HOST_LABELS[host]
        try:
            adapter = get_adapter(host)
            roots = [root for root in adapter.default_roots() if root.exists()]
            files = list(adapter.discover()) if roots else []
        except Exception as exc:  # noqa: BLE001 - one host's reader failing must not hide the others
            section.add("warn", f"{label}: its transcripts cannot be listed ({type(exc).__name__}: {exc})")
            continue
        if not roots:
            from adapters import where_searched

            section.add(
                "info", f"{label}: no transcript folder on this machine; looked in {where_searched(adapter)}"
            )
            continue
        folders = ", ".join(str(root) for root in roots)
        if not files:
            section.add("info", f"{label}: no transcripts yet in {folders}")
            continue
        stored, last = _host_activity(store, host)
        when = f"last stored {_ago(last)}" if last else "nothing imported yet: run `recall import`"
        section.add(
            "ok" if last else "warn",
            f"{label}: {len(files):,} files in {folders}; {stored:,} sessions, {when}",
        )
    return section


def check_retention(store: Store | None, now: datetime) -> Section:
    """Hosts that delete old transcripts: Claude Code (``cleanupPeriodDays``) and Gemini CLI
    (``general.sessionRetention``, on by default with ``maxAge`` 30d)."""
    from recall.connect.claude import config_dir
    from recall.connect.gemini import user_dir

    section = Section("Retention")
    settings = config_dir(Path.home()) / "settings.json"
    days = _cleanup_days(settings)
    if days == 0:
        section.add("warn", f"Claude Code keeps no transcripts (cleanupPeriodDays is 0 in {settings})")
    else:
        _host_retention(section, store, now, "claude", days, f"cleanupPeriodDays {days}")
    gemini = user_dir(Path.home())
    gemini_days = _gemini_retention_days(gemini / "settings.json")
    if gemini.is_dir() and gemini_days is not None:
        _host_retention(section, store, now, "gemini", gemini_days, f"sessionRetention maxAge {gemini_days}d")
    return section


def _host_retention(
    section: Section, store: Store | None, now: datetime, host: str, days: int, setting: str
) -> None:
    """Warn about transcripts the host deletes within a week that were never fully imported."""
    from adapters import get_adapter

    label = HOST_LABELS[host]
    try:
        files = list(get_adapter(host).discover())
    except Exception as exc:  # noqa: BLE001 - reported by the transcripts check too
        section.add("info", f"{label} transcripts cannot be listed ({type(exc).__name__})")
        return
    if not files:
        section.add(
            "info", f"no {label} transcripts on this machine ({label} deletes them after {days} days)"
        )
        return
    captured = _captured_times(store, host)
    changed = {path: _mtime(path) for path in files}
    missing = [
        path for path, when in changed.items() if when is not None and not _is_captured(path, when, captured)
    ]
    deadline = now - timedelta(days=days - RETENTION_WARNING_DAYS)
    at_risk = [path for path in missing if (changed[path] or deadline) < deadline]
    if at_risk:
        section.add(
            "warn",
            f"{len(at_risk)} {label} transcripts that were never fully imported will be deleted by {label} "
            f"within {RETENTION_WARNING_DAYS} days ({setting}): run `recall import --host {host}`",
        )
    elif missing:
        section.add(
            "info", f"{len(missing)} {label} transcripts are not fully imported yet; none is due for deletion"
        )
    else:
        section.add("ok", f"{label} deletes transcripts after {days} days; every one it holds is imported")


def check_hook_log(now: datetime) -> Section:
    section = Section("Hooks")
    entries = list(hooklog.read(now - timedelta(days=LOG_DAYS)))
    if not entries:
        section.add("info", f"no hook ran in the last {LOG_DAYS} days")
        return section
    for hook in ("dump", "context"):
        runs = [e for e in entries if e.hook == hook]
        if not runs:
            continue
        errors = [e for e in runs if e.status == "error"]
        slowest = max(e.millis for e in runs)
        what = "capture (dump)" if hook == "dump" else "session brief (context)"
        summary = (
            f"{what}: {len(runs)} runs in {LOG_DAYS} days, last {_ago(runs[-1].at)}, slowest {slowest} ms"
        )
        section.add("warn" if errors else "ok", summary + (f", {len(errors)} failed" if errors else ""))
        for error in errors[-3:]:
            section.add("warn", f"  {error.at:%Y-%m-%d %H:%M} {error.message}")
    return section


# -- helpers ---------------------------------------------------------------------------------------


@contextmanager
def _open_store(path: Path, database: Section) -> Iterator[Store | None]:
    """The store when the database check found it usable; None otherwise (checks then say less)."""
    if not path.exists() or any(f.level == "fail" for f in database.findings):
        yield None
        return
    from recall.errors import RecallError
    from recall.store import Store

    try:
        store = Store(path)
    except RecallError as exc:
        database.add("fail", str(exc))
        yield None
        return
    with store:
        yield store


def _count(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    except sqlite3.DatabaseError:
        return None  # damaged: the integrity findings say so


def _pragma(conn: sqlite3.Connection, name: str) -> int:
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    except sqlite3.DatabaseError:
        return 0


def _host_activity(store: Store | None, host: str) -> tuple[int, datetime | None]:
    if store is None:
        return 0, None
    with store.reading() as conn:
        count, last = conn.execute(
            "SELECT count(*), max(updated_at) FROM sessions WHERE host = ?", (host,)
        ).fetchone()
    return count, datetime.fromisoformat(last) if last else None


def _captured_times(store: Store | None, host: str) -> dict[str, datetime]:
    """Per transcript path, when recall last stored from it (a full import or a hook's dump)."""
    if store is None:
        return {}
    with store.reading() as conn:
        rows = conn.execute(
            "SELECT path, imported_at FROM source_files WHERE host = ? "
            "UNION ALL SELECT source_path, updated_at FROM sessions WHERE host = ? AND source_path IS NOT NULL",
            (host, host),
        ).fetchall()
    times: dict[str, datetime] = {}
    for path, stamp in rows:
        when = datetime.fromisoformat(stamp)
        times[path] = max(when, times.get(path, when))
    return times


def _is_captured(path: Path, modified: datetime, captured: dict[str, datetime]) -> bool:
    from recall.ingest import source_key
    from recall.pathnames import path_text

    when = captured.get(source_key(path)) or captured.get(path_text(path))
    return when is not None and when >= modified


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def _gemini_retention_days(settings: Path) -> int | None:
    """Gemini CLI's ``general.sessionRetention.maxAge`` in days (30 unless set); None when it is off."""
    try:
        general = json.loads(settings.read_text(encoding="utf-8")).get("general") or {}
        retention = general.get("sessionRetention") or {}
    except (OSError, ValueError, AttributeError):
        retention = {}
    if not isinstance(retention, dict):
        retention = {}
    if retention.get("enabled") is False:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*([hdwm])\s*", str(retention.get("maxAge", "30d")))
    if match is None:
        return GEMINI_DEFAULT_RETENTION_DAYS
    number, unit = int(match.group(1)), match.group(2)
    return max(1, {"h": number // 24, "d": number, "w": number * 7, "m": number * 30}[unit])


def _cleanup_days(settings: Path) -> int:
    try:
        value = json.loads(settings.read_text(encoding="utf-8")).get("cleanupPeriodDays")
    except (OSError, ValueError, AttributeError):
        return CLAUDE_DEFAULT_RETENTION_DAYS
    return value if isinstance(value, int) and value >= 0 else CLAUDE_DEFAULT_RETENTION_DAYS


def _ago(when: datetime) -> str:
    seconds = max(0.0, (datetime.now(UTC) - when).total_seconds())
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "just now"
