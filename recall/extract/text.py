"""Words, sentences and fingerprints: how extraction reads text and recognises the same memory twice.

Everything here is plain string work, no model: a record's identity is the set of its content words
(stop words dropped, crude suffixes folded), so "Use WAL mode for SQLite" and "use WAL mode for
sqlite." share a fingerprint, and two records are near-duplicates when their word sets mostly overlap.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from recall.search.fts_query import STOP_WORDS

_WORD = re.compile(r"[^\W_][\w'-]*")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(\[])")
_MARKUP = re.compile(r"\*\*|__|~~")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
# Marks of something specific. Each pattern is tried only when a character it needs is present:
# Python's re scans slowly for patterns that open with a character class.
_CODE_MARKS = (
    ("_", re.compile(r"[a-z0-9]_[a-z0-9]")),  # snake_case
    ("(", re.compile(r"\w\(\)")),  # call()
    ("-", re.compile(r"(?:^|\s)--?[a-z]")),  # --flag
    (".", re.compile(r"(?<=\w)\.[A-Za-z]\w{0,5}\b")),  # file.ext, module.attr
)
_CAMEL = re.compile(r"[a-z0-9][A-Z][a-z]")
NEAR_DUPLICATE = 0.75  # word-set similarity above which two records say the same thing
_SUFFIXES = ("ing", "ed", "es", "s")


def words(text: str) -> list[str]:
    return [w.strip("'-") for w in _WORD.findall(text.lower()) if w.strip("'-")]


def content_words(text: str) -> list[str]:
    """The words that carry meaning: no stop words, no single characters."""
    return [w for w in words(text) if len(w) > 1 and w not in STOP_WORDS]


def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def word_set(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in content_words(text))


def fingerprint(kind: str, text: str) -> str:
    """The identity of a memory's wording, insensitive to case, order, punctuation and stop words."""
    material = kind + "\x1f" + " ".join(sorted(word_set(text)))
    return hashlib.blake2b(material.encode("utf-8"), digest_size=12).hexdigest()


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap, or containment when the shorter set is substantial (a restatement with more)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    jaccard = shared / len(a | b)
    smaller = min(len(a), len(b))
    containment = shared / smaller if smaller >= 4 else 0.0
    return max(jaccard, containment * 0.9)


def prose(text: str) -> str:
    """Text without fenced code blocks: what was said, not what was pasted."""
    return _FENCE.sub(" ", text) if "```" in text else text


def lines(text: str) -> Iterator[str]:
    """Prose lines with list markers and emphasis removed; tables, headings and quotes dropped."""
    for raw in prose(text).splitlines():
        line = raw.strip()
        if not line or line.startswith(("|", "#", ">", "<")):
            continue
        yield _MARKUP.sub("", _LIST_MARK.sub("", line)).strip()


def sentences(text: str) -> Iterator[str]:
    for line in lines(text):
        yield from (s.strip() for s in _SENTENCE_END.split(line) if s.strip())


def has_code_token(text: str) -> bool:
    """Names something specific: code, a file, a flag, an identifier."""
    if "`" in text:
        return True
    if any(mark in text and pattern.search(text) for mark, pattern in _CODE_MARKS):
        return True
    return _CAMEL.search(text) is not None


def clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def truncate(text: str, limit: int) -> str:
    """Like ``clip`` but keeping line breaks: for details that are read, not listed."""
    stripped = text.strip()
    return stripped if len(stripped) <= limit else stripped[: limit - 1].rstrip() + "…"


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")
