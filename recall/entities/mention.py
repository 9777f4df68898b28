"""The words of connections: entity types, the relations that link them, and one mention."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from recall.pickled import pickled_as_call


class EntityType(StrEnum):
    FILE = "file"  # a path relative to the project root (or ~/..., or absolute outside it)
    SYMBOL = "symbol"  # a function, class, module or type name defined in an edit
    PACKAGE = "package"  # a dependency installed by a command or imported in an edit
    COMMAND = "command"  # a shell command's stable part: `pytest`, `git commit`, `npm run build`
    ERROR = "error"  # an exception class and message shape, or a command's failing exit code
    HOST = "host"  # a host name from a URL
    URL = "url"  # a URL without its query and fragment


class Relation(StrEnum):
    """How a session, message or record touched an entity."""

    EDITED = "edited"
    READ = "read"
    RAN = "ran"
    FAILED_ON = "failed_on"
    INSTALLED = "installed"
    IMPORTED = "imported"
    MENTIONS = "mentions"


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Mention:
    """One entity a message or record touched, and how.

    ``detail`` is what the relation needs beside the name (a command's full text, the line an error
    was read from); ``via`` is the entity it happened within (the file a symbol was defined in, the
    command an error came from).
    """

    type: EntityType
    name: str
    relation: Relation
    detail: str | None = None
    via: tuple[EntityType, str] | None = None


def words(text: str) -> frozenset[str]:
    """The words of ``text``: the long word lists of the readers read best as one string."""
    return frozenset(text.split())


def lookup_key(type_: str, name: str) -> str:
    """The lower-cased word a lookup of an entity starts from: a file's base name, a command's
    program, an error's class; the whole name for the other types."""
    if type_ == EntityType.FILE:
        return name.rsplit("/", 1)[-1].lower()
    if type_ == EntityType.COMMAND:
        return name.split(" ", 1)[0].lower()
    if type_ == EntityType.ERROR:
        return name.split(":", 1)[0].strip().lower()
    return name.lower()


def query_keys(text: str) -> set[str]:
    """The keys a lookup of ``text`` tries: the whole of it, its base name, its first word, its class."""
    text = text.strip().rstrip("/").removesuffix("()")
    parts = (text, text.rsplit("/", 1)[-1], text.split(" ", 1)[0], text.split(":", 1)[0].strip())
    return {part.lower() for part in parts if part}
