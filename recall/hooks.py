"""What agents' hooks run: capture the session that just ended, hand the next one its brief.

A hook runs inside the agent's own lifecycle, so it must never break or slow it: these functions
never raise, call the library API (``recall.Memory``) without embedding (vectors are left pending for ``recall embed`` or the
next search), and record every outcome, good or bad, as one line of the hook log that
``recall doctor`` reads. The payload is what the agent sends, parsed once here:

- Claude Code (``SessionEnd``, ``PreCompact``; stdin): ``session_id``, ``transcript_path``, ``cwd``,
  ``hook_event_name`` and event fields (``reason``, ``trigger``).
- Cursor (``stop``; stdin): ``conversation_id``, ``workspace_roots``, ``status``; newer versions also
  ``transcript_path``. Without one, the conversation's agent transcript is looked up by id.
- Claude Code and Codex ``SessionStart`` and Cursor ``sessionStart`` (stdin) run ``recall context
  --hook``: the project comes from ``cwd`` (Codex sends Claude Code's fields and reads the same output),
  or Cursor's first workspace root (else ``CURSOR_PROJECT_DIR``), and the brief goes back in each
  host's own JSON shape.
- Codex (``notify``; one JSON argument): ``type: agent-turn-complete``, ``thread-id``, ``cwd``.
  The thread id names the rollout file (``rollout-<time>-<thread id>.jsonl``).
- Gemini CLI (``SessionEnd``; stdin): Claude Code's fields. Gemini does not wait for the hook, so it
  runs with ``--detach``: the payload is handed to a process of its own (``detach_dump_hook``).
- OpenCode's plugin (``session.idle``) and Pi's extension (``session_shutdown``) start the hook
  detached themselves, with the payload as its argument: ``session_id`` and ``cwd``, plus Pi's
  session file as ``transcript_path``. OpenCode keeps no file per session; the dump reads the
  session by id.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from recall import hooklog
from recall.errors import InvalidInput, NotFound
from recall.sources import READ_HOSTS

DEFAULT_BRIEF_TOKENS = 1200
MAX_INPUT_CHARS = 1_000_000  # hook payloads are a few hundred bytes; never buffer a runaway stream
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True, slots=True)
class HookEvent:
    host: str
    event: str
    session_id: str | None
    transcript: Path | None
    cwd: str | None


@dataclass(frozen=True, slots=True)
class HookRun:
    status: str  # "ok" | "skipped" | "error"
    message: str


def parse_event(raw: str, host: str | None = None) -> HookEvent:
    """Read an agent's hook payload; ``host`` is given by the configured command, else inferred."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise InvalidInput(f"the hook input is not JSON: {raw[:80]!r}") from None
    if not isinstance(data, dict):
        raise InvalidInput("the hook input is not a JSON object")
    host = host or _infer_host(data)
    if host not in READ_HOSTS:
        raise InvalidInput("cannot tell which agent sent this hook input; pass --source")
    if host == "cursor":
        cwd = _cursor_root(data)
        session_id, event = _text(data, "conversation_id"), _text(data, "hook_event_name") or "stop"
    elif host == "codex":
        cwd = _text(data, "cwd")
        session_id = _text(data, "thread-id") or _text(data, "session_id")
        event = _text(data, "type") or _text(data, "hook_event_name") or "notify"
    else:
        cwd, session_id, event = (
            _text(data, "cwd"),
            _text(data, "session_id"),
            _text(data, "hook_event_name") or "",
        )
    transcript = _text(data, "transcript_path")
    if session_id is None and transcript is None:
        raise InvalidInput(f"the {host} hook input names neither a session nor a transcript")
    return HookEvent(host, event, session_id, Path(transcript).expanduser() if transcript else None, cwd)


def run_dump_hook(db_path: str | None, raw: str, host: str | None = None) -> HookRun:
    """Import the new part of the transcript the hook names and refresh its summary; never raises."""
    started = time.monotonic()
    try:
        event = parse_event(raw, host)
        from recall.memory import Memory
        from recall.project import resolve_project

        transcript = find_transcript(event)
        if transcript is None and event.host == "cursor":
            raise NotFound(
                f"Cursor named no transcript for conversation {event.session_id} and none was found; "
                "chats kept only in Cursor's database arrive with `recall import`"
            )
        # Cursor's agent transcripts carry no working directory; the hook's workspace root names the project.
        project = resolve_project(event.cwd) if event.host == "cursor" and event.cwd else None
        with Memory(db_path, embed_on_write=False) as memory:
            result = memory.dump(
                title=None,
                source=event.host,
                project=project,
                session_id=event.session_id,
                path=transcript,
                cwd=event.cwd,
            )
        run = HookRun(
            "ok",
            f"{event.host} {event.event}: session {result.external_id} (project {result.project}), "
            f"{result.messages_added} new messages",
        )
    except NotFound as exc:
        run = HookRun("skipped", str(exc))
    except Exception as exc:  # noqa: BLE001 - a hook must never fail its agent; the log says what went wrong
        run = HookRun("error", f"{type(exc).__name__}: {exc}")
    hooklog.write("dump", run.status, run.message, _millis(started))
    return run


def detach_dump_hook(db_path: str | None, raw: str, host: str | None) -> HookRun:
    """Hand the payload to ``recall dump --from-hook`` in a process of its own and return at once.

    For hosts that do not wait for their hook (Gemini CLI's ``SessionEnd``): the host may exit, and
    take the hook's process group with it, before an import finishes. The payload is checked here
    and only the fields the dump reads are passed on, as one argument. Never raises; a payload that
    cannot be read is logged here, everything after that by the background dump.
    """
    started = time.monotonic()
    try:
        event = parse_event(raw, host)
        payload = json.dumps(
            {
                "session_id": event.session_id,
                "transcript_path": str(event.transcript) if event.transcript else None,
                "cwd": event.cwd,
                "hook_event_name": event.event,
            }
        )
        database = ["--db", db_path] if db_path else []
        argv = [
            sys.executable,
            "-m",
            "recall",
            *database,
            "dump",
            "--from-hook",
            "--source",
            event.host,
            payload,
        ]
        flags = getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
        subprocess.Popen(  # this interpreter running recall; the payload is one argument
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=os.name != "nt",
            creationflags=flags,
        )
        return HookRun("ok", f"{event.host} {event.event}: handed to a background import")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail its agent; the log says what went wrong
        run = HookRun("error", f"{type(exc).__name__}: {exc}")
        hooklog.write("dump", run.status, run.message, _millis(started))
        return run


def run_context_hook(db_path: str | None, raw: str, *, project: str | None, max_tokens: int) -> str:
    """The session-start output that injects the brief (JSON), or "" when there is none; never raises.

    Claude Code and Codex read ``hookSpecificOutput.additionalContext``; Cursor reads ``additional_context``
    and takes anything on stdout that is not one JSON object as an error, so it gets that or nothing.
    """
    started = time.monotonic()
    try:
        data: Any = json.loads(raw) if raw.strip() else {}
        if not isinstance(data, dict):
            raise InvalidInput("the hook input is not a JSON object")
        from recall.brief import estimate_tokens
        from recall.memory import Memory
        from recall.project import resolve_project

        cursor = _infer_host(data) == "cursor" or data.get("hook_event_name") == "sessionStart"
        name = project or resolve_project(_context_folder(data, cursor=cursor))
        with Memory(db_path, embed_on_write=False) as memory:
            brief = memory.session_brief(name, max_tokens=max_tokens)
        tokens = estimate_tokens(brief) if brief else 0
    except Exception as exc:  # noqa: BLE001 - the session starts without a brief rather than not at all
        hooklog.write("context", "error", f"{type(exc).__name__}: {exc}", _millis(started))
        return ""
    host = "cursor" if cursor else _start_host(data)
    hooklog.write("context", "ok", f"{host} project {name}: brief of {tokens} tokens", _millis(started))
    if not brief.strip():
        return ""
    if cursor:
        return json.dumps({"additional_context": brief}, ensure_ascii=False)
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": brief}}
    return json.dumps(output, ensure_ascii=False)


def _context_folder(data: dict[str, Any], *, cursor: bool) -> str:
    """The folder that names the project: Cursor's first workspace root, else Claude's ``cwd``."""
    if cursor:
        return _cursor_root(data) or os.environ.get("CURSOR_PROJECT_DIR", "").strip() or os.getcwd()
    return _text(data, "cwd") or os.getcwd()


def _cursor_root(data: dict[str, Any]) -> str | None:
    """Cursor names the project by its first workspace root (a multi-root window has several)."""
    roots = data.get("workspace_roots")
    first = roots[0] if isinstance(roots, list) and roots else None
    return first if isinstance(first, str) and first.strip() else None


def find_transcript(event: HookEvent) -> Path | None:
    """The file to import: the one the payload names, else the host's file for the session id."""
    if event.transcript is not None and event.transcript.is_file():
        return event.transcript
    if event.session_id is None or not _SAFE_ID.match(event.session_id):
        return None
    from adapters import get_adapter

    roots = get_adapter(event.host).default_roots()
    if event.host == "codex":
        patterns = [f"**/rollout-*{event.session_id}.jsonl", f"**/rollout-*{event.session_id}.jsonl.zst"]
    elif event.host == "pi":
        patterns = [f"**/*_{event.session_id}.jsonl"]
    elif event.host == "gemini":
        short = event.session_id[:8]
        patterns = [f"*/chats/session-*-{short}.jsonl", f"*/chats/session-*-{short}.json"]
    elif event.host == "cursor":
        base = "projects/*/agent-transcripts"
        sid = event.session_id
        patterns = [
            f"{base}/{sid}/{sid}.jsonl",
            f"{base}/{sid}.jsonl",
            f"{base}/{sid}/{sid}.txt",
            f"{base}/{sid}.txt",
        ]
    else:
        return None  # Claude Code names its transcript; OpenCode has none (dump_session reads it by id)
    for pattern in patterns:
        for root in roots:
            found = sorted(Path(root).glob(pattern))
            if found:
                return found[0]
    return None


def _infer_host(data: dict[str, Any]) -> str | None:
    if "thread-id" in data or data.get("type") == "agent-turn-complete":
        return "codex"
    if "conversation_id" in data or "workspace_roots" in data:
        return "cursor"
    if "transcript_path" in data or "session_id" in data:
        return "claude"
    return None


def _start_host(data: dict[str, Any]) -> str:
    """Who sent a Claude-shaped SessionStart (for the log): Codex's transcript is a rollout file, or null."""
    transcript = data.get("transcript_path", "")
    codex = transcript is None or (
        isinstance(transcript, str) and Path(transcript).name.startswith("rollout-")
    )
    return "codex" if codex else "claude"


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _millis(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def hook_input(argument: str | None, stream: TextIO) -> str:
    """The payload: Codex passes it as an argument, the others on stdin (never waited for on a terminal)."""
    if argument is not None:
        return argument
    try:
        return "" if stream.isatty() else stream.read(MAX_INPUT_CHARS)
    except (OSError, ValueError):
        return ""
