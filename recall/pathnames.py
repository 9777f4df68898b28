"""File system names as text: what SQLite can store and a terminal can print.

On POSIX a name is bytes; Python hands bytes that are not UTF-8 over as surrogate escapes
(PEP 383), which SQLite refuses (``UnicodeEncodeError``) and a strict stdout cannot print. Such a
name is written with each undecodable byte as ``\\xNN``: the same text every time, so it serves as
a key (``source_files.path``, a session id taken from a file name), and a valid UTF-8 name is left
exactly as it was.
"""

from __future__ import annotations

import os


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8, i.e. holds no surrogate escape."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """``text`` with each surrogate-escaped byte as ``\\xNN`` (any other lone surrogate as ``\\udXXX``)."""
    if is_utf8(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def path_text(path: str | os.PathLike[str]) -> str:
    """A path as storable, printable text (see ``printable``)."""
    return printable(os.fspath(path))
