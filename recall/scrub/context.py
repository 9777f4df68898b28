"""Secrets known only by what surrounds them: assignments, headers, URLs, command-line flags.

These rules meet far more look-alikes than secrets (``token = get_token()``, ``password: str``,
``Bearer ${TOKEN}``), so each hit is judged in Python after the scan's tail regex has let it
through. Matching runs on the lowercased text (same length as the original) so one pattern serves
``PASSWORD``, ``Password`` and ``password``; values are read back from the original text.
"""

from __future__ import annotations

import base64
import binascii
import re

from recall.scrub.finding import CONTEXT, GENERIC, Finding, Handler, Trigger
from recall.scrub.names import classify_name
from recall.scrub.shape import is_placeholder, looks_random

__all__ = ["CONTEXT_KINDS", "CONTEXT_TRIGGERS", "judge_pair"]

_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
# Characters that end an unquoted value: whitespace, quotes, separators, and the backslash of a
# JSON escape (``\n`` inside a tool result is a line break, not part of the value).
_UNQUOTED = r"[^\s\"'`,;&\\]+"

# --- headers ---------------------------------------------------------------------------------

_BEARER = re.compile(r"bearer[ \t]+(?P<s>[a-z0-9._~+/=-]{8,})")
_BASIC = re.compile(r"basic[ \t]+(?P<s>[a-z0-9+/]{8,}={0,2})(?![\w+/=.-])")
_AUTHORIZATION = re.compile(
    r"authorization\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?(?!bearer|basic|digest|negotiate|ntlm|aws4)"
    r"(?:[a-z][a-z0-9-]*[ \t]+)?(?P<s>[^\s\"',;\\]{8,})"
)


def _after_authorization(lowered: str, start: int) -> bool:
    return lowered.find("authoriz", max(0, start - 48), start) >= 0


def _bearer(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _BEARER.match(lowered, position)
    if match is None:
        return
    start, end = match.span("s")
    value = text[start:end]
    if looks_random(value, 8 if _after_authorization(lowered, position) else 16):
        out.append(Finding(start, end, "bearer-token", CONTEXT))


def _basic(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _BASIC.match(lowered, position)
    if match is None:
        return
    start, end = match.span("s")
    value = text[start:end]
    if _decodes_to_userpass(value) or (_after_authorization(lowered, position) and looks_random(value)):
        out.append(Finding(start, end, "basic-auth", CONTEXT))


def _decodes_to_userpass(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.partition(b":")
    return bool(colon and user and password) and decoded.isascii()


def _authorization(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _AUTHORIZATION.match(lowered, position)
    if match is not None:
        start, end = match.span("s")
        if looks_random(text[start:end], 8):
            out.append(Finding(start, end, "authorization-header", CONTEXT))


# --- URLs ------------------------------------------------------------------------------------

# userinfo: "user:password@" (the password may contain "@" and "#", people do not encode them)
# or a lone token used as the user, as in "https://<token>@github.com".
_URL = re.compile(
    r"://(?:(?P<u>[^\s:/?#@\"'<>\[\]\\]*):(?P<s>[^\s/?\"'<>\[\]\\]+)|(?P<t>[\w.~-]{20,}))@(?=[\w\[])"
)
_URL_PLACEHOLDERS = frozenset(
    ("password", "pass", "passwd", "pwd", "secret", "pw", "p", "x", "token", "changeme")
)


def _url(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _URL.match(text, position)
    if match is None:
        return
    if match.group("t") is not None:
        start, end = match.span("t")
        if looks_random(text[start:end], 20):
            out.append(Finding(start, end, "url-password", CONTEXT))
        return
    start, end = match.span("s")
    value = text[start:end]
    if value.lower() not in _URL_PLACEHOLDERS and not is_placeholder(value):
        out.append(Finding(start, end, "url-password", CONTEXT))


# --- command lines ---------------------------------------------------------------------------

_FLAG = re.compile(
    r"--(?P<n>[a-z][a-z0-9-]*)(?P<sep>=|[ \t]+)(?:(?P<q>[\"'])(?P<qs>[^\"'\n]*)(?P=q)|(?P<s>[^\s\"'\\]+))"
)
# Single-dash password options, trusted only on the command line of a tool that defines them
# ("-p" is a port or a path elsewhere); no tools listed means any command ("-u user:password").
_SHORT: dict[str, tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]] = {
    "-p": (
        (("mysql", "mariadb"), re.compile(r"-p(?P<s>[^\s\"'\\-][^\s\"'\\]*)")),
        (("sshpass", "login"), re.compile(r"-p[ \t]+(?P<q>[\"']?)(?P<s>[^\s\"'\\]+)(?P=q)")),
    ),
    "-a": ((("redis-cli",), re.compile(r"-a[ \t]+(?P<q>[\"']?)(?P<s>[^\s\"'\\]+)(?P=q)")),),
    "-u": (((), re.compile(r"-u[ \t]+(?P<q>[\"']?)[^\s:\"'$\\]+:(?P<s>[^\s\"'\\]+)(?P=q)")),),
}


def _flag(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _FLAG.match(lowered, position)
    if match is None:
        return
    group = "s" if match.group("s") is not None else "qs"
    start, end = match.span(group)
    value = text[start:end]
    name = text[match.start("n") : match.end("n")]
    if name == "user":  # curl --user name:password
        user, colon, password = value.partition(":")
        if colon and password and not user.startswith("$") and not is_placeholder(password):
            out.append(Finding(start + len(user) + 1, end, "secret-flag", CONTEXT))
        return
    verdict = classify_name(name)
    if verdict is None or value.startswith("-"):
        return
    if match.group("sep") != "=" and ("=" in value.rstrip("=") or (value.isalpha() and value.isupper())):
        return  # "--secret id=x,src=y" names a file to mount; "--token TEXT" is a help metavar
    if _accept(value, verdict[0], quoted=group == "qs", literal=True, after=""):
        out.append(Finding(start, end, "secret-flag", CONTEXT))


def _short_flag(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    if position == 0 or lowered[position - 1] not in " \t":
        return
    line = lowered[lowered.rfind("\n", 0, position) + 1 : position]
    for commands, pattern in _SHORT[literal]:
        match = pattern.match(text, position)
        if match and (not commands or any(command in line for command in commands)):
            start, end = match.span("s")
            value = text[start:end]
            if not is_placeholder(value) and not value.replace(":", "").isdigit():  # not "-u 1000:1000"
                out.append(Finding(start, end, "secret-flag", CONTEXT))
            return


_NETRC = re.compile(r"machine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)")


def _netrc(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _NETRC.match(lowered, position)
    if match is not None:
        start, end = match.span("s")
        if not is_placeholder(text[start:end]):
            out.append(Finding(start, end, "netrc-password", CONTEXT))


# --- secrets found next to their public half ---------------------------------------------------

_AWS_PAIR = re.compile(
    r"A(?:KIA|SIA)[A-Z0-9]{16}[\"']?[ \t]*[,:;|=\t][ \t]*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
_TWILIO_PAIR = re.compile(
    r"AC[0-9a-f]{32}(?![0-9a-f])[^\n]{1,80}?(?<![0-9a-fA-F])(?P<s>[0-9a-f]{32})(?![0-9a-fA-F])"
)


def _beside_id(pattern: re.Pattern[str], kind: str) -> Handler:
    """A handler for a secret that is recognisable only next to its public identifier."""

    def handle(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
        match = pattern.match(text, position)
        if match is not None and not is_placeholder(match.group("s")):
            out.append(Finding(*match.span("s"), kind, CONTEXT))

    return handle


# --- assignments -----------------------------------------------------------------------------

# After a secret-ish word: the rest of the identifier, an optional closing quote, the operator.
_ASSIGN_TAIL = (
    r"[a-z0-9_-]*(?:\\*[\"'`])?\]?\??(?:[ \t]*(?:=>|:=|=(?![=~>])|:(?![:/]|\\(?!\\*[\"'])))"
    r"|[ \t]+(?=[a-z0-9+/=_.-]{20}))"
    # Values _accept would reject anyway, refused here in C: types, code, prose, empty.
    r"(?![ \t]*(?:(?:str|int|bool|float|bytes|string|number|secretstr|optional|none|null|true|false)\b"
    r"|self\.|this\.|os\.|process\.|[a-z]+ [a-z]|$|\n|\\n"
    r"|[a-z_]*(?:pass|pwd|secret|token|key|auth|cred)[a-z_]*[,)\s]))"  # auth=auth, password=pw_input)
)
_ASSIGN = re.compile(r"[a-z0-9_-]*(?P<close>\\*[\"'`])?\]?\??(?:[ \t]*(?P<sep>=>|:=|=|:)|(?P<space>[ \t]+))")
_VALUE = re.compile(rf"[ \t]*(?:(?P<q>\\*[\"'`])(?P<qv>[^\n]*?)(?P=q)|(?P<v>{_UNQUOTED}))")
_ENV_VALUE = re.compile(r"[^\s\"'`\\]+")
_SPACED_VALUE = re.compile(r"[A-Za-z0-9+/=_.-]{20,}(?=[\s\"'`,;)]|\\[nrt]|$)")
_BASIC_TUPLE = re.compile(r"\(\s*(\\*[\"'])[^\"'\n]*\1\s*,\s*(\\*[\"'])(?P<s>[^\"'\n\\]+)\2\s*\)")
# Unquoted values that are code: attribute access, calls, subscripts, or identifiers that read
# like variable names (snake_case, camelCase, or naming the secret they hold).
_CODE = re.compile(r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[|\()[^\n]*")
_IDENTIFIER = re.compile(r"[A-Za-z_]+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CODE_STEMS = re.compile(r"pass|pwd|secret|token|key|auth|cred", re.IGNORECASE)
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
        if word and ("_" in name or "-" in name) and looks_random(word.group(), 20):
            out.append(Finding(*word.span(), verdict[1], GENERIC))
        return
    strong, kind = verdict
    value_match = _VALUE.match(text, match.end())
    if value_match is None:
        return
    if value_match.group("qv") is not None:
        start, end = value_match.span("qv")
        quoted = True
    else:
        start, end = value_match.span("v")
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
        env = _ENV_VALUE.match(text, start) if literal_context else None
        if env:  # a .env line: the value runs to the end of the word, "&" and ";" included
            end = env.end()
        end = start + len(text[start:end].rstrip(")]}>."))
    value = text[start:end]
    if _accept(value, strong, quoted=quoted, literal=literal_context, after=text[end : end + 2]):
        out.append(Finding(start, end, kind, GENERIC))


def _accept(value: str, strong: bool, *, quoted: bool, literal: bool, after: str) -> bool:
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
        if _IDENTIFIER.fullmatch(value) and (
            "_" in value or _CAMEL.search(value) or _CODE_STEMS.search(value) or len(value) < 4
        ):
            return False
        if value.isalpha() and after[:1] == " " and after[1:2].isalpha():
            return False  # prose: "token: expired yesterday"
    if not (len(value) >= 4 if strong else looks_random(value)):
        return False
    if _PATH.fullmatch(value) and not any(looks_random(part, 16) for part in value.split("/")):
        return False  # a path to a key file, not the key
    return not is_placeholder(value)


def judge_pair(name: str, value: str) -> str | None:
    """The kind of secret ``value`` is when stored under key ``name`` (JSON objects), if any."""
    verdict = classify_name(name)
    if verdict is None or not _accept(value, verdict[0], quoted=True, literal=False, after=""):
        return None
    return verdict[1]


# Fragments of the secret words; the handler finds the whole name itself. "ken" and "cret" let
# token and secret share the scans for "key" and "cred" instead of costing one scan each; "auth"
# skips author, authority, authorization (handled above) and authenticate.
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
    )
)

CONTEXT_TRIGGERS: tuple[Trigger, ...] = (
    Trigger("bearer", _bearer, r"[ \t]+[a-z0-9._~+/=-]{8}"),
    Trigger("basic", _basic, r"[ \t]+[a-z0-9+/]{8}"),
    Trigger("authorization", _authorization, r"\\*[\"']?[ \t]*[:=]"),
    Trigger("://", _url, r"(?:[^\s:/?#@\"'<>\[\]\\]*:[^\s/?\"'<>\[\]\\]+|[a-z0-9_.~-]{20,})@"),
    Trigger("--", _flag, r"[a-z0-9-]*(?:pass|pwd|secret|token|key|auth|cred|user)[a-z0-9-]*(?:=|[ \t]+)"),
    Trigger("-p", _short_flag, r"(?<=[ \t]-p)\S|(?<=[ \t]-p)[ \t]+\S"),
    Trigger("-a", _short_flag, r"(?<=[ \t]-a)[ \t]+\S"),
    Trigger("-u", _short_flag, r"(?<=[ \t]-u)[ \t]+\S+:"),
    Trigger("machine", _netrc, r"\s+\S+\s+login\s"),
    Trigger("akia", _beside_id(_AWS_PAIR, "aws-secret-access-key"), r"[a-z0-9]{16}[\"']?[ \t]*[,:;|=\t]"),
    Trigger("asia", _beside_id(_AWS_PAIR, "aws-secret-access-key"), r"[a-z0-9]{16}[\"']?[ \t]*[,:;|=\t]"),
    Trigger("ac", _beside_id(_TWILIO_PAIR, "twilio-auth-token"), r"(?<![a-z0-9]ac)[0-9a-f]{32}(?![0-9a-f])"),
    *_STEM_TRIGGERS,
)

CONTEXT_KINDS: frozenset[str] = frozenset(
    (
        *("aws-secret-access-key", "aws-session-token", "twilio-auth-token", "oauth-client-secret"),
        *("bearer-token", "basic-auth", "authorization-header", "url-password", "secret-flag"),
        *("netrc-password", "secret-assignment", "npm-token", "datadog-api-key", "heroku-api-key"),
    )
)
