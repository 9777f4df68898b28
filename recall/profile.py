"""A project's profile as the library API returns it and as the briefs show it (adr/0027).

The profile is the one page an agent should read before anything else in a project: its stack, its
conventions, the commands that build, test and lint it, who works on what. A person writes it
(``recall profile set``, MCP ``profile_set``), so it is shown as plain lines, not quoted data. Both
briefs put it at the top, within their token budget: it takes at most ``PROFILE_SHARE`` of the
budget, so the decisions and breadcrumbs below it always keep room.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recall.store import Store

# The keys a profile is made of, in the order it is shown, with what each holds (help texts).
KNOWN_KEYS: dict[str, str] = {
    "stack": "languages, frameworks, databases, versions",
    "conventions": "how code is written here: style, layout, naming, review rules",
    "build": "the command that builds it",
    "test": "the command that runs the tests",
    "lint": "the commands that lint and type-check",
    "people": "who works on it, and on what",
    "owners": "who owns which part",
    "notes": "anything else a new session should know first",
}
PROFILE_SHARE = 0.4  # of a brief's budget, at most
LINE_CHARS = 300  # one value as a brief shows it; `recall profile show` has it whole
SHORT_CHARS = 80  # the fallback when the full line no longer fits the profile's share


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    key: str
    value: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Profile:
    """A project's profile, known keys first; ``redacted`` says what the last write scrubbed out."""

    project: str
    entries: tuple[ProfileEntry, ...]
    redacted: Mapping[str, int] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        return next((entry.value for entry in self.entries if entry.key == key), None)

    @property
    def text(self) -> str:
        if not self.entries:
            return f"no profile for {self.project} yet: recall profile set stack 'Python 3.11, SQLite'"
        return "\n".join([f"## Profile of {self.project}", *(f"{e.key}: {e.value}" for e in self.entries)])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "project": self.project,
            "profile": {entry.key: entry.value for entry in self.entries},
            "updated_at": max((entry.updated_at for entry in self.entries), default=None),
        }
        if self.redacted:
            out["redacted"] = dict(self.redacted)
        return out


def load_profile(store: Store, project: str) -> Profile:
    from recall.store.profiles import profile_rows

    with store.reading() as conn:
        rows = profile_rows(conn, project)
    return Profile(project, tuple(ProfileEntry(r["key"], r["value"], r["updated_at"]) for r in rows))


def brief_lines(profile: Profile, chars: int = LINE_CHARS) -> list[str]:
    """One line per key, each value on one line and clipped to ``chars``: the brief's form of the page."""
    lines = []
    for entry in profile.entries:
        flat = " ".join(entry.value.split())
        if len(flat) > chars:
            flat = flat[: chars - 1].rstrip() + "…"
        lines.append(f"- {entry.key}: {flat}")
    return lines
