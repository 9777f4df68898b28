"""Secrets of kinds the scrubber was not written for, in shell, JSON, diff and markdown contexts.

    python bench/scrub_novel.py              # fresh random values (the seed is printed)
    python bench/scrub_novel.py --seed 7     # repeat one run
    python bench/scrub_novel.py --json       # figures as JSON
    python bench/scrub_novel.py --failures   # every miss and every altered look-alike

The kinds follow the published formats of real vendors that recall has no rule for, a few made-up
vendors, and the places secrets sit in transcripts (prose, cookies, signed URLs, credential files,
base64 blobs, text split by invisible characters). The look-alikes are what must come back
unchanged: hashes, ids, public keys, placeholders, long identifiers, paths and prose.

A secret is *fully removed* when no 8-character window of it survives, *partly kept* when some
window survives but not the whole secret, and *missed* when it is stored as it was.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall.scrub import scrub

WINDOW = 8
PER_KIND = 8

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"
_SYMBOLS = "!@#%^&*-_+=?"
_WORDS = (
    "orbit", "velvet", "cactus", "lantern", "harbor", "maple", "quartz", "meadow", "pepper", "violin",
    "glacier", "copper", "falcon", "saddle", "thunder", "willow", "marble", "rocket", "cobalt", "ember",
    "tangerine", "puzzle", "walrus", "biscuit", "nebula", "pickle", "canyon", "juniper", "lobster", "radish",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Sample:
    kind: str
    context: str
    text: str
    secret: str = ""  # what must vanish (secrets only)


class Values:
    """Fresh random material; every secret is new on every run."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def of(self, alphabet: str, n: int) -> str:
        while True:
            value = "".join(self.r.choice(alphabet) for _ in range(n))
            classes = [c for c in (_LOWER, _UPPER, _DIGITS) if any(x in alphabet for x in c)]
            if n < 8 or all(any(x in c for x in value) for c in classes):
                return value

    def alnum(self, n: int) -> str:
        return self.of(_ALNUM, n)

    def urlsafe(self, n: int) -> str:
        return self.of(_URLSAFE, n)

    def hex(self, n: int) -> str:
        return self.of(_HEX, n)

    def upper_digits(self, n: int) -> str:
        return self.of(_UPPER + _DIGITS, n)

    def lower_digits(self, n: int) -> str:
        return self.of(_LOWER + _DIGITS, n)

    def digits(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + "".join(self.r.choice(_DIGITS) for _ in range(n - 1))

    def b64(self, n: int) -> str:
        return base64.b64encode(self.r.randbytes(n)).decode()

    def b64url(self, n: int) -> str:
        return base64.urlsafe_b64encode(self.r.randbytes(n)).decode().rstrip("=")

    def uuid(self) -> str:
        return str(uuid.UUID(bytes=self.r.randbytes(16), version=4))

    def password(self, first: str = "") -> str:
        while True:
            body = first + "".join(self.r.choice(_ALNUM + _SYMBOLS) for _ in range(self.r.randint(11, 18)))
            if all(any(x in c for x in body) for c in (_LOWER, _UPPER, _DIGITS, _SYMBOLS)):
                return body

    def words(self, n: int) -> str:
        return " ".join(self.r.sample(_WORDS, n))

    def user(self) -> str:
        return self.r.choice(["admin", "deploy", "svc_app", "ci-bot", "postgres", "jenkins", "ops"])

    def host(self) -> str:
        return self.r.choice(
            ["db.internal", "10.2.0.14", "pg-prod.cluster.local", "cache.svc", "mq.example.net"]
        )


# --- vendor tokens: (kind, vendor name, maker) ----------------------------------------------------

Token = Callable[[Values], str]
_VENDOR_TOKENS: tuple[tuple[str, str, Token], ...] = (
    ("docker-pat", "docker", lambda v: "dckr_" + "pat_" + v.urlsafe(27)),
    ("langsmith-key", "langsmith", lambda v: f"lsv2_{v.r.choice(['pt', 'sk'])}_{v.hex(32)}_{v.hex(10)}"),
    ("pinecone-key", "pinecone", lambda v: f"pcsk_{v.alnum(5)}_{v.alnum(63)}"),
    ("planetscale-password", "planetscale", lambda v: "pscale_" + "pw_" + v.urlsafe(43)),
    ("planetscale-token", "planetscale", lambda v: "pscale_" + "tkn_" + v.urlsafe(43)),
    ("tailscale-auth-key", "tailscale", lambda v: f"tskey-auth-k{v.alnum(11)}CNTRL-{v.alnum(33)}"),
    ("tailscale-api-key", "tailscale", lambda v: f"tskey-api-k{v.alnum(11)}CNTRL-{v.alnum(33)}"),
    ("mapbox-secret-token", "mapbox", lambda v: "sk." + _mapbox_body(v)),
    ("figma-token", "figma", lambda v: "figd_" + v.urlsafe(40)),
    ("posthog-personal-key", "posthog", lambda v: "phx_" + v.alnum(43)),
    ("buildkite-token", "buildkite", lambda v: "bkua_" + v.hex(40)),
    ("rubygems-key", "rubygems", lambda v: "rubygems_" + v.hex(48)),
    ("brevo-key", "brevo", lambda v: f"xkeysib-{v.hex(64)}-{v.alnum(16)}"),
    ("flutterwave-secret", "flutterwave", lambda v: f"FLWSECK_TEST-{v.hex(32)}-X"),
    ("contentful-pat", "contentful", lambda v: "CFPAT-" + v.urlsafe(43)),
    ("fly-token", "fly", lambda v: "fm2_" + v.b64url(90)),
    ("onepassword-service-token", "1password", lambda v: "ops_" + "eyJ" + v.b64url(180)),
    ("cerebras-key", "cerebras", lambda v: "csk-" + v.lower_digits(48)),
    ("nvidia-key", "nvidia", lambda v: "nvapi-" + v.urlsafe(64)),
    ("together-key", "together", lambda v: "tgp_v1_" + v.urlsafe(43)),
    ("fireworks-key", "fireworks", lambda v: "fw_" + v.alnum(24)),
    ("sourcegraph-token", "sourcegraph", lambda v: f"sgp_{v.hex(16)}_{v.hex(40)}"),
    ("circleci-token", "circleci", lambda v: f"CCIPAT_{v.alnum(22)}_{v.hex(40)}"),
    ("netlify-token", "netlify", lambda v: "nfp_" + v.alnum(36)),
    ("render-key", "render", lambda v: "rnd_" + v.alnum(32)),
    ("dynatrace-token", "dynatrace", lambda v: f"dt0c01.{v.upper_digits(24)}.{v.upper_digits(64)}"),
    ("easypost-key", "easypost", lambda v: "EZAK" + v.alnum(54)),
    ("nuget-key", "nuget", lambda v: "oy2" + v.lower_digits(43)),
    ("duffel-token", "duffel", lambda v: f"duffel_{v.r.choice(['live', 'test'])}_{v.urlsafe(43)}"),
    ("frameio-token", "frameio", lambda v: "fio-u-" + v.urlsafe(64)),
    ("typeform-token", "typeform", lambda v: f"tfp_{v.urlsafe(44)}_{v.urlsafe(14)}"),
    ("yandex-oauth-token", "yandex", lambda v: "y0_" + "AgAAAA" + v.urlsafe(52)),
    ("alibaba-access-key", "alibaba", lambda v: "LTAI" + v.alnum(20)),
    ("tencent-secret-id", "tencent", lambda v: "AKID" + v.alnum(32)),
    ("facebook-token", "facebook", lambda v: "EAAG" + v.alnum(160)),
    ("shippo-token", "shippo", lambda v: "shippo_live_" + v.hex(40)),
    ("adafruit-key", "adafruit", lambda v: "aio_" + v.alnum(28)),
    ("mailersend-token", "mailersend", lambda v: "mlsn." + v.hex(64)),
    ("airtable-pat", "airtable", lambda v: f"pat{v.alnum(14)}.{v.hex(64)}"),
    ("prefect-key", "prefect", lambda v: "pnu_" + v.alnum(36)),
    ("scalingo-token", "scalingo", lambda v: "tk-us-" + v.urlsafe(48)),
    ("harness-pat", "harness", lambda v: f"pat.{v.alnum(22)}.{v.alnum(24)}.{v.alnum(20)}"),
    ("infracost-key", "infracost", lambda v: "ico-" + v.alnum(32)),
    ("octopus-key", "octopus", lambda v: "API-" + v.upper_digits(26)),
    ("openrouter-key", "openrouter", lambda v: "sk-" + "or-v1-" + v.hex(64)),
    ("langfuse-secret-key", "langfuse", lambda v: "sk-" + "lf-" + v.uuid()),
    ("astra-token", "datastax", lambda v: f"AstraCS:{v.alnum(24)}:{v.hex(64)}"),
    ("zyxv-live-key", "zyxv", lambda v: "zyxv_live_" + v.alnum(40)),
    ("acme-prod-token", "acme", lambda v: "acme-prod-" + v.alnum(36)),
    ("qk9-token", "quokka", lambda v: "QK9." + v.b64url(36)),
    ("nvx-secret-key", "nvx", lambda v: "nvx_sk_" + v.alnum(32)),
    ("krkn-key", "kraken", lambda v: f"KRKN-{v.upper_digits(8)}-{v.alnum(32)}"),
)
# Tokens with no prefix at all: only their place can say what they are.
_BARE_TOKENS: tuple[tuple[str, str, Token], ...] = (
    ("cohere-key", "COHERE_API_KEY", lambda v: v.alnum(40)),
    ("mistral-key", "MISTRAL_API_KEY", lambda v: v.alnum(32)),
    ("algolia-admin-key", "ALGOLIA_ADMIN_KEY", lambda v: v.hex(32)),
    ("wandb-key", "WANDB_API_KEY", lambda v: v.hex(40)),
)


def _mapbox_body(v: Values) -> str:
    claims = json.dumps({"u": v.r.choice(["acme", "geo-team", "maps"]), "a": v.lower_digits(25)})
    return f"{base64.urlsafe_b64encode(claims.encode()).decode().rstrip('=')}.{v.urlsafe(22)}"


def _vendor_line(v: Values, vendor: str, token: str) -> tuple[str, str]:
    """(context, snippet) placing a token the way transcripts show it; some places name nothing."""
    name = vendor.upper().replace("-", "_").lstrip("0123456789") + v.r.choice(["_TOKEN", "_API_KEY", "_KEY"])
    choices = [
        ("shell", f"export {name}={token}"),
        ("shell", f'$ curl -s -H "Authorization: Bearer {token}" https://api.{vendor}.io/v1/me'),
        ("shell", f"$ {vendor} auth login --with-token {token}"),
        ("shell", f"{name}={token} ./scripts/deploy.sh --env staging"),
        ("json", json.dumps({"env": {name: token}, "region": "eu-west-1"})),
        ("json", json.dumps({"type": "tool_result", "content": f"wrote config\n{token}\ndone"})),
        ("json", json.dumps({"credentials": {vendor: {"token": token}}})),
        ("diff", f"@@ -1,3 +1,4 @@\n DEBUG=false\n+{name}={token}\n LOG_LEVEL=info"),
        ("diff", f'-    client = Client()\n+    client = Client("{token}")'),
        ("markdown", f"Use `{token}` for the staging account until Friday."),
        ("markdown", f"| service | credential |\n|---|---|\n| {vendor} | {token} |"),
        ("markdown", f"The new {vendor} key is {token}, the old one is revoked."),
    ]
    return v.r.choice(choices)


def _bare_line(v: Values, name: str, token: str) -> tuple[str, str]:
    choices = [
        ("shell", f"export {name}={token}"),
        ("json", json.dumps({name.lower(): token})),
        ("json", json.dumps({"env": {name: token}})),
        ("diff", f"+{name}={token}"),
        ("markdown", f"```env\n{name}={token}\n```"),
    ]
    return v.r.choice(choices)


# --- secrets known by their place: (kind, maker) -> (snippet, secret) -------------------------------

Placed = Callable[[Values], tuple[str, str]]


def _teams_webhook(v: Values) -> tuple[str, str]:
    tail = f"{v.hex(32)}/{v.uuid()}"
    url = f"https://acme.webhook.office.com/webhookb2/{v.uuid()}@{v.uuid()}/IncomingWebhook/{tail}"
    return f"TEAMS_WEBHOOK_URL={url}" if v.r.random() < 0.5 else f"posting to {url}", tail


def _flow_webhook(v: Values) -> tuple[str, str]:
    sig = v.urlsafe(43)
    url = (
        f"https://prod-{v.r.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{v.hex(32)}"
        f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}"
    )
    return f'curl -X POST "{url}" -d @card.json', sig


def _pgpass(v: Values) -> tuple[str, str]:
    password = v.password()
    return f"$ cat ~/.pgpass\n{v.host()}:5432:app:{v.user()}:{password}", password


def _git_credentials(v: Values) -> tuple[str, str]:
    token = v.alnum(40)
    return f"$ cat ~/.git-credentials\nhttps://{v.user()}:{token}@git.example.com", token


def _netrc_lines(v: Values) -> tuple[str, str]:
    password = v.password()
    return f"machine api.example.com\n  login {v.user()}@example.com\n  password {password}", password


def _secret_key_base(v: Values) -> tuple[str, str]:
    value = v.hex(128)
    return f"SECRET_KEY_BASE={value}", value


def _cookie(v: Values) -> tuple[str, str]:
    session = v.lower_digits(32)
    return f"> Cookie: sessionid={session}; csrftoken={v.alnum(32)}", session


def _set_cookie(v: Values) -> tuple[str, str]:
    value = v.b64url(48)
    return f"< Set-Cookie: session={value}; Path=/; HttpOnly; Secure", value


def _kaggle(v: Values) -> tuple[str, str]:
    key = v.hex(32)
    return json.dumps({"username": v.user(), "key": key}), key


def _prose_password(v: Values) -> tuple[str, str]:
    password = v.password()
    template = v.r.choice(
        [
            "The staging admin password is {p}",
            "fyi the db password for prod is {p} (rotate it after the demo)",
            "Password for the jenkins user: {p}",
            "I reset the root password to {p} so you can log in.",
            "the wifi password is `{p}`",
            "Her password was {p} and it still works on the old box.",
        ]
    )
    return template.format(p=password), password


def _passphrase(v: Values) -> tuple[str, str]:
    phrase = v.words(v.r.randint(3, 5))
    template = v.r.choice(
        [
            'The vault passphrase is "{p}".',
            "passphrase: {p}",
            "The GPG key passphrase is {p}",
            "secret: {p}",
        ]
    )
    return template.format(p=phrase), phrase


def _dollar_password(v: Values) -> tuple[str, str]:
    password = v.password("$")
    template = v.r.choice(['DB_PASSWORD="{p}"', "password: '{p}'", '{{"password": "{p}"}}'])
    return template.format(p=password), password


def _gcs_signed(v: Values) -> tuple[str, str]:
    sig = v.hex(512)
    url = (
        f"https://storage.googleapis.com/acme-exports/report.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256"
        f"&X-Goog-Credential=exporter%40acme.iam.gserviceaccount.com%2F20250301%2Fauto%2Fstorage%2Fgoog4_request"
        f"&X-Goog-Date=20250301T101500Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={sig}"
    )
    return f"Download: {url}", sig


def _aws_presigned(v: Values) -> tuple[str, str]:
    sig = v.hex(64)
    url = (
        f"https://acme-bucket.s3.eu-west-1.amazonaws.com/backup.tar.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Date=20250301T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}"
    )
    return f"curl -o backup.tar.gz '{url}'", sig


def _cloudfront_signed(v: Values) -> tuple[str, str]:
    sig = v.urlsafe(172).replace("-", "~")
    url = f"https://d111111abcdef8.cloudfront.net/video.mp4?Expires=1740000000&Signature={sig}&Key-Pair-Id=K2JCJMDEHXQW5F"
    return url, sig


def _k8s_secret(v: Values) -> tuple[str, str]:
    config = json.dumps({"db_host": v.host(), "db_password": v.password()})
    blob = base64.b64encode(config.encode()).decode()
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-config\ndata:\n  config.json: {blob}", blob


def _dockerconfig(v: Values) -> tuple[str, str]:
    auth = base64.b64encode(f"{v.user()}:{v.password()}".encode()).decode()
    blob = base64.b64encode(json.dumps({"auths": {"registry.example.com": {"auth": auth}}}).encode()).decode()
    return f"data:\n  .dockerconfigjson: {blob}\ntype: kubernetes.io/dockerconfigjson", blob


def _b64_env(v: Values) -> tuple[str, str]:
    blob = base64.b64encode(
        f"DATABASE_URL=postgres://{v.user()}:{v.password()}@{v.host()}/app\n".encode()
    ).decode()
    return f"$ echo {blob} | base64 -d > .env", blob


def _url_userinfo(v: Values) -> tuple[str, str]:
    password = v.password().replace("@", "!").replace("#", "%")
    scheme = v.r.choice(["amqps", "mongodb+srv", "ftp", "smb", "sftp", "ldap", "rediss", "nats"])
    return f"BROKER={scheme}://{v.user()}:{password}@{v.host()}/vhost", password


def _split_invisible(v: Values) -> tuple[str, str]:
    token = "gh" + "p_" + v.alnum(36)
    cut = v.r.randint(6, 30)
    mark = v.r.choice(["\u200b", "\u2060", "\ufeff", "\u00ad", "\u200c", "\u034f"])
    return f"token in the log: {token[:cut]}{mark}{token[cut:]}", token


def _split_ansi(v: Values) -> tuple[str, str]:
    token = "sk_" + "live_" + v.alnum(40)
    cut = v.r.randint(8, 30)
    escape = v.r.choice(["\x1b[0m", "\x1b[1;31m", "\x1b[K", "\x1b]8;;\x07"])
    return f"STRIPE={token[:cut]}{escape}{token[cut:]}", token


def _aws_prose(v: Values) -> tuple[str, str]:
    key_id = "AKIA" + v.upper_digits(16)
    secret = v.of(_ALNUM + "+/", 40)
    template = v.r.choice(
        [
            "access key {i} with secret {s}",
            "Key ID {i}, and the secret key is {s}",
            "AWS creds for the sandbox: {i} / {s}",
        ]
    )
    return template.format(i=key_id, s=secret), secret


def _api_key_header(v: Values) -> tuple[str, str]:
    key = v.alnum(32)
    header = v.r.choice(
        ["X-API-Key", "X-Auth-Token", "Api-Key", "PRIVATE-TOKEN", "Ocp-Apim-Subscription-Key"]
    )
    return f'curl -H "{header}: {key}" https://internal.example.com/api/v2/jobs', key


def _password_flags(v: Values) -> tuple[str, str]:
    password = v.password().replace("'", "")
    template = v.r.choice(
        [
            "mongosh -u {u} -p '{p}' --authenticationDatabase admin",
            "openssl pkcs12 -export -in cert.pem -out cert.p12 -passout pass:{p}",
            "zip -P '{p}' backup.zip dump.sql",
            "wget --user={u} --password='{p}' https://files.example.com/x.tgz",
            "java -Djavax.net.ssl.keyStorePassword={p} -jar app.jar",
        ]
    )
    return template.format(u=v.user(), p=password), password


def _ini_toml(v: Values) -> tuple[str, str]:
    password = v.password().replace('"', "")
    template = v.r.choice(
        [
            '[database]\nhost = "{h}"\npassword = "{p}"',
            "[smtp]\nuser = alerts\npass = {p}",
            '[tool.poetry.http-basic.private]\nusername = "ci"\npassword = "{p}"',
        ]
    )
    return template.format(h=v.host(), p=password), password


def _yaml_secret(v: Values) -> tuple[str, str]:
    value = v.urlsafe(40)
    name = v.r.choice(["client_secret", "signing_key", "webhookSecret", "auth_token", "session_secret"])
    return f"oauth:\n  client_id: my-app\n  {name}: {value}\n  scopes: [read]", value


def _curl_user(v: Values) -> tuple[str, str]:
    password = v.password().replace("'", "").replace(":", "")
    return f"curl -u {v.user()}:{password} https://ci.example.com/job/build/api/json", password


def _jdbc(v: Values) -> tuple[str, str]:
    password = v.password().replace("&", "").replace("#", "")
    return f"jdbc:postgresql://{v.host()}:5432/app?user={v.user()}&password={password}&ssl=true", password


def _session_secret(v: Values) -> tuple[str, str]:
    value = v.password()
    return f"SESSION_SECRET={value}", value


def _kubeadm(v: Values) -> tuple[str, str]:
    token = f"{v.lower_digits(6)}.{v.lower_digits(16)}"
    return (
        f"kubeadm join 10.0.0.1:6443 --token {token} --discovery-token-ca-cert-hash sha256:{v.hex(64)}",
        token,
    )


def _private_key_b64(v: Values) -> tuple[str, str]:
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + v.b64(300) + "\n-----END OPENSSH PRIVATE KEY-----\n"
    blob = base64.b64encode(pem.encode()).decode()
    return f"SSH_KEY_B64: {blob}", blob


def _basic_header(v: Values) -> tuple[str, str]:
    blob = base64.b64encode(f"{v.user()}:{v.password()}".encode()).decode()
    return f"> Proxy-Authorization: Basic {blob}", blob


_PLACED: tuple[tuple[str, Placed], ...] = (
    ("teams-webhook", _teams_webhook),
    ("power-automate-webhook", _flow_webhook),
    ("pgpass-line", _pgpass),
    ("git-credentials-line", _git_credentials),
    ("netrc-multiline", _netrc_lines),
    ("rails-secret-key-base", _secret_key_base),
    ("cookie-session", _cookie),
    ("set-cookie-session", _set_cookie),
    ("kaggle-key", _kaggle),
    ("prose-password", _prose_password),
    ("passphrase", _passphrase),
    ("dollar-password", _dollar_password),
    ("gcs-signed-url", _gcs_signed),
    ("aws-presigned-url", _aws_presigned),
    ("cloudfront-signed-url", _cloudfront_signed),
    ("k8s-secret-blob", _k8s_secret),
    ("dockerconfigjson", _dockerconfig),
    ("base64-env", _b64_env),
    ("url-userinfo", _url_userinfo),
    ("split-invisible", _split_invisible),
    ("split-ansi", _split_ansi),
    ("aws-secret-prose", _aws_prose),
    ("api-key-header", _api_key_header),
    ("password-flag", _password_flags),
    ("ini-toml-password", _ini_toml),
    ("yaml-secret", _yaml_secret),
    ("curl-user", _curl_user),
    ("jdbc-password", _jdbc),
    ("session-secret", _session_secret),
    ("kubeadm-token", _kubeadm),
    ("private-key-base64", _private_key_b64),
    ("proxy-basic-auth", _basic_header),
)


def _in_context(v: Values, snippet: str) -> tuple[str, str]:
    """(context, text): a snippet as shell output, a JSON tool result, a diff or markdown."""
    context = v.r.choice(["shell", "json", "diff", "markdown"])
    if context == "shell":
        return context, f"$ ./run.sh\n{snippet}\nexit 0"
    if context == "json":
        return context, json.dumps({"type": "tool_result", "tool_use_id": "x1", "content": snippet})
    if context == "diff":
        lines = "\n".join("+" + line for line in snippet.splitlines())
        return context, f"--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n{lines}"
    return context, f"Here is what I found:\n\n{snippet}\n\nLet me know."


def secret_samples(rng: random.Random, per_kind: int = PER_KIND) -> list[Sample]:
    v = Values(rng)
    out = []
    for kind, vendor, make in _VENDOR_TOKENS:
        for _ in range(per_kind):
            token = make(v)
            context, text = _vendor_line(v, vendor, token)
            out.append(Sample(kind, context, text, token))
    for kind, name, make in _BARE_TOKENS:
        for _ in range(per_kind):
            token = make(v)
            context, text = _bare_line(v, name, token)
            out.append(Sample(kind, context, text, token))
    for kind, place in _PLACED:
        for _ in range(per_kind):
            snippet, secret = place(v)
            context, text = _in_context(v, snippet)
            out.append(Sample(kind, context, text, secret))
    return out


# --- look-alikes that must stay as they are ---------------------------------------------------------


def _benign(v: Values) -> list[tuple[str, str]]:
    sha = v.hex(40)
    digest = v.hex(64)
    ident = v.alnum(24)
    return [
        ("git-sha", f"commit {sha}\nAuthor: Dev <dev@example.com>\n\n    fix flaky test"),
        ("git-sha", f"https://github.com/acme/api/commit/{sha}"),
        ("git-sha", f"HEAD is now at {sha[:7]} bump deps; merge base {v.hex(40)}"),
        ("uuid", f'{{"request_id": "{v.uuid()}", "session_id": "{v.uuid()}"}}'),
        ("uuid", f"trace={v.uuid()} span={v.hex(16)} status=200"),
        ("digest", f"docker pull ghcr.io/acme/api@sha256:{digest}"),
        ("digest", f"{digest}  dist/acme-1.4.2.tar.gz"),
        ("digest", f'"digest": "sha256:{digest}"'),
        ("integrity", f'"integrity": "sha512-{v.b64(64)}"'),
        ("integrity", f'<link rel="stylesheet" href="/a.css" integrity="sha384-{v.b64(48)}">'),
        ("integrity", f"github.com/acme/lib v1.2.3 h1:{v.b64(32)}"),
        ("publishable-key", f"STRIPE_PUBLISHABLE_KEY=pk_{v.r.choice(['live', 'test'])}_{v.alnum(99)}"),
        ("publishable-key", f'const stripe = Stripe("pk_live_{v.alnum(24)}");'),
        ("example-key", "AWS_ACCESS_KEY_ID=AKIA" + "IOSFODNN7EXAMPLE"),
        ("example-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"),
        ("placeholder", f"export {v.r.choice(['API_KEY', 'DB_PASSWORD', 'AUTH_TOKEN'])}=<your-key-here>"),
        ("placeholder", 'password: "${DB_PASSWORD}"'),
        ("placeholder", "GITHUB_TOKEN=ghp_" + "x" * 36),
        ("placeholder", "Authorization: Bearer $TOKEN"),
        ("placeholder", "password: ********"),
        (
            "long-identifier",
            f"com.acme.billing.internal.{v.r.choice(['InvoiceTokenRefresher', 'PasswordPolicyValidatorFactory'])}",
        ),
        ("long-identifier", "test_reset_password_rejects_expired_token_and_logs_the_attempt"),
        ("long-identifier", "AbstractAuthenticationProcessingFilterConfigurerAdapter"),
        ("long-identifier", "MAX_PASSWORD_RESET_ATTEMPTS_PER_HOUR = 5"),
        ("api-object-id", f'{{"id": "msg_01{v.alnum(22)}", "type": "message"}}'),
        ("api-object-id", f'"tool_use_id": "toolu_01{v.alnum(22)}"'),
        ("api-object-id", f"customer cus_{v.alnum(14)} paid invoice in_{ident}"),
        ("api-object-id", f'"id": "chatcmpl-{v.alnum(29)}", "object": "chat.completion"'),
        ("file-path", f"/home/dev/.cache/pip/wheels/{v.hex(2)}/{v.hex(2)}/{v.hex(56)}"),
        ("file-path", "C:\\Users\\dev\\AppData\\Roaming\\Code\\User\\settings.json"),
        ("file-path", "node_modules/.pnpm/@babel+core@7.24.0/node_modules/@babel/core/lib/index.js"),
        ("file-path", f"/var/lib/docker/overlay2/{v.hex(64)}/merged"),
        ("prose", "The password field is required."),
        ("prose", "Passwords must be at least 12 characters and the token expires after one hour."),
        ("prose", "The API key is stored in the secrets manager, not in the repo."),
        ("prose", "Reset your password from the settings page if the session has expired."),
        ("prose", "the secret is rotated every night by the cron job"),
        ("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{v.of(_ALNUM + '+/', 43)} dev@laptop"),
        ("public-key", f"-----BEGIN PUBLIC KEY-----\n{v.b64(48)}\n{v.b64(48)}\n-----END PUBLIC KEY-----"),
        ("resource-id", f"aws ec2 describe-instances --instance-ids i-{v.hex(17)} --region eu-west-1"),
        ("resource-id", f"arn:aws:iam::{v.digits(12)}:role/deployer"),
        ("resource-id", f"api-7d4b9c8f6d-{v.lower_digits(5)}   1/1   Running   0   3d"),
        ("data-url", f"![chart](data:image/png;base64,{v.b64(120)})"),
        ("semver-url", "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz"),
        (
            "query-url",
            f"https://example.com/search?q=password+reset&page=2&utm_source=newsletter&ref={v.hex(8)}",
        ),
        *_more_benign(v),
    ]


def _more_benign(v: Values) -> list[tuple[str, str]]:
    """Ids, hashes, build names and sentences that real sessions are full of."""
    stripe = v.r.choice(["cus", "pi", "ch", "sub", "price", "prod", "evt", "acct", "seti", "pm", "txn", "po"])
    openai = v.r.choice(["call_", "asst_", "thread_", "run_", "msg_", "file-", "org-", "batch_", "ftjob-"])
    return [
        ("api-object-id", f'stripe.{stripe}.retrieve("{stripe}_{v.alnum(24)}")'),
        ("api-object-id", f'{{"id": "{openai}{v.alnum(24)}", "status": "completed"}}'),
        ("api-object-id", f'"request_id": "req_011C{v.alnum(20)}"'),
        ("api-object-id", f'{{"id": "PR_kwDO{v.alnum(14)}", "number": {v.r.randint(1, 999)}}}'),
        ("api-object-id", f'session_id: "{v.uuid()}"'),
        ("api-object-id", f'{{"sessionId": "{v.uuid()}", "cwd": "/home/dev/app"}}'),
        ("ulid", f"created order 01H{v.upper_digits(23)} for user 01J{v.upper_digits(23)}"),
        ("lockfile", f'checksum = "{v.hex(64)}"'),
        ("lockfile", f'hash = "sha256:{v.hex(64)}"'),
        (
            "lockfile",
            f'"resolved": "https://registry.npmjs.org/react/-/react-18.2.0.tgz",\n"integrity": "sha1-{v.b64(20)}"',
        ),
        ("lockfile", f'"reference": "{v.hex(40)}", "shasum": ""'),
        ("build-artifact", f"dist/assets/index-{v.urlsafe(8)}.js   142.31 kB │ gzip: 45.10 kB"),
        ("build-artifact", f"static/js/main.{v.hex(8)}.chunk.js"),
        ("build-artifact", f"ghcr.io/acme/api:sha-{v.hex(7)}"),
        ("build-artifact", f".Button_primary__{v.urlsafe(5)} {{ color: red }}"),
        ("temp-path", f"/var/folders/{v.lower_digits(2)}/{v.lower_digits(30)}/T/pytest-of-dev"),
        ("temp-path", f"/nix/store/{v.lower_digits(32)}-python3-3.11.9/bin/python3"),
        (
            "temp-path",
            f"~/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/{v.hex(40)}/",
        ),
        ("share-link", f"https://stackblitz.com/edit/{v.urlsafe(10)}?file=src%2Fmain.ts"),
        (
            "resource-id",
            f"aws ec2 delete-volume --volume-id vol-{v.hex(17)} && aws ec2 describe-subnets --subnet-ids subnet-{v.hex(17)}",
        ),
        ("resource-id", f"CONTAINER ID   IMAGE\n{v.hex(12)}   redis:7   Up 3 hours"),
        ("prose", "Set the API key in your environment before you run the tests."),
        ("prose", "We store a bcrypt hash of the password, never the password itself."),
        ("prose", "Rotate the signing key every 90 days and keep the old one for a week."),
        ("prose", "The session token is sent as an HttpOnly cookie."),
        ("prose", "If the token is missing, the client asks for a new one."),
        ("prose", "Your password was changed. If this wasn't you, reset it now."),
        ("placeholder", 'api_key = os.environ["OPENAI_API_KEY"]'),
        ("placeholder", 'password: "{{ .Values.db.password }}"'),
        ("placeholder", "SECRET_KEY=changeme-in-production"),
        ("placeholder", "token: <redacted>"),
        ("placeholder", "curl -H 'Authorization: Bearer YOUR_TOKEN_HERE' https://api.example.com"),
        ("code", "signature = inspect.signature(func)"),
        ("code", "session = requests.Session()"),
        ("code", "key: app.kubernetes.io/name\n  operator: In"),
        ("code", '{"key": "login.password.label", "value": "Password"}'),
        ("code", "cookie: theme=dark; lang=en-GB"),
        ("hash-in-prose", f"The MD5 of the tarball is {v.hex(32)} and the SHA-1 is {v.hex(40)}."),
        ("hex", f"mac 3c:22:fb:{v.hex(2)}:{v.hex(2)}:{v.hex(2)} ipv6 fe80::{v.hex(4)}:{v.hex(4)}"),
    ]


def benign_samples(rng: random.Random, rounds: int = PER_KIND) -> list[Sample]:
    v = Values(rng)
    out = []
    for _ in range(rounds):
        for family, snippet in _benign(v):
            context, text = _in_context(v, snippet)
            out.append(Sample(family, context, text))
    return out


# --- measuring --------------------------------------------------------------------------------------


def windows(secret: str) -> set[str]:
    runs = secret.split()
    return {run[i : i + WINDOW] for run in runs for i in range(max(1, len(run) - WINDOW + 1))}


def verdict(sample: Sample, output: str) -> str:
    """removed, partly kept or missed; a window the rest of the text also holds does not count."""
    if sample.secret in output:
        return "missed"
    around = sample.text.replace(sample.secret, " ")
    kept = [w for w in windows(sample.secret) if w in output and w not in around]
    return "partly-kept" if kept else "removed"


def measure(secrets: list[Sample], benign: list[Sample], fn: Callable[[str], Any] = scrub) -> dict[str, Any]:
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    per_context: dict[str, Counter[str]] = defaultdict(Counter)
    failures: list[dict[str, str]] = []
    for sample in secrets:
        out = fn(sample.text).text
        result = verdict(sample, out)
        per_kind[sample.kind][result] += 1
        per_context[sample.context][result] += 1
        if result != "removed":
            failures.append(
                {"kind": sample.kind, "result": result, "text": sample.text[:400], "out": out[:400]}
            )
    altered: list[dict[str, str]] = []
    altered_by_family: Counter[str] = Counter()
    for sample in benign:
        out = fn(sample.text).text
        if out != sample.text:
            altered_by_family[sample.kind] += 1
            altered.append({"family": sample.kind, "text": sample.text[:400], "out": out[:400]})
    total = Counter[str]()
    for counts in per_kind.values():
        total.update(counts)
    return {
        "secrets": len(secrets),
        "kinds": len(per_kind),
        "fully_removed_pct": round(100 * total["removed"] / len(secrets), 2),
        "partly_kept": total["partly-kept"],
        "missed": total["missed"],
        "benign": len(benign),
        "benign_altered_pct": round(100 * len(altered) / len(benign), 2),
        "kinds_not_fully_removed": {
            kind: dict(counts)
            for kind, counts in sorted(per_kind.items())
            if counts["removed"] < sum(counts.values())
        },
        "by_context_removed_pct": {
            context: round(100 * counts["removed"] / sum(counts.values()), 1)
            for context, counts in sorted(per_context.items())
        },
        "benign_altered_by_family": dict(altered_by_family),
        "failures": failures,
        "altered": altered,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="repeat a run (default: a fresh seed)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--failures", action="store_true", help="list every miss and altered look-alike")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else time.time_ns() % 2**32
    rng = random.Random(seed)
    report = measure(secret_samples(rng), benign_samples(rng))
    report["seed"] = seed
    if not args.failures:
        report.pop("failures")
        report.pop("altered")
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"seed {seed}: {report['secrets']} secrets of {report['kinds']} kinds; "
        f"fully removed {report['fully_removed_pct']}%, partly kept {report['partly_kept']}, "
        f"missed {report['missed']}; benign altered {report['benign_altered_pct']}% of {report['benign']}"
    )
    print(f"removed by context: {report['by_context_removed_pct']}")
    for kind, counts in report["kinds_not_fully_removed"].items():
        print(f"  {kind}: {counts}")
    if report["benign_altered_by_family"]:
        print(f"benign altered by family: {report['benign_altered_by_family']}")
    for item in report.get("failures", []) + report.get("altered", []):
        print(json.dumps(item))


if __name__ == "__main__":
    main()
