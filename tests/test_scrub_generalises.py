"""Secrets the vendor rules were never written for: each case is a kind an outside check found
missing (issue 10) and must leave no 8-character fragment behind; the look-alikes must come back
exactly as they went in.

Fake secrets are assembled at run time (``"dckr" + "_pat_" + ...``) so this file holds nothing a
secret scanner would flag.
"""

from __future__ import annotations

import base64
import json

import pytest

from recall.scrub import make_scrubber, scrub

WINDOW = 8
R36 = "Zq8Lm2Xv7Rt4Kp9Wd3Hs6Nb1Fy5Jc0Ga8UeT4"  # 36 random-looking characters
HEX64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
PASSWORD = "Tr0ub4dor&3xKq"
AMPERSAND = "k&N3XJVJ^W5sQTYze"  # a password that older rules cut at its "&"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# (id, text, what must vanish)
MISSED: list[tuple[str, str, str]] = [
    # Vendor-style tokens with no rule of their own.
    ("docker-pat", "export DOCKER_PAT=dckr" + "_pat_" + R36[:27], R36[:27]),
    ("langsmith", "| langsmith | lsv2" + "_pt_" + HEX64[:32] + "_" + HEX64[32:42] + " |", HEX64[:32]),
    ("pinecone", "client = Pinecone('pcsk" + "_4x7Qa_" + R36 + R36[:20] + "')", R36),
    ("planetscale", "use pscale" + "_pw_" + R36 + "Ab1Cd2E for the branch", R36),
    ("tailscale", "| tailnet | tskey" + "-auth-kAb12Cd34Ef5CNTRL-" + R36 + " |", R36),
    ("mapbox-secret", "mapboxgl token: sk." + "eyJ1IjoiYWNtZSIsImEiOiJjbDJ4eTk5In0." + R36[:22], R36[:22]),
    ("unprefixed-generated", "| prod | EAAG" + R36 + R36 + " | rotated |", R36),
    # Places that say a secret follows, whatever it looks like.
    (
        "teams-webhook",
        "posting to https://acme.webhook.office.com/webhookb2/0d7e4c1a-1b2c-4d3e-8f9a-0b1c2d3e4f5a"
        "@9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/IncomingWebhook/"
        + HEX64[:32]
        + "/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        HEX64[:32],
    ),
    ("pgpass", "$ cat ~/.pgpass\ndb.internal:5432:app:app_user:" + PASSWORD, PASSWORD),
    ("secret-key-base", "SECRET_KEY_BASE=" + HEX64 + HEX64, HEX64),
    (
        "cookie-sessionid",
        "> Cookie: sessionid=" + "k3v9x2m7q8w1p4z6r5t0y2u8i7o3a1s9; theme=dark",
        "k3v9x2m7q8w1p4z6",
    ),
    ("kaggle-key", json.dumps({"username": "ada", "key": HEX64[:32]}), HEX64[:32]),
    ("dollar-password", 'DB_PASSWORD="$' + PASSWORD + '"', PASSWORD),
    (
        "gcs-signed-url",
        "https://storage.googleapis.com/b/o.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Expires=900"
        "&X-Goog-SignedHeaders=host&X-Goog-Signature=" + HEX64 + HEX64,
        HEX64,
    ),
    ("aws-presigned-url", "https://b.s3.amazonaws.com/k?X-Amz-Expires=60&X-Amz-Signature=" + HEX64, HEX64),
    ("azure-sig-urlsafe", "...&sv=1.0&sig=" + R36[:20] + "-_" + R36[:21], R36[:21]),
    ("ini-password", "[smtp]\nuser = alerts\npass = " + AMPERSAND, AMPERSAND),
    ("password-flag", "mongosh -u admin -p '" + PASSWORD + "' --authenticationDatabase admin", PASSWORD),
    ("openssl-pass", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:" + AMPERSAND, AMPERSAND),
    ("netrc-lines", "+machine api.example.com\n+  login ci@example.com\n+  password " + PASSWORD, PASSWORD),
    ("url-userinfo-question-mark", "BROKER=amqps://svc:?" + PASSWORD + "@mq.internal/vhost", PASSWORD),
    # Secrets said in words.
    ("prose-password", "The staging admin password is " + PASSWORD, PASSWORD),
    ("prose-password-for", "the db password for prod is " + PASSWORD + " (rotate it)", PASSWORD),
    ("passphrase", "The vault passphrase is orbit maple walrus cactus", "orbit maple walrus cactus"),
    ("passphrase-colon", "secret: harbor quartz violin", "harbor quartz violin"),
    ("aws-secret-in-prose", "key id AKIA" + "Q3HZ7KWM4ZZP2XRT, and the secret key is " + R36 + "wJal", R36),
    # Blobs and hiding places.
    ("k8s-secret-blob", "data:\n  config.json: " + _b64(json.dumps({"db_password": PASSWORD})), PASSWORD),
    (
        "dockerconfigjson",
        ".dockerconfigjson: " + _b64(json.dumps({"auths": {"r.io": {"auth": _b64("ci:" + PASSWORD)}}})),
        _b64(json.dumps({"auths": {"r.io": {"auth": _b64("ci:" + PASSWORD)}}}))[8:40],
    ),
    ("zero-width-in-json", json.dumps({"out": "gh" + "p_" + R36[:10] + "\u200b" + R36[10:]}), R36[10:]),
    ("ansi-in-json", json.dumps({"out": "sk" + "_live_" + R36[:12] + "\x1b[0m" + R36[12:]}), R36[12:]),
    ("grapheme-joiner", "gh" + "p_" + R36[:10] + "\u034f" + R36[10:], R36[10:]),
]

LOOK_ALIKES: list[tuple[str, str]] = [
    ("git-sha", "commit 8c1f0e2d9b7a6c5e4f3a2b1c0d9e8f7a6b5c4d3e\nAuthor: Dev <dev@example.com>"),
    (
        "uuid",
        '{"request_id": "4f1c9a2e-8b7d-4c6e-9f0a-1b2c3d4e5f60", "sessionId": "0d7e4c1a-1b2c-4d3e-8f9a-0b1c2d3e4f5a"}',
    ),
    ("digest", "docker pull ghcr.io/acme/api@sha256:" + HEX64),
    ("integrity", '"integrity": "sha512-' + _b64("x" * 64) + '"'),
    ("publishable", "const stripe = Stripe('pk" + "_live_" + R36[:24] + "');"),
    ("example-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"),
    ("placeholder", "export API_KEY=<your-key-here>\npassword: ${DB_PASSWORD}"),
    ("api-ids", '{"id": "msg_01' + R36[:22] + '", "tool_use_id": "toolu_01' + R36[2:24] + '"}'),
    ("stripe-ids", "customer cus_" + R36[:14] + " paid invoice in_" + R36[:24]),
    (
        "long-identifier",
        "AbstractAuthenticationProcessingFilterConfigurerAdapter.test_reset_password_rejects_token",
    ),
    (
        "file-path",
        "/var/lib/docker/overlay2/" + HEX64 + "/merged and ~/.cache/pip/wheels/ab/cd/" + HEX64[:56],
    ),
    (
        "prose",
        "The password field is required. The token is refreshed every hour; the API key is stored in Vault.",
    ),
    ("prose-reset", "Reset your password from the settings page if the session has expired."),
    ("cache-key", "Cache restored from key: node-cache-key-" + HEX64[:32]),
    ("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + R36 + "x9 dev@laptop"),
    (
        "base64-of-text",
        '{"encoding": "base64", "content": "' + _b64("hello world, this is a readme file") + '"}',
    ),
    ("versioned-file", "Looking up modules in dialyxir_erlang-28.1.1_elixir-1.19.2_deps-dev.plt"),
    ("claude-signature-free", "signature = inspect.signature(func)\nsession = requests.Session()"),
]


def _fragments(secret: str) -> set[str]:
    return {run[i : i + WINDOW] for run in secret.split() for i in range(max(1, len(run) - WINDOW + 1))}


@pytest.mark.parametrize(("text", "secret"), [c[1:] for c in MISSED], ids=[c[0] for c in MISSED])
def test_a_secret_of_a_kind_without_a_rule_leaves_no_fragment(text: str, secret: str) -> None:
    result = scrub(text)
    assert result.kinds, "nothing was redacted"
    kept = sorted(f for f in _fragments(secret) if f in result.text)
    assert not kept, f"fragments survived: {kept[:3]} in {result.text!r}"


@pytest.mark.parametrize("text", [c[1] for c in LOOK_ALIKES], ids=[c[0] for c in LOOK_ALIKES])
def test_a_look_alike_comes_back_unchanged(text: str) -> None:
    assert scrub(text).text == text


@pytest.mark.parametrize("text", [c[1] for c in MISSED + [(i, t, "") for i, t in LOOK_ALIKES]])
def test_scrubbing_twice_changes_nothing_more(text: str) -> None:
    once = scrub(text)
    twice = scrub(once.text)
    assert twice.text == once.text and twice.kinds == ()


def test_tokens_are_caught_without_their_vendor_rule() -> None:
    """The layers under the vendor rules catch a known vendor's token when its rule is gone."""
    token = "gh" + "p_" + R36
    blind = make_scrubber(frozenset({"github-token"}))
    assert scrub(f"token {token}").kinds == ("github-token",)
    assert blind(f"see {token} here").text == "see [REDACTED:vendor-token] here"
