"""Vendor credentials recognisable by their own shape: a fixed prefix and a fixed alphabet.

Each rule names the literal(s) its tokens start with; the scan engine finds those literals in the
lowercased text and this module confirms each hit with the rule's exact, case-sensitive pattern.
A few shapes have their distinctive literal in the middle (``<digits>:AA...`` for Telegram,
``...Q~...`` for Azure AD); those rules say how far back the token may start.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from recall.scrub.finding import VENDOR, Finding, Trigger
from recall.scrub.shape import is_placeholder, looks_random

__all__ = ["TOKEN_KINDS", "token_triggers"]


def _edge(word: str) -> str:
    """A token start: no ``word`` character before it, unless that is the letter of a ``\\n``
    escape, which is how a line break looks inside JSON-encoded tool output."""
    return rf"(?:(?<![\\{word}])|(?<=\\[nrt]))"


# What a token body may contain, as seen in the lowercased text; requiring a few such characters
# after the literal lets the scan drop "key-value" and "sk-learn" without calling Python.
_BODY = r"[a-z0-9_+/=.%~-]{8}"


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    literals: tuple[str, ...]  # case-sensitive; where the exact pattern starts (unless ``back``)
    pattern: str  # exact pattern; the optional group "s" is the secret, else the whole match
    check: Callable[[str], bool] | None = None  # judges the secret text, for shapes words share
    bounded: bool = True  # the literal must not continue an alphanumeric run
    tail: str = _BODY
    back: int = 0  # the token may start up to this many characters before the literal
    # Find the literal through its tail from this index on ("k-" for "sk-"), so rules share the
    # scan of a rarer character; see recall.scrub.scan for why fewer scans matter.
    anchor: int = 0
    _exact: re.Pattern[str] | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def exact(self) -> re.Pattern[str]:
        """Compiled on the rule's first hit: a process that never meets its vendor's token (most
        short commands) does not pay for compiling the ~70 exact patterns (issue 16)."""
        pattern = self._exact
        if pattern is None:
            pattern = re.compile(self.pattern)
            object.__setattr__(self, "_exact", pattern)
        return pattern

    def handle(self, text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
        if self.back:
            low, high = max(0, position - self.back), position + self.back + 256
            match = next(
                (m for m in self.exact.finditer(text, low, high) if m.start() <= position < m.end()), None
            )
        else:
            match = self.exact.match(text, position - self.anchor)
        if match is None:
            return
        start, end = match.span("s") if "s" in self.exact.groupindex else match.span()
        value = text[start:end]
        if not is_placeholder(value) and (self.check is None or self.check(value)):
            out.append(Finding(start, end, self.kind, VENDOR))

    def triggers(self) -> list[Trigger]:
        result = []
        for literal in self.literals:
            lowered = literal.lower()
            escaped = re.escape(lowered)
            guard = rf"(?:(?<![a-z0-9]{escaped})|(?<=\\[nrt]{escaped}))" if self.bounded else ""
            if self.anchor:  # the scan matched only the tail of the literal: check the rest is there
                guard = rf"(?<={escaped})" + guard
            result.append(Trigger(lowered[self.anchor :], self.handle, guard + self.tail))
        return result


def _random(value: str) -> bool:
    return looks_random(value, 16)


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _pem_inside(value: str) -> bool:
    """Kubeconfig ``client-key-data`` is base64 of a PEM block; only private ones are secret."""
    head = value[:64]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in decoded


def _discord_head(value: str) -> bool:
    head = value.split(".", 1)[0]
    return head[0] in "MNO" and 24 <= len(head) <= 28


def _prefixed(head: str, *bodies: str) -> tuple[str, ...]:
    return tuple(head + body for body in bodies)


# Ordered by priority: when two rules match at the same place, the earlier rule names the kind.
# Every repetition is bounded, so a pathological text ("sk-sk-sk-...") costs linear time.
_RULES: tuple[_Rule, ...] = (
    # Private keys: PEM blocks (also inside JSON strings with escaped newlines), PuTTY, base64 PEM.
    _Rule(
        "private-key",
        ("-----BEGIN",),
        # To its END line (never past another BEGIN), or for a cut-off key, over its body lines.
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----BEGIN)){0,40000}?"
        r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"|-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:\s|\\+[nr])+(?:[A-Za-z0-9+/=]{16,1024}|[A-Z][A-Za-z-]+: [^\n\\]*))*",
        bounded=False,
        tail="",
    ),
    _Rule(
        "private-key",
        ("PuTTY-User-Key-File-",),
        r"PuTTY-User-Key-File-\d:(?s:.{0,20000}?)Private-MAC: [0-9a-f]+",
        tail="",
    ),
    _Rule("private-key", ("LS0tLS1CRUdJTi",), r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,8192}={0,2}", _pem_inside),
    _Rule("age-secret-key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # Cloud providers.
    _Rule(
        "aws-access-key-id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _Rule("google-api-key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
    _Rule("google-oauth-client-secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{28}"),
    _Rule("google-oauth-token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{20,1024}"),
    _Rule("azure-storage-key", ("AccountKey=",), r"AccountKey=(?P<s>[A-Za-z0-9+/]{40,1024}={0,2})"),
    _Rule(
        "azure-shared-access-key",
        ("SharedAccessKey=",),
        r"SharedAccessKey=(?P<s>[A-Za-z0-9+/]{40,1024}={0,2})",
        anchor=1,
    ),
    _Rule(
        "azure-sas-token",
        ("sig=",),
        r"sig=(?P<s>(?:[A-Za-z0-9+/_-]|%2[BbFf]){30,1024}(?:=|%3[Dd]){0,2})",
        anchor=2,
    ),
    _Rule(
        "azure-client-secret",
        ("Q~",),
        _edge(r"\w~.") + r"[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])",
        bounded=False,
        tail=r"[a-z0-9_~.-]{31}",
        back=4,
    ),
    _Rule("digitalocean-token", _prefixed("do", "p_v1_", "o_v1_", "r_v1_"), r"do[opr]_v1_[a-f0-9]{64}"),
    _Rule("heroku-api-key", ("HRKU-",), r"HRKU-[A-Za-z0-9_-]{40,1024}"),
    _Rule("databricks-token", ("dapi",), r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"),
    _Rule(
        "terraform-token",
        (".atlasv1.",),
        _edge("A-Za-z0-9") + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,1024}",
        bounded=False,
        back=14,
    ),
    _Rule("pulumi-token", ("pul-",), r"pul-[a-f0-9]{40}"),
    _Rule("doppler-token", ("dp.",), r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_-]{40,1024}"),
    _Rule("vault-token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{24,1024}"),
    _Rule("supabase-token", ("sbp_",), r"sbp_[a-f0-9]{40}", anchor=1),
    _Rule("supabase-token", ("sb_secret_",), r"sb_secret_[A-Za-z0-9_-]{20,1024}", anchor=1),
    _Rule("grafana-token", ("glc_",), r"glc_[A-Za-z0-9+/]{32,1024}={0,2}"),
    _Rule("grafana-token", ("glsa_",), r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    _Rule("newrelic-key", ("NRAK-", "NRII-", "NRJS-"), r"NR(?:AK|II|JS)-[A-Za-z0-9]{20,1024}"),
    _Rule("sentry-token", ("sntrys_", "sntryu_"), r"sntry[su]_[A-Za-z0-9+/=_-]{40,1024}", anchor=1),
    _Rule(
        "sentry-dsn",
        ("://",),
        r"://(?P<s>[0-9a-f]{32})(?::[0-9a-f]{32})?@[\w.-]*sentry",
        bounded=False,
        tail="[0-9a-f]{32}[:@]",
    ),
    _Rule("artifactory-token", ("AKCp",), r"AKCp[A-Za-z0-9]{60,1024}"),
    # Source hosting and package registries.
    _Rule("github-token", _prefixed("gh", "p_", "o_", "u_", "s_", "r_"), r"gh[pousr]_[A-Za-z0-9]{36,1024}"),
    _Rule("github-fine-grained-token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{70,1024}"),
    _Rule(
        "gitlab-token",
        _prefixed("gl", "pat-", "dt-", "ft-", "soat-", "rt-", "cbt-", "imt-", "ptt-", "agent-", "oas-"),
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,1024}",
    ),
    _Rule("gitlab-token", ("GR1348941",), r"GR1348941[A-Za-z0-9_-]{20,1024}"),
    _Rule("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,1024}"),
    _Rule("pypi-token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50,1024}"),
    # Chat and collaboration.
    _Rule(
        "slack-token",
        _prefixed("xox", "a-", "b-", "p-", "o-", "s-", "r-", "e-"),
        r"xox[abposre]-[A-Za-z0-9-]{10,1024}",
    ),
    _Rule("slack-token", ("xapp-",), r"xapp-\d-[A-Za-z0-9-]{20,1024}"),
    _Rule(
        "slack-webhook",
        ("hooks.slack.com/",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,1024})",
    ),
    _Rule(
        "discord-webhook",
        ("discord.com/", "discordapp.com/"),
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{40,1024})",
    ),
    _Rule(
        "discord-bot-token",
        (".",),
        _edge(r"\w-") + r"[\w-]{24,28}\.[\w-]{6,7}\.[\w-]{27,40}(?![\w-])",
        _discord_head,
        bounded=False,
        tail=r"[a-z0-9_-]{6,7}\.[a-z0-9_-]{27}",
        back=28,
    ),
    _Rule(
        "telegram-bot-token",
        (":AA",),
        r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])",
        bounded=False,
        tail=r"[a-z0-9_-]{33}",
        back=10,
    ),
    _Rule("linear-api-key", ("lin_api_", "lin_oauth_"), r"lin_(?:api|oauth)_[A-Za-z0-9]{40,1024}"),
    _Rule("notion-token", ("ntn_",), r"ntn_[A-Za-z0-9]{40,1024}"),
    _Rule(
        "notion-token",
        ("secret_",),
        r"secret_[A-Za-z0-9]{43}(?![A-Za-z0-9])",
        _has_digit_and_letter,
        anchor=2,
    ),
    _Rule("atlassian-api-token", ("ATATT3",), r"ATATT3[A-Za-z0-9_=-]{50,1024}"),
    _Rule("postman-api-key", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _Rule("dropbox-token", ("sl.",), r"sl\.[A-Za-z0-9_-]{130,1024}", anchor=1),
    _Rule("twitter-bearer-token", ("A" * 21,), r"A{21}[A-Za-z0-9%]{30,1024}"),
    # AI providers. Anthropic precedes OpenAI: both start with "sk-".
    _Rule("anthropic-admin-key", ("sk-ant-admin01-",), r"sk-ant-admin01-[A-Za-z0-9_-]{20,1024}", anchor=1),
    _Rule("anthropic-api-key", ("sk-ant-",), r"sk-ant-[a-z]{3}\d{2}-[A-Za-z0-9_-]{20,1024}", anchor=1),
    _Rule(
        "openai-api-key",
        ("sk-",),
        r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,1024}",
        _random,
        anchor=1,
    ),
    _Rule("huggingface-token", ("hf_",), r"hf_[A-Za-z0-9]{34,1024}(?![A-Za-z0-9_])", _random),
    _Rule("huggingface-token", ("api_org_",), r"api_org_[A-Za-z0-9]{34}(?![A-Za-z0-9_])", _random),
    _Rule("replicate-token", ("r8_",), r"r8_[A-Za-z0-9]{37,1024}", anchor=1),
    _Rule("groq-api-key", ("gsk_",), r"gsk_[A-Za-z0-9]{48,1024}"),
    _Rule("xai-api-key", ("xai-",), r"xai-[A-Za-z0-9]{70,1024}"),
    _Rule("perplexity-api-key", ("pplx-",), r"pplx-[A-Za-z0-9]{40,1024}"),
    # Payments and messaging.
    _Rule(
        "stripe-secret-key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,1024}",
        anchor=1,
    ),
    _Rule("stripe-webhook-secret", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{24,1024}", anchor=1),
    _Rule(
        "shopify-token",
        _prefixed("shp", "at_", "ca_", "pa_", "ss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        anchor=1,
    ),
    _Rule(
        "square-token",
        _prefixed("sq0", "atp-", "csp-", "idp-"),
        r"sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,1024}",
        anchor=1,
    ),
    _Rule("square-token", ("EAAA",), r"EAAA[A-Za-z0-9_-]{60,1024}", anchor=1),
    _Rule("sendgrid-api-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", anchor=1),
    _Rule(
        "mailgun-api-key",
        ("key-",),
        r"key-[0-9a-f]{32}(?![A-Za-z0-9])",
        bounded=False,
        tail=r"(?<![a-z0-9_.-]key-)[0-9a-f]{32}",  # not "cache-key-<md5>"
    ),
    _Rule(
        "mailgun-api-key",  # the newer private key: <32 hex>-<8 hex>-<8 hex>
        ("-",),
        _edge("0-9a-f") + r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9a-f-])",
        bounded=False,
        tail=r"(?<=[0-9a-f]{32}-)[0-9a-f]{8}-[0-9a-f]{8}(?![0-9a-f-])",
        back=32,
    ),
    _Rule(
        "mailchimp-api-key",
        ("-us",),
        r"(?<![0-9a-f])[0-9a-f]{32}-us\d{1,2}(?!\d)",
        bounded=False,
        tail=r"\d",
        back=32,
    ),
    _Rule(
        "twilio-api-key",
        ("SK",),
        r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        _has_digit_and_letter,
        tail="[0-9a-f]{32}",
        anchor=1,
    ),
    # Generic token formats.
    _Rule(
        "jwt",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{0,4096}"
        r"(?:\.[A-Za-z0-9_-]{1,8192}){0,2}",  # JWE has five parts
        anchor=1,
    ),
    _Rule(
        "password-hash",
        ("$2a$", "$2b$", "$2y$", "$5$", "$6$", "$argon2"),
        r"\$(?:2[aby]\$\d\d\$[./A-Za-z0-9]{53}"  # bcrypt
        r"|[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}"  # sha256crypt, sha512crypt
        r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{1,1024}\$[A-Za-z0-9+/]{20,1024})",
        bounded=False,
        tail="",
    ),
)

TOKEN_KINDS: frozenset[str] = frozenset(rule.kind for rule in _RULES)


def token_triggers(without: frozenset[str] = frozenset()) -> tuple[Trigger, ...]:
    """The vendor rules' triggers, leaving out rules of the kinds in ``without`` (for benchmarks)."""
    return tuple(trigger for rule in _RULES if rule.kind not in without for trigger in rule.triggers())
