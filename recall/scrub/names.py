"""Decide from an identifier alone whether the value assigned to it is a secret, and which kind.

Names are split into words (``DB_PASSWORD``, ``apiKey``, ``x-api-key`` all become word lists) so
the decision reads like the rule a reviewer applies: the last secret word must end the name, up
to environment suffixes (``_PROD``, ``_2``). ``token_count``, ``max_tokens``, ``secretName`` and
``passwordFile`` hold counts and references, not secrets. Some words are only a hint: a bare
``key`` (Kaggle's ``{"key": ...}``, ``STRIPE_KEY``), ``session``, ``cookie`` and ``signature`` name
database keys, ids and algorithms as often as secrets, so under them only a generated value counts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

__all__ = ["NameVerdict", "classify_name"]

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# Words that are secrets by themselves. "Strong" ones are human-chosen (any literal counts);
# the others are machine-issued, so their values must also look random.
_STRONG = frozenset(
    [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "pass",
        "secret",
        "credential",
        "credentials",
        "creds",
        "cred",
        "clientsecret",
        "pgpassword",
        "mysqlpwd",
    ]
)
_WEAK = frozenset(
    [
        "token",
        "auth",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "authtoken",
        "accesstoken",
        "refreshtoken",
        "sessiontoken",
        "idtoken",
        "bearertoken",
        "authkey",
        "appkey",
        "key",
        "signature",
        "sig",
        "session",
        "sessionid",
        "sessid",
        "cookie",
    ]
)
_GLUED_STRONG = ("password", "passwd", "passphrase", "secret")
_GLUED = (*_GLUED_STRONG, "token", "apikey", "accesskey", "secretkey", "privatekey", "sessionid", "sessid")
# Words whose values are often ids rather than secrets.
SESSION_WORDS = frozenset(("session", "sessionid", "sessid", "cookie"))
_LOOSE = SESSION_WORDS | {"signature", "sig"}


# "key" is secret only after one of these ("api key", "secret access key", "x-api-key").
_KEY_QUALIFIERS = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "client",
        "auth",
        "app",
        "signing",
        "sign",
        "encryption",
        "encrypt",
        "decrypt",
        "master",
        "account",
        "shared",
        "sas",
        "storage",
        "subscription",
        "session",
        "hmac",
        "jwt",
        "license",
        "deploy",
        "admin",
        "service",
        "write",
        "ingest",
        "server",
        "rest",
        "crypto",
        "webhook",
        "consumer",
    ]
)
# "key" after one of these names a database or cache key, not a credential.
_KEY_NOT_SECRET = frozenset(
    (
        *("primary", "foreign", "sort", "partition", "range", "hash", "shard", "cache", "idempotency"),
        *("dedup", "dedupe", "lock", "redis", "object", "s3", "file", "field", "dict", "map", "column"),
        *("index", "lookup", "row", "public", "publishable", "pub", "i18n", "translation", "message"),
        *("label", "cursor", "composite", "unique", "natural", "surrogate", "group", "join", "routing"),
        *("order", "env", "config", "setting", "settings", "metadata", "mapping", "sorting", "react"),
        *("registry", "attribute", "property", "dynamo", "table", "bucket", "state", "ssh", "gpg", "pgp"),
    )
)
# Words allowed after the secret word: environment and encoding suffixes.
_TAIL_OK = frozenset(
    [
        "prod",
        "production",
        "dev",
        "development",
        "stage",
        "staging",
        "test",
        "testing",
        "qa",
        "ci",
        "local",
        "live",
        "primary",
        "secondary",
        "old",
        "new",
        "rw",
        "ro",
        "read",
        "write",
        "admin",
        "root",
        "value",
        "val",
        "str",
        "string",
        "plain",
        "plaintext",
        "raw",
        "b64",
        "base64",
        "hex",
        "encoded",
        "enc",
        "data",
        "key",
        "bot",
        "v",
        "base",
        "main",
        "backup",
        "override",
        "current",
        "default",
        "us",
        "eu",
    ]
)
# A word right before the secret word that turns it into a count or a cursor.
_HEAD_BAD = frozenset(
    [
        "max",
        "min",
        "num",
        "total",
        "next",
        "prev",
        "previous",
        "page",
        "continuation",
        "cursor",
        "sync",
        "prompt",
        "completion",
        "input",
        "output",
        "cached",
        "cache",
        "reasoning",
        "is",
        "has",
        "use",
        "no",
        "show",
        "hide",
        "require",
        "requires",
        "required",
        "skip",
        "enable",
        "disable",
        "forgot",
        "reset",
        "change",
        "confirm",
        "verify",
        "invalid",
        "expired",
        "bypass",
    ]
)


class NameVerdict(NamedTuple):
    strong: bool  # human-chosen secrets: any literal value counts
    kind: str
    loose: bool  # a weak hint ("key", "session"): only a generated value counts, never a UUID


_KIND_BY_WORD = (
    (("aws", "secret"), "aws-secret-access-key"),
    (("secretaccesskey",), "aws-secret-access-key"),
    (("secret", "access", "key"), "aws-secret-access-key"),
    (("aws", "session", "token"), "aws-session-token"),
    (("twilio", "token"), "twilio-auth-token"),
    (("client", "secret"), "oauth-client-secret"),
    (("clientsecret",), "oauth-client-secret"),
    (("npm", "token"), "npm-token"),
    (("datadog",), "datadog-api-key"),
    (("dd", "key"), "datadog-api-key"),
    (("heroku",), "heroku-api-key"),
)


@lru_cache(maxsize=4096)
def classify_name(name: str) -> NameVerdict | None:
    """What a secret-looking name says about its value, or None for anything else."""
    words = [w.lower() for w in _WORDS.findall(name)]
    hit = None
    for index in range(len(words) - 1, -1, -1):
        word = words[index]
        if word in _STRONG or word in _WEAK:
            hit = index
            break
        if word.endswith(_GLUED):  # DBPASSWORD, MYTOKEN: no case or separator to split on
            hit = index
            break
    if hit is None:
        return None
    if any(not (w in _TAIL_OK or w.isdigit()) for w in words[hit + 1 :]):
        return None
    word = words[hit]
    head = words[hit - 1] if hit else ""
    if head in _HEAD_BAD or (word == "key" and hit > 1 and words[hit - 2] in _HEAD_BAD):
        return None
    if word == "key" and head in _KEY_NOT_SECRET:
        return None
    strong = word in _STRONG or word.endswith(_GLUED_STRONG)
    found = set(words) | ({"npm", "token"} if name.startswith("_auth") else set())  # .npmrc keys
    for needed, kind in _KIND_BY_WORD:
        if found.issuperset(needed):
            return NameVerdict(strong, kind, False)
    # A bare "key", a session or a signature is a weaker hint than "token": only generated values count.
    loose = (
        word in _LOOSE
        or word.endswith(("sessionid", "sessid"))
        or (word == "key" and head not in _KEY_QUALIFIERS)
    )
    if word in SESSION_WORDS or word.endswith(("sessionid", "sessid")):
        return NameVerdict(strong, "session-token", loose)
    if word in ("signature", "sig"):
        return NameVerdict(strong, "signature", loose)
    return NameVerdict(strong, "secret-assignment", loose)
