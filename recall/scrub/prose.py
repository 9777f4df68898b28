"""Secrets stated in sentences: "the staging admin password is hunter2!", "passphrase: orbit maple
walrus", "the new Fly key is fm2_…".

Prose about secrets is far more common than secrets in prose ("the password is required", "the
token is refreshed every hour", "the API key is stored in Vault"), so a stated value counts only
when it could not be a word of the sentence: a single value must look like a password (digits,
symbols or mixed case, not a capitalised word); several words must read as a passphrase (three to
eight plain words, none of the little words sentences are made of, ending the sentence or line),
and only after a password or a secret. Most of this is checked in the scan, so a sentence that
merely mentions a password costs no Python.
"""

from __future__ import annotations

import re

from recall.scrub.finding import PROSE, Finding, Trigger
from recall.scrub.shape import is_placeholder

__all__ = ["PROSE_KINDS", "PROSE_TRIGGERS"]

KIND = "stated-secret"
# What links the secret word to its value: "is", "was set to", "for the db is", "for root:".
_QUALIFIER = r"[ \t]+(?:for|of|on|to|in|at|from)[ \t]+[^\n.;:=\"'`]{1,40}?"
_VERB = (
    r"[ \t]+(?:is|was|are|were)(?:[ \t]+(?:now|still|just|currently))?"
    r"|[ \t]+(?:(?:has|have)[ \t]+been[ \t]+)?(?:set|changed|reset|updated|rotated)[ \t]+to"
)
# "password to X" follows "reset the password", "changed my password"; "pass a key to X" is prose.
_TO = r"|[ \t]+to"
_STATED = rf"(?:(?:{_QUALIFIER})?(?:{_VERB})|{_QUALIFIER}[ \t]*[:=])[ \t]+"
_STATED_TO = rf"(?:(?:{_QUALIFIER})?(?:{_VERB}{_TO})|{_QUALIFIER}[ \t]*[:=])[ \t]+"
_LINK = re.compile(rf"(?:(?:{_QUALIFIER})?(?:{_VERB}{_TO})|(?:{_QUALIFIER})?[ \t]*[:=])[ \t]+")
# What may follow the link, checked in the scan: a quote or a word with a digit or a symbol, or
# three words after a password or secret. A bare "key: value" is an assignment (see .context);
# here only a qualified one ("key for prod: ...") or a passphrase ("passphrase: orbit maple ...").
_SINGLE = r"(?:\\*[\"'`\u201c\u2018]|[^\s\"'`]*[^a-z\s\"'`])"
_PHRASE = r"[a-z]+[ \t]+[a-z]+[ \t]+[a-z]+"
# The secret words, as the scan sees them: fragments that share scans with other rules.
# Tokens and keys said in a sentence ("the new key is fm2_...") are generated strings the shape
# and run layers find by themselves; what only a sentence marks is a human-chosen password.
_STEMS = (
    ("pass", r"(?:word|phrase|wd|code)s?"),
    ("pwd", ""),
    ("cret", r"s?"),
)
# Whole words that may state a secret, and those whose value may be several words.
_SECRET_WORDS = frozenset(
    ("password", "passwords", "passphrase", "passwd", "pwd", "passcode", "secret", "secrets")
    + ("token", "tokens", "key", "keys", "credentials", "creds")
)
_PHRASE_WORDS = ("password", "passphrase", "passwd", "secret")
_WORD = re.compile(r"[a-z]+")
_VALUE = re.compile(
    r"\\*(?P<q>[\"'`\u201c\u2018])(?P<qv>[^\n\"'`\\\u201c\u201d\u2018\u2019]{1,160})\\*[\"'`\u201d\u2019]"
    r"|(?P<v>[^\s\"'`\\]+(?:[ \t]+[^\s\"'`\\]+){0,7})"
)
_END = re.compile(r"[.,;!?)]*(?:\\[nrt]|\\*[\"'`]|[ \t]*(?:\n|$))|[.,;!?)]+[ \t]")  # ends a sentence or line
_TRAILING = ".,;:)"
_SYMBOL = re.compile(r"[^A-Za-z0-9_.-]")
# Words sentences are built from: a run of words holding one is prose, not a passphrase.
_LITTLE = frozenset(
    (
        *("a", "an", "the", "and", "or", "but", "if", "then", "than", "so", "of", "to", "in", "on", "at"),
        *("by", "for", "from", "with", "without", "into", "onto", "over", "under", "as", "is", "are"),
        *("was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "has", "have", "had"),
        *("will", "would", "shall", "should", "can", "could", "may", "might", "must", "not", "no", "yes"),
        *("it", "its", "this", "that", "these", "those", "there", "here", "where", "when", "what", "which"),
        *("who", "whom", "whose", "why", "how", "i", "you", "he", "she", "we", "they", "me", "him", "her"),
        *("us", "them", "my", "your", "his", "our", "their", "all", "any", "each", "every", "some", "none"),
        *("both", "either", "neither", "also", "just", "only", "still", "now", "very", "too", "again"),
        *("once", "before", "after", "until", "while", "because", "since", "about", "above", "below"),
        *("between", "through", "during", "per", "via", "more", "most", "less", "least", "such", "same"),
        *("other", "another", "own", "new", "old", "first", "last", "next", "stored", "required", "set"),
        *("missing", "empty", "invalid", "expired", "wrong", "incorrect", "valid", "needed", "optional"),
        *("used", "sent", "shown", "hidden", "generated", "provided", "configured", "changed", "reset"),
        *("saved", "hashed", "encrypted", "rotated", "weak", "strong", "short", "long", "secure", "blank"),
        *("null", "default", "ok", "please", "see", "use", "using", "get", "got", "make", "made", "like"),
        *("one", "two", "three", "field", "value", "string"),
    )
)
_BENIGN = frozenset(("password", "passphrase", "secret", "token", "redacted", "hidden", "masked", "unknown"))


def _password_like(value: str) -> bool:
    """A single stated value: long enough and unlike any word of the sentence."""
    if len(value) < 6 or value.lower() in _BENIGN or is_placeholder(value):
        return False
    if value.startswith(("http://", "https://", "/", "~/", "./")):
        return False
    digits = any(c.isdigit() for c in value)
    cased = value.lower() != value and value.upper() != value and not value.istitle()
    return digits or cased or _SYMBOL.search(value) is not None


def _passphrase(words: list[str]) -> bool:
    return 3 <= len(words) <= 8 and all(w.isalpha() and w.lower() not in _LITTLE for w in words)


def _secret_word(text: str, lowered: str, position: int) -> tuple[str, int] | None:
    """The whole word the stem at ``position`` belongs to and its end, if it can state a secret."""
    word = _WORD.match(lowered, position)
    if word is None:
        return None
    start = position
    while start > 0 and lowered[start - 1].isalpha():
        start -= 1
    if start and text[start - 1] == "\\" and lowered[start] in "nrt":
        start += 1  # the letter of a "\n" escape in JSON-encoded text
    whole = lowered[start : word.end()]
    return (whole, word.end()) if whole in _SECRET_WORDS else None


def _stated(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    word = _secret_word(text, lowered, position)
    link = _LINK.match(lowered, word[1]) if word else None
    value = _VALUE.match(text, link.end()) if link else None
    if word is None or value is None:
        return
    phrases = word[0].startswith(_PHRASE_WORDS)
    if value.group("qv") is not None:
        found = value.group("qv")
        words = found.split()
        if _password_like(found) if len(words) == 1 else phrases and _passphrase(words):
            out.append(Finding(*value.span("qv"), KIND, PROSE))
        return
    start = value.start("v")
    words = value.group("v").split()
    first = words[0].rstrip(_TRAILING)
    if _password_like(first):
        out.append(Finding(start, start + len(first), KIND, PROSE))
        return
    for count in range(min(len(words), 8), 2, -1) if phrases else ():
        phrase = " ".join(words[:count]).rstrip(_TRAILING + "!?")
        if _passphrase(phrase.split()) and _END.match(text, start + len(phrase)):
            out.append(Finding(start, start + len(phrase), KIND, PROSE))
            return


def _tail(stem: str, rest: str) -> str:
    if stem in ("pass", "cret"):
        return rf"{rest}(?:{_STATED_TO}(?:{_SINGLE}|{_PHRASE})|[ \t]*[:=][ \t]+{_PHRASE})"
    return rf"{rest}{_STATED}{_SINGLE}"


PROSE_TRIGGERS: tuple[Trigger, ...] = tuple(
    Trigger(stem, _stated, _tail(stem, rest)) for stem, rest in _STEMS
)
PROSE_KINDS: frozenset[str] = frozenset((KIND,))
