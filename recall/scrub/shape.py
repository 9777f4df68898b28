"""Cheap judgements about a candidate value: is it a placeholder, a reference, or random-looking?

Context rules (``password=...``, ``Bearer ...``) see far more look-alikes than real secrets: env
references, templates, masked values, type annotations, code. These checks are character-class
tests rather than Shannon entropy because entropy on short strings cannot tell ``hunter2`` from
``getpass`` and on long ones flags every SHA; the class mix is what separates tokens from words.
They run on every candidate, so each is a handful of C-level calls.
"""

from __future__ import annotations

import re

__all__ = ["is_placeholder", "looks_random", "mixed"]

# Words anywhere, and short words only at a word start: random tokens contain "tbd" or "yOur".
_PLACEHOLDER = re.compile(
    r"placeholder|example|redacted|changeme|dummy|sample|replace_?me|insert|[_-]here"
    r"|\.\.\.|\*\*\*|[<>…•]|(?<![a-z0-9])(?:your|todo|tbd|fixme|xxx)"
)
# References to a secret held elsewhere: shell and env expansion (``$X``, ``${X}``, ``$(cmd)``,
# ``%X%``, ``%(x)s``), templates (``{{x}}``, ``{x}``), YAML tags, vault/SSM/file lookups.
_REFERENCE = re.compile(
    r"\$[({a-z_]|%(?:\(|[a-z_]\w*%)|\{(?:\{|[a-z_][\w.]*\})|![a-z]+(?:\s|$)"
    r"|env[.:\[(]|os\.|process\.|secrets?\.|vault:|ssm:|arn:|ref\+|file:|none$|null$|nil$"
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # "Bearer ACCESS_TOKEN" names a variable
_DIGIT = re.compile(r"\d")
_SYMBOL = re.compile(r"[^A-Za-z0-9._-]")


def is_placeholder(value: str) -> bool:
    """True for values a human would never mistake for a live credential."""
    if len(set(value)) <= 2 or "[REDACTED:" in value:  # "xxxxxxxx", "********", our own output
        return True
    lowered = value.lower()
    if _REFERENCE.match(lowered) or _ENV_NAME.fullmatch(value):
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
