"""Cheap judgements about a candidate value: is it a placeholder, a reference, or random-looking?

Context rules (``password=...``, ``Bearer ...``) see far more look-alikes than real secrets: env
references, templates, masked values, type annotations, code. These checks are character-class
tests rather than Shannon entropy because entropy on short strings cannot tell ``hunter2`` from
``getpass`` and on long ones flags every SHA; the class mix is what separates tokens from words.
They run on every candidate, so each is a handful of C-level calls.
"""

from __future__ import annotations

import re

__all__ = ["is_hex", "is_placeholder", "is_uuid", "looks_random", "machine_made", "mixed"]

# Words anywhere, and short words only at a word start: random tokens contain "tbd" or "yOur".
_PLACEHOLDER = re.compile(
    r"placeholder|example|redacted|changeme|dummy|sample|replace_?me|insert|[_-]here"
    r"|\.\.\.|\*\*\*|[<>…•]|(?<![a-z0-9])(?:your|todo|tbd|fixme|xxx)"
)
# References to a secret held elsewhere: shell and env expansion (``$X``, ``${X}``, ``$(cmd)``,
# ``%X%``, ``%(x)s``), templates (``{{x}}``, ``{x}``), YAML tags, vault/SSM/file lookups.
_REFERENCE = re.compile(
    r"%(?:\(|[a-z_]\w*%)|\{(?:\{|[a-z_][\w.]*\})|![a-z]+(?:\s|$)"
    r"|env[.:\[(]|os\.|process\.|secrets?\.|vault:|ssm:|arn:|ref\+|file:|none$|null$|nil$"
)
# ``$X`` is a variable when X is one (``$HOME``, ``$db_pass``, ``${X}``, ``$(cmd)``); a password that
# starts with ``$`` rarely continues like a variable name: ``$Up3rS3cret!``.
_VARIABLE = re.compile(r"\$(?:[{(]|(?:[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*)(?=$|[\s/:.@})\"',;-]))")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # "Bearer ACCESS_TOKEN" names a variable
_DIGIT = re.compile(r"\d")
_SYMBOL = re.compile(r"[^A-Za-z0-9._-]")
# Pieces a reader would see as words: "Token", "HTTP", "2024". Random text breaks into pieces of
# about two characters (the 99th percentile of 20-character base62 is 2.9); camelCase words, four up.
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_RUNS = re.compile(r"\d+|[A-Za-z]+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_NOT_LETTER = re.compile(r"[^A-Za-z]+")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_placeholder(value: str) -> bool:
    """True for values a human would never mistake for a live credential."""
    if len(set(value)) <= 2 or "[REDACTED:" in value:  # "xxxxxxxx", "********", our own output
        return True
    lowered = value.lower()
    if _REFERENCE.match(lowered) or _VARIABLE.match(value) or _ENV_NAME.fullmatch(value):
        return True
    if "${" in value or "{{" in value:  # a template that fills the secret in: `~${pwd.slice(n)}`
        return True
    return _PLACEHOLDER.search(lowered) is not None


def mixed(value: str) -> bool:
    """At least two of: lowercase, uppercase, digits; or any symbol besides - _ . (a word is none)."""
    classes = (value.upper() != value) + (value.lower() != value) + (_DIGIT.search(value) is not None)
    return classes >= 2 or _SYMBOL.search(value) is not None


def looks_random(value: str, min_len: int = 8) -> bool:
    """Token-like: long enough, not a plain word, not a placeholder. Long lowercase runs count too."""
    if len(value) < min_len or not (len(value) >= 24 or mixed(value)):
        return False
    return not is_placeholder(value)


def is_hex(value: str) -> bool:
    return _HEX.fullmatch(value) is not None


def is_uuid(value: str) -> bool:
    return _UUID.fullmatch(value) is not None


def machine_made(value: str) -> bool:
    """Do the letters and digits of ``value`` read as generated (a key) rather than as words?

    Mixed case: random text splits into short pieces, identifiers into words; random letters are
    about one fifth vowels, words two fifths (this catches the 5% of random letter strings whose
    pieces run long). One case plus digits: random text switches between letters and digits often
    (in base36 about every other character, rarely less than one switch in six), ``release2024`` or
    ``python311`` once or twice.
    """
    value = _NOT_ALNUM.sub("", value)
    if len(value) < 8:
        return False
    upper, lower = value.lower() != value, value.upper() != value
    digits = _DIGIT.search(value) is not None
    if upper and lower:
        if len(value) / len(_PIECES.findall(value)) < 3.4:
            return True
        letters = _NOT_LETTER.sub("", value)
        return sum(map(letters.lower().count, "aeiou")) < 0.22 * len(letters)
    if digits and (upper or lower):
        return len(_RUNS.findall(value)) >= 0.18 * len(value)
    return False
