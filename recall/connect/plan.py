"""Connect's plan: each edit is a pure function of a file's text, applied, diffed or written in one place.

A step maps the current text (None when the file is absent) to a ``Change``: the new text (None to
delete the file) and what happened in words. Because steps are pure, ``--dry-run`` shows exactly the
bytes a real run would write, and re-running a step on its own output changes nothing. Steps that
share a file are applied in order to one read of it and written once, atomically, and only if the
file did not change while we worked.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


class Refused(Exception):
    """A file recall will not edit (unparseable, or holding something of the same name that is not ours).

    Internal to connect: the runner turns it into a reported, untouched file, never an exit with a traceback.
    """


@dataclass(frozen=True, slots=True)
class Change:
    text: str | None  # the new content; None deletes the file
    action: str  # "added" | "updated" | "removed" | "unchanged" | "skipped"
    note: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    agent: str
    part: str  # "MCP server" | "hooks" | "instructions"
    path: Path
    apply: Callable[[str | None], Change]
    prune_dirs: int = 0  # empty parent folders to remove when the file is deleted (.cursor/rules, .cursor)


@dataclass(slots=True)
class StepResult:
    agent: str
    part: str
    path: Path
    action: str  # a Change action, or "refused"
    note: str = ""


@dataclass(slots=True)
class FileResult:
    path: Path
    before: str | None
    after: str | None
    steps: list[StepResult] = field(default_factory=list)
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self, name: str) -> str:
        """A unified diff of the whole file, labelled with ``name`` (a short form of the path)."""
        before = [] if self.before is None else self.before.splitlines(keepends=True)
        after = [] if self.after is None else self.after.splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            after,
            fromfile="/dev/null" if self.before is None else f"a/{name}",
            tofile="/dev/null" if self.after is None else f"b/{name}",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
        )


def run(steps: Sequence[Step], *, dry_run: bool) -> list[FileResult]:
    """Apply every step; files are handled in the order their first step appears."""
    by_path: dict[Path, list[Step]] = {}
    for step in steps:
        by_path.setdefault(step.path, []).append(step)
    return [_run_file(path, group, dry_run) for path, group in by_path.items()]


def _run_file(path: Path, steps: list[Step], dry_run: bool) -> FileResult:
    try:
        original = read_text(path)
    except Refused as exc:
        result = FileResult(path, None, None)
        result.steps = [StepResult(s.agent, s.part, path, "refused", str(exc)) for s in steps]
        return result
    result = FileResult(path, original, original)
    for step in steps:
        try:
            change = step.apply(result.after)
        except Refused as exc:
            result.steps.append(StepResult(step.agent, step.part, path, "refused", str(exc)))
            continue
        result.after = change.text
        action, note = change.action, change.note
        earlier = [
            s for s in result.steps if s.part == step.part and s.action not in ("unchanged", "refused")
        ]
        if action == "unchanged" and earlier:  # another agent's step already wrote the same thing here
            action, note = earlier[-1].action, earlier[-1].note
        result.steps.append(StepResult(step.agent, step.part, path, action, note))
    if result.changed and not dry_run:
        try:
            _write(path, original, result.after, max(s.prune_dirs for s in steps))
            result.written = True
        except (OSError, Refused) as exc:
            reason = str(exc) if isinstance(exc, Refused) else f"could not write it ({exc.strerror or exc})"
            result.steps = [StepResult(s.agent, s.part, path, "refused", reason) for s in steps]
            result.after = original
    return result


def read_text(path: Path) -> str | None:
    """The file's text exactly as stored (newlines untranslated); None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"it cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("it is not UTF-8 text") from None


def _write(path: Path, expected: str | None, text: str | None, prune_dirs: int) -> None:
    if path.is_symlink():  # dotfiles kept in a repository: edit the file, keep the link
        path = path.resolve()
    if read_text(path) != expected:
        raise Refused("it changed while recall was editing it; run the command again")
    if text is None:
        path.unlink()
        folder = path.parent
        for _ in range(prune_dirs):
            try:
                folder.rmdir()  # only succeeds when empty
            except OSError:
                break
            folder = folder.parent
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if expected is not None else None
    temporary = path.with_name(f".{path.name}.recall-{os.getpid()}.tmp")
    try:
        temporary.write_bytes(text.encode("utf-8"))
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@dataclass(slots=True)
class Connection:
    """What one agent's config files say about recall in one scope, for `recall doctor`."""

    agent: str
    scope: str  # "project" | "user"
    server_file: Path
    server: str  # "connected", "not connected", or why not
    hooks_file: Path | None = None
    hooks: list[str] = field(default_factory=list)  # events (or mechanisms) wired to recall
