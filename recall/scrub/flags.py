"""Secrets on command lines and in credential files: ``--password x``, ``mysql -px``,
``-passout pass:x``, ``.netrc`` and ``.pgpass`` lines.
"""

from __future__ import annotations

import re

from recall.scrub.context import accept_value
from recall.scrub.finding import CONTEXT, Finding, Trigger
from recall.scrub.names import classify_name
from recall.scrub.shape import is_placeholder

__all__ = ["FLAG_KINDS", "FLAG_TRIGGERS"]

_FLAG = re.compile(
    r"--?(?P<n>[a-z][a-z0-9.-]*)(?P<sep>=|[ \t]+)(?:(?P<q>[\"'])(?P<qs>[^\"'\n]*)(?P=q)|(?P<s>[^\s\"'\\]+))"
)
# Single-dash password options, trusted only on the command line of a tool that defines them
# ("-p" is a port or a path elsewhere); no tools listed means any command ("-u user:password").
_SHORT: dict[str, tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]] = {
    "-p": (
        (("mysql", "mariadb", "7z "), re.compile(r"-p(?P<s>[^\s\"'\\-][^\s\"'\\]*)")),
        (
            ("sshpass", "login", "mongo", "mysql", "mariadb"),
            re.compile(r"-p[ \t]+(?P<q>[\"']?)(?P<s>[^\s\"'\\]+)(?P=q)"),
        ),
        (
            ("zip ", "unzip "),
            re.compile(r"-P[ \t]+(?P<q>[\"']?)(?P<s>[^\s\"'\\]+)(?P=q)"),
        ),  # zip's -P, not -p
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
    if accept_value(value, verdict, quoted=group == "qs", literal=True, after=""):
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


# OpenSSL's password arguments: "-passin pass:x", "-passout pass:x", "-pass pass:x".
_OPENSSL = re.compile(r"pass:(?P<s>[^\s\"'\\]+)")


def _openssl(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _OPENSSL.match(text, position)
    if match is not None and not is_placeholder(match.group("s")):
        out.append(Finding(*match.span("s"), "secret-flag", CONTEXT))


# Breaks between .netrc tokens: whitespace, or its escaped form inside JSON-encoded text.
_GAP = r"(?:[\s+>]|\\[nrt])+"  # diff and quote markers may start the lines
_NETRC = re.compile(rf"(?:machine{_GAP}\S+|default){_GAP}login{_GAP}\S+{_GAP}password{_GAP}(?P<s>[^\s\\]+)")


def _netrc(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    match = _NETRC.match(lowered, position)
    if match is not None:
        start, end = match.span("s")
        if not is_placeholder(text[start:end]):
            out.append(Finding(start, end, "netrc-password", CONTEXT))


# A .pgpass line, "hostname:port:database:username:password", on a line of its own.
_PGPASS = re.compile(
    r"[A-Za-z0-9_.*\[\]-]+:(?:\d{1,5}|\*):[^:\s\\]+:[^:\s\\]+:(?P<s>[^\s\\]+)(?=\s|\\[nrt]|$)"
)


def _pgpass(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
    escaped = text.rfind("\\n", 0, position)
    line_start = max(text.rfind("\n", 0, position) + 1, escaped + 2 if escaped >= 0 else 0)
    if position - line_start > 260:
        return
    start = line_start + len(text[line_start:position]) - len(text[line_start:position].lstrip("+ \t"))
    match = _PGPASS.match(text, start)
    if match is not None and match.start("s") > position and not is_placeholder(match.group("s")):
        out.append(Finding(*match.span("s"), "pgpass-password", CONTEXT))


FLAG_TRIGGERS: tuple[Trigger, ...] = (
    Trigger(
        "--",
        _flag,
        r"[a-z0-9.-]*(?:pass|pwd|secret|token|key|auth|cred|user|sig)[a-z0-9-]*(?:=|[ \t]+)",
    ),
    Trigger("-", _flag, r"(?<=[ \t]-)[a-z][a-z0-9.]*(?:pass|pwd|secret|token)[a-z0-9]*(?:=|[ \t]+)"),
    Trigger("-p", _short_flag, r"(?<=[ \t]-p)\S|(?<=[ \t]-p)[ \t]+\S"),
    Trigger("-a", _short_flag, r"(?<=[ \t]-a)[ \t]+\S"),
    Trigger("-u", _short_flag, r"(?<=[ \t]-u)[ \t]+\S+:"),
    Trigger("pass:", _openssl, r"(?<=[ \t]pass:)\S"),
    Trigger("machine", _netrc, rf"{_GAP}\S+{_GAP}login(?:\s|\\[nrt])"),
    Trigger("default", _netrc, rf"{_GAP}login(?:\s|\\[nrt])"),
    Trigger(":", _pgpass, r"(?:\d{1,5}|\*):[^:\s\\]+:[^:\s\\]+:[^\s\\]"),
)
FLAG_KINDS: frozenset[str] = frozenset(("secret-flag", "netrc-password", "pgpass-password"))
