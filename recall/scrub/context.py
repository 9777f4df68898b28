"""Secrets known by what they are assigned to: ``password=...``, ``"apiKey": "..."``, ``token: ...``,
``?X-Goog-Signature=...``, and secrets that sit beside their public half (an AWS key id, a Twilio
account SID).

These rules meet far more look-alikes than secrets (``token = get_token()``, ``password: str``,
``Bearer ${TOKEN}``), so each hit is judged in Python after the scan's tail regex has let it
through. Matching runs on the lowercased text (same length as the original) so one pattern serves
``PASSWORD``, ``Password`` and ``password``; values are read back from the original text.
"""

from __future__ import annotations

import re

from recall.scrub.finding import CONTEXT, GENERIC, Finding, Handler, Trigger
from recall.scrub.names import NameVerdict, classify_name
from recall.scrub.shape import is_hex, is_placeholder, is_uuid, looks_random, machine_made

__all__ = ["CONTEXT_KINDS", "CONTEXT_TRIGGERS", "accept_value", "judge_pair"]

_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
# Characters that end an unquoted value: whitespace, quotes, separators, and the backslash of a
# JSON escape (``\n`` inside a tool result is a line break, not part of the value).
_UNQUOTED = r"[^\s\"'`,;&\\]+"

# --- secrets found next to their public half ---------------------------------------------------

_AWS_PAIR = re.compile(
    r"A(?:KIA|SIA)[A-Z0-9]{16}[\"']?[ \t]*[,:;|=\t][ \t]*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
# The same pair said in words: "access key AKIA... with secret wJal...", "AKIA... / wJal...".
_AWS_NEAR = re.compile(
    r"A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])[^\n]{0,100}?(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{40})"
    r"(?![A-Za-z0-9/+=])"
)
_TWILIO_PAIR = re.compile(
    r"AC[0-9a-f]{32}(?![0-9a-f])[^\n]{1,80}?(?<![0-9a-fA-F])(?P<s>[0-9a-f]{32})(?![0-9a-fA-F])"
)


def _beside_id(kind: str, *patterns: re.Pattern[str]) -> Handler:
    """A handler for a secret that is recognisable only next to its public identifier."""

    def handle(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
        for pattern in patterns:
            match = pattern.match(text, position)
            if match is not None and not is_placeholder(match.group("s")) and machine_made(match.group("s")):
                out.append(Finding(*match.span("s"), kind, CONTEXT))
                return

    return handle


# --- assignments -----------------------------------------------------------------------------

# After a secret-ish word: the rest of the identifier, an optional closing quote, the operator.
# Possessive repeats (``*+``): what follows each never starts with what it repeats, so giving
# characters back cannot make a match, and not trying saves a third of the tail's cost.
_ASSIGN_TAIL = (
    r"[a-z0-9_-]*+(?:\\*+[\"'`])?\]?\??(?:[ \t]*+(?:=>|:=|=(?![=~>])|:(?![:/]|\\(?!\\*[\"'])))"
    r"|[ \t]++(?=[a-z0-9+/=_.-]{20}))"
    # Values _accept would reject anyway, refused here in C: types, code, prose, empty.
    r"(?![ \t]*(?:(?:str|int|bool|float|bytes|string|number|secretstr|optional|none|null|true|false)\b"
    r"|self\.|this\.|os\.|process\.|[a-z]+ [a-z]|$|\n|\\n"
    r"|[a-z_]*(?:pass|pwd|secret|token|key|auth|cred)[a-z_]*[,)\s]))"  # auth=auth, password=pw_input)
)
_ASSIGN = re.compile(
    r"[a-z0-9_-]*+(?P<close>\\*[\"'`])?\]?\??(?:[ \t]*+(?P<sep>=>|:=|=|:)|(?P<space>[ \t]+))"
)
_VALUE = re.compile(rf"[ \t]*(?:(?P<q>\\*[\"'`])(?P<qv>[^\n]*?)(?P=q)|(?P<v>{_UNQUOTED}))")
_ENV_VALUE = re.compile(r"[^\s\"'`\\]+")
_END_OF_LINE = re.compile(r"[ \t]*(?:\r?\n|\\[nr]|\\?\"|$)")  # or the end of a JSON string
_SPACED_VALUE = re.compile(r"[A-Za-z0-9+/=_.-]{20,}(?=[\s\"'`,;)]|\\[nrt]|$)")
_BASIC_TUPLE = re.compile(r"\(\s*(\\*[\"'])[^\"'\n]*\1\s*,\s*(\\*[\"'])(?P<s>[^\"'\n\\]+)\2\s*\)")
# Unquoted values that are code: attribute access, calls, subscripts, or identifiers that read
# like variable names (snake_case, camelCase, or naming the secret they hold).
_CODE = re.compile(r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[|\()[^\n]*")
_IDENTIFIER = re.compile(r"[A-Za-z_]+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CODE_STEMS = re.compile(r"pass|pwd|secret|token|key|auth|cred", re.IGNORECASE)
_PARTS = re.compile(r"[-_.]")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*|[A-Za-z]:\\.*")
_BENIGN_VALUES = frozenset(
    (
        *("none", "null", "nil", "true", "false", "undefined", "yes", "no", "on", "off", "empty", "unset"),
        *("required", "optional", "default", "auto", "disabled", "enabled", "hidden", "inherit", "include"),
        *("str", "string", "bytes", "int", "integer", "number", "bool", "boolean", "any", "object", "dict"),
        *("list", "secretstr", "text", "varchar", "char", "self", "this", "cls", "omit", "same-origin"),
        *("password", "secret", "token", "basic", "bearer", "oauth", "oauth2", "jwt", "session", "cookie"),
        *("header", "query", "test", "testing", "demo", "foo", "bar", "foobar", "fake", "mock"),
    )
)


def _assignment(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    """Judge one ``name <op> value`` candidate at a secret-ish word."""
    match = _ASSIGN.match(lowered, position + len(literal))
    if match is None:
        return
    before = text[max(0, position - 64) : position]
    name_start = position - len(before) + len(before.rstrip(_NAME_CHARS))
    if name_start and text[name_start - 1] == "\\" and text[name_start] in "nrt":
        name_start += 1  # the letter of a "\n" escape in JSON-encoded text, not part of the name
    name_end = (
        match.start("close")
        if match.group("close")
        else match.start("sep" if match.group("sep") else "space")
    )
    name = text[name_start:name_end].rstrip(" \t?]")
    verdict = classify_name(name)
    if verdict is None:
        return
    if match.group("space") is not None:  # "aws configure set aws_secret_access_key <value>"
        word = _SPACED_VALUE.match(text, match.end())
        if word and _spaced_secret(name, word.group()):
            out.append(Finding(*word.span(), verdict.kind, GENERIC))
        return
    value_match = _VALUE.match(text, match.end()) or _ENV_VALUE.match(text, match.end())
    if value_match is None:
        return
    if value_match.re is _VALUE and value_match.group("qv") is not None:
        start, end = value_match.span("qv")
        quoted = True
    else:
        start, end = value_match.span("v" if value_match.re is _VALUE else 0)
        if text[start] == "(":
            pair = _BASIC_TUPLE.match(text, start)
            if pair and not is_placeholder(pair.group("s")):
                out.append(Finding(*pair.span("s"), "basic-auth", CONTEXT))
            return
        quoted = False
    sep = match.group("sep")
    literal_context = (
        text[name_start:name_end].isupper() and sep == "=" and text[match.start("sep") - 1] not in " \t"
    )
    if not quoted:
        word = _ENV_VALUE.match(text, start)
        # In a .env line, or a config line holding one word after "name = " (INI, TOML, YAML), the
        # value runs to the end of the word, "&" and ";" included.
        if word and (
            literal_context or (_line_start(text, name_start) and _END_OF_LINE.match(text, word.end()))
        ):
            end = word.end()
        end = start + len(text[start:end].rstrip(")]}>.,;"))
    value = text[start:end]
    if accept_value(value, verdict, quoted=quoted, literal=literal_context, after=text[end : end + 2]):
        out.append(Finding(start, end, verdict.kind, GENERIC))


def _line_start(text: str, position: int) -> bool:
    """Does ``position`` begin a line, after indentation or a diff marker?"""
    before = text[max(0, position - 16) : position].rstrip(" \t+-")
    return not before or before.endswith(("\n", "\\n"))


def _generated(value: str) -> bool:
    """A value only a machine makes: what a bare "key", a session or a signature must hold.

    Not a UUID (session ids), not words and a hash (``node-cache-key-<hash>``); words and a
    random body are a vendor token (``duffel_test_<random>``).
    """
    if len(value) < 16 or is_uuid(value):
        return False
    parts = _PARTS.split(value)
    if len(parts) > 1 and any(len(part) >= 3 and part.isalpha() and part.islower() for part in parts):
        return any(len(part) >= 16 and not is_hex(part) and machine_made(part) for part in parts)
    return machine_made(value) or (is_hex(value) and len(value) >= 16)


def _spaced_secret(name: str, value: str) -> bool:
    """``name value`` with no operator: a command argument or prose ("rejected credential <key>")."""
    if is_placeholder(value):
        return False
    if "_" in name or "-" in name:
        return looks_random(value, 20)
    return machine_made(value) and not is_uuid(value)


def accept_value(value: str, verdict: NameVerdict, *, quoted: bool, literal: bool, after: str) -> bool:
    """Is ``value`` a literal secret rather than code, a reference, a type or prose?

    ``literal`` marks contexts where values cannot be code (``.env`` lines, flags). The cheap
    structural tests come first; the placeholder test only runs on values that passed them.
    """
    if not value or value.lower() in _BENIGN_VALUES:
        return False
    if quoted:
        if " " in value and all(word.isalpha() for word in value.split()):
            return False  # a label or a sentence: "Enter your password"
    elif not literal:
        if _CODE.fullmatch(value):
            return False
        if (
            _IDENTIFIER.fullmatch(value)
            and ("_" in value or _CAMEL.search(value) or _CODE_STEMS.search(value) or len(value) < 4)
            and not machine_made(value)  # "hf_TEWLfGlJWry..." is a token made of letters
        ):
            return False
        if value.isalpha() and after[:1] == " " and after[1:2].isalpha():
            return False  # prose: "token: expired yesterday"
    if verdict.loose:
        enough = _generated(value)
    else:
        enough = len(value) >= 4 if verdict.strong else looks_random(value)
    if not enough:
        return False
    if _PATH.fullmatch(value) and not any(looks_random(part, 16) for part in value.split("/")):
        return False  # a path to a key file, not the key
    return not is_placeholder(value)


def judge_pair(name: str, value: str) -> str | None:
    """The kind of secret ``value`` is when stored under key ``name`` (JSON objects), if any."""
    verdict = classify_name(name)
    if verdict is None or not accept_value(value, verdict, quoted=True, literal=False, after=""):
        return None
    return verdict.kind


# Fragments of the secret words; the handler finds the whole name itself. "ken" and "cret" let
# token and secret share the scans for "key" and "cred" instead of costing one scan each; "auth"
# skips author, authority, authorization (see headers) and authenticate; one letter with a
# look-behind ("g" after "si", "n" after "sessio") adds a check to an existing scan, not a scan.
_STEM_TRIGGERS = tuple(
    Trigger(stem, _assignment, ahead + _ASSIGN_TAIL)
    for stem, ahead in (
        ("pass", ""),
        ("pwd", ""),
        ("cret", ""),
        ("ken", ""),
        ("key", ""),
        ("auth", "(?!or|en)"),
        ("cred", ""),
        ("n", "(?<=session)"),
        ("cookie", ""),
        ("gnature", ""),
        ("g", "(?<=sig)"),
    )
)
_AFTER_KEY_ID = r"[a-z0-9]{16}(?![a-z0-9])"

CONTEXT_TRIGGERS: tuple[Trigger, ...] = (
    Trigger("akia", _beside_id("aws-secret-access-key", _AWS_PAIR, _AWS_NEAR), _AFTER_KEY_ID),
    Trigger("asia", _beside_id("aws-secret-access-key", _AWS_PAIR, _AWS_NEAR), _AFTER_KEY_ID),
    Trigger("ac", _beside_id("twilio-auth-token", _TWILIO_PAIR), r"(?<![a-z0-9]ac)[0-9a-f]{32}(?![0-9a-f])"),
    *_STEM_TRIGGERS,
)

CONTEXT_KINDS: frozenset[str] = frozenset(
    (
        *("aws-secret-access-key", "aws-session-token", "twilio-auth-token", "oauth-client-secret"),
        *("basic-auth", "secret-assignment", "npm-token", "datadog-api-key", "heroku-api-key"),
        *("session-token", "signature"),
    )
)
