"""Deterministic corpus for the scrubber benchmark: fake secrets in transcript contexts, benign
look-alikes, and realistic messages for throughput.

Every fake is built at run time from a seeded RNG, so this file holds no literal-looking secret
for scanners to trip on. A secret sample records its *body* (the part that must vanish); a benign
sample must come back unchanged.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Sample", "benign_samples", "messages", "secret_samples"]

SEED = 20240611
PER_KIND = 60

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


@dataclass(frozen=True, slots=True)
class Sample:
    text: str
    kind: str  # expected kind for secrets; the look-alike family for benign samples
    body: str = ""  # secret material that must not survive (secrets only)


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    """Random string that contains at least one digit, lowercase and uppercase when possible."""
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        needs = [c for c in (_DIGITS, _LOWER, _UPPER) if any(x in alphabet for x in c)]
        if all(any(x in cls for x in value) for cls in needs) or n < 6:
            return value


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + "".join(rng.choice(_DIGITS) for _ in range(n - 1))


# --- standalone tokens: (kind, maker) where maker returns the token -------------------------

Maker = Callable[[random.Random], str]

_TOKENS: tuple[tuple[str, Maker], ...] = (
    ("aws-access-key-id", lambda r: r.choice(["AKIA", "ASIA"]) + _pick(r, _UPPER + "234567", 16)),
    ("google-api-key", lambda r: "AI" + "za" + _pick(r, _URLSAFE, 35)),
    ("google-oauth-client-secret", lambda r: "GOC" + "SPX-" + _pick(r, _URLSAFE, 28)),
    ("google-oauth-token", lambda r: "ya" + "29." + _pick(r, _URLSAFE, r.randint(60, 160))),
    ("digitalocean-token", lambda r: "do" + r.choice("opr") + "_v1_" + _hex(r, 64)),
    ("github-token", lambda r: "gh" + r.choice("pousr") + "_" + _pick(r, _ALNUM, 36)),
    (
        "github-fine-grained-token",
        lambda r: "github" + "_pat_" + _pick(r, _ALNUM, 22) + "_" + _pick(r, _ALNUM, 59),
    ),
    (
        "gitlab-token",
        lambda r: (
            r.choice(["gl" + "pat-", "gl" + "dt-", "gl" + "rt-", "gl" + "ft-"]) + _pick(r, _URLSAFE, 20)
        ),
    ),
    (
        "slack-token",
        lambda r: (
            "xo"
            + "x"
            + r.choice("bpar")
            + "-"
            + _digits(r, 12)
            + "-"
            + _digits(r, 12)
            + "-"
            + _pick(r, _ALNUM, 24)
        ),
    ),
    (
        "openai-api-key",
        lambda r: "sk" + "-" + r.choice(["proj-", "svcacct-", ""]) + _pick(r, _URLSAFE, r.choice([48, 120])),
    ),
    ("anthropic-api-key", lambda r: "sk" + "-ant-api03-" + _pick(r, _URLSAFE, 93) + "AA"),
    ("anthropic-admin-key", lambda r: "sk" + "-ant-admin01-" + _pick(r, _URLSAFE, 93) + "AA"),
    ("huggingface-token", lambda r: "hf" + "_" + _pick(r, _LOWER + _UPPER, 34)),
    (
        "stripe-secret-key",
        lambda r: r.choice(["sk", "rk"]) + "_" + r.choice(["live", "test"]) + "_" + _pick(r, _ALNUM, 99),
    ),
    ("stripe-webhook-secret", lambda r: "wh" + "sec_" + _pick(r, _ALNUM, 32)),
    ("sendgrid-api-key", lambda r: "SG" + "." + _pick(r, _URLSAFE, 22) + "." + _pick(r, _URLSAFE, 43)),
    (
        "mailgun-api-key",
        lambda r: r.choice(["ke" + "y-" + _hex(r, 32), f"{_hex(r, 32)}-{_hex(r, 8)}-{_hex(r, 8)}"]),
    ),
    ("twilio-api-key", lambda r: "S" + "K" + _hex(r, 32)),
    ("npm-token", lambda r: "np" + "m_" + _pick(r, _ALNUM, 36)),
    ("pypi-token", lambda r: "py" + "pi-AgEIcHlwaS5vcmc" + _pick(r, _URLSAFE, 120)),
    ("jwt", lambda r: _jwt(r)),
    ("shopify-token", lambda r: "sh" + "p" + r.choice(["at", "ss", "ca", "pa"]) + "_" + _hex(r, 32)),
    (
        "square-token",
        lambda r: r.choice(["sq" + "0atp-" + _pick(r, _URLSAFE, 22), "EA" + "AA" + _pick(r, _URLSAFE, 60)]),
    ),
    ("heroku-api-key", lambda r: "HR" + "KU-AA" + _pick(r, _URLSAFE, 58)),
    ("sentry-token", lambda r: "sn" + "trys_" + _pick(r, _ALNUM, 120)),
    ("telegram-bot-token", lambda r: _digits(r, 10) + ":" + "AA" + _pick(r, _URLSAFE, 33)),
    ("linear-api-key", lambda r: "li" + "n_api_" + _pick(r, _ALNUM, 40)),
    ("notion-token", lambda r: "nt" + "n_" + _digits(r, 11) + _pick(r, _ALNUM, 35)),
    ("postman-api-key", lambda r: "PM" + "AK-" + _hex(r, 24) + "-" + _hex(r, 34)),
    ("doppler-token", lambda r: "dp" + "." + r.choice(["st", "pt", "sa", "ct"]) + "." + _pick(r, _ALNUM, 44)),
    ("vault-token", lambda r: "hv" + "s." + _pick(r, _URLSAFE, r.choice([24, 90]))),
    ("age-secret-key", lambda r: "AGE" + "-SECRET-KEY-1" + _pick(r, _UPPER + _DIGITS, 58)),
    ("databricks-token", lambda r: "da" + "pi" + _hex(r, 32)),
    ("atlassian-api-token", lambda r: "ATA" + "TT3" + _pick(r, _URLSAFE, 180)),
    (
        "grafana-token",
        lambda r: r.choice(
            ["gl" + "c_" + _pick(r, _ALNUM, 60), "gl" + "sa_" + _pick(r, _ALNUM, 32) + "_" + _hex(r, 8)]
        ),
    ),
    ("pulumi-token", lambda r: "pu" + "l-" + _hex(r, 40)),
    ("terraform-token", lambda r: _pick(r, _ALNUM, 14) + ".atlas" + "v1." + _pick(r, _URLSAFE, 67)),
    ("newrelic-key", lambda r: "NR" + "AK-" + _pick(r, _UPPER + _DIGITS, 27)),
    ("supabase-token", lambda r: "sb" + "p_" + _hex(r, 40)),
    ("replicate-token", lambda r: "r8" + "_" + _pick(r, _ALNUM, 37)),
    ("groq-api-key", lambda r: "gs" + "k_" + _pick(r, _ALNUM, 52)),
    ("xai-api-key", lambda r: "xa" + "i-" + _pick(r, _ALNUM, 80)),
    ("perplexity-api-key", lambda r: "pp" + "lx-" + _pick(r, _ALNUM, 48)),
    ("twitter-bearer-token", lambda r: "A" * 21 + _pick(r, _ALNUM, 80)),
    (
        "discord-bot-token",
        lambda r: (
            r.choice("MNO")
            + _pick(r, _URLSAFE, 23)
            + "."
            + _pick(r, _URLSAFE, 6)
            + "."
            + _pick(r, _URLSAFE, 38)
        ),
    ),
    ("mailchimp-api-key", lambda r: _hex(r, 32) + "-us" + str(r.randint(1, 21))),
    (
        "azure-client-secret",
        lambda r: _pick(r, _ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + _pick(r, _ALNUM + "_~.-", 34),
    ),
    ("artifactory-token", lambda r: "AK" + "Cp" + _pick(r, _ALNUM, 69)),
    ("dropbox-token", lambda r: "sl" + "." + _pick(r, _URLSAFE, 138)),
)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(r: random.Random) -> str:
    header = _b64url(json.dumps({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    claims = {
        "sub": _digits(r, 10),
        "name": r.choice(["Ada", "Linus", "Grace"]),
        "iat": 1700000000 + r.randint(0, 10**6),
    }
    return f"{header}.{_b64url(json.dumps(claims).encode())}.{_pick(r, _URLSAFE, 43)}"


# Lines that carry a standalone token; {s} is the token.
_TOKEN_LINES = (
    "export {NAME}={s}",
    "{NAME}={s}",
    '{NAME}="{s}"',
    "  api_key: {s}",
    '"token": "{s}",',
    'client = Client(api_key="{s}")',
    "I rotated the old key {s} yesterday, please use the new one.",
    "curl -s https://api.example.com/v1/items?access_token={s}&page=2",
    "$ ./deploy.sh --token {s} --region eu-west-1",
    "ERROR auth.py:88 rejected credential {s} (401 Unauthorized)",
    "| prod | {s} | rotated |",
    "const client = new Client('{s}');",
)
_NAMES = ("API_KEY", "SERVICE_TOKEN", "AUTH", "CI_SECRET", "KEY", "CRED", "PROVIDER_TOKEN")


def _wrap(r: random.Random, snippet: str) -> str:
    """Place a snippet in one of the shapes transcript text takes."""
    style = r.randrange(8)
    if style == 0:
        return snippet
    if style == 1:  # a tool result as stored by the host: JSON with escaped newlines
        content = f"total 3\nconfig loaded from /srv/app/.env\n{snippet}\nok"
        return json.dumps(
            {"type": "tool_result", "tool_use_id": f"toolu_{_digits(r, 8)}", "content": content}
        )
    if style == 2:
        return f"Here is the file:\n\n```\n# settings\n{snippet}\nDEBUG=false\n```\n"
    if style == 3:
        return (
            f"2025-03-0{r.randint(1, 9)}T10:{r.randint(10, 59)}:00Z DEBUG worker-{r.randint(1, 9)} {snippet}"
        )
    if style == 4:
        return (
            "Traceback (most recent call last):\n"
            '  File "/srv/app/main.py", line 42, in <module>\n'
            f"    {snippet}\nRuntimeError: request failed with status 403"
        )
    if style == 5:
        return f"$ cat .env.production\n{snippet}\nLOG_LEVEL=info\n$ "
    if style == 6:
        return f"@@ -3,6 +3,7 @@ services:\n   image: app:latest\n+  {snippet}\n   restart: always"
    return json.dumps(
        {"role": "assistant", "content": [{"type": "text", "text": f"Found this in the logs: {snippet}"}]}
    )


def _token_samples(r: random.Random) -> list[Sample]:
    out = []
    for kind, maker in _TOKENS:
        for _ in range(PER_KIND):
            token = maker(r)
            line = r.choice(_TOKEN_LINES).replace("{NAME}", r.choice(_NAMES)).replace("{s}", token)
            out.append(Sample(_wrap(r, line), kind, token))
    return out


# --- secrets that need their context ----------------------------------------------------------


def _pem(r: random.Random) -> tuple[str, str]:
    label = r.choice(
        ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
    )
    lines = [_pick(r, _B64, 64) for _ in range(r.randint(4, 12))] + [_pick(r, _B64, 20) + "=="]
    body = "\n".join(lines)
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


def _contextual(r: random.Random) -> list[tuple[str, str, str]]:
    """(kind, snippet, body) for one random instance of every context-dependent kind."""
    b40 = _pick(r, _ALNUM + "/+", 40)
    password = _pick(r, _ALNUM + "!@#%^*", r.randint(10, 20))
    user = r.choice(["admin", "deploy", "app_user", "root", "svc-backup"])
    token = _pick(r, _ALNUM, r.randint(24, 48))
    hex32 = _hex(r, 32)
    pem, pem_body = _pem(r)
    userpass = base64.b64encode(f"{user}:{password}".encode()).decode()
    sid = "AC" + _hex(r, 32)
    account_key = _pick(r, _B64, 86) + "=="
    shared_key = _pick(r, _B64, 43)
    sas = _pick(r, _ALNUM, 40)
    host = r.choice(["db", "db.internal", "10.0.3.7", "postgres.prod.svc"])
    bcrypt = _pick(r, _ALNUM + "./", 53)
    slack = f"T{_pick(r, _UPPER + _DIGITS, 10)}/B{_pick(r, _UPPER + _DIGITS, 10)}/{_pick(r, _ALNUM, 24)}"
    discord = _pick(r, _URLSAFE, 68)
    pw_name = r.choice(
        ["DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS", "SMTP_PASSWORD"]
    )
    key_name = r.choice(["apiKey", "api_key", "secretKey", "accessToken", "authToken", "X-Api-Key"])
    choose = r.choice
    return [
        ("private-key", pem, pem_body),
        (
            "private-key",
            json.dumps({"type": "service_account", "private_key_id": _hex(r, 40), "private_key": pem + "\n"}),
            pem_body,
        ),
        (
            "aws-secret-access-key",
            choose(
                [
                    f"aws_secret_access_key = {b40}",
                    f'"SecretAccessKey": "{b40}",',
                    f"AWS_SECRET_ACCESS_KEY={b40}",
                    f"AKIA{_pick(r, _UPPER + '234567', 16)},{b40}",
                    f"awsSecretAccessKey: '{b40}'",
                ]
            ),
            b40,
        ),
        ("aws-session-token", f"aws_session_token = {token}{_pick(r, _B64, 120)}", token),
        (
            "azure-storage-key",
            (
                f"DefaultEndpointsProtocol=https;AccountName=stor{_digits(r, 4)};AccountKey={account_key};"
                "EndpointSuffix=core.windows.net"
            ),
            account_key,
        ),
        (
            "azure-sas-token",
            (
                f"https://stor{_digits(r, 4)}.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
                f"&se=2026-01-01T00:00:00Z&sig={sas}%3D"
            ),
            sas,
        ),
        (
            "azure-shared-access-key",
            (
                f"Endpoint=sb://bus{_digits(r, 3)}.servicebus.windows.net/;SharedAccessKeyName=Root;"
                f"SharedAccessKey={shared_key}="
            ),
            shared_key,
        ),
        ("slack-webhook", f"https://hooks.slack.com/services/{slack}", slack),
        ("discord-webhook", f"https://discord.com/api/webhooks/{_digits(r, 18)}/{discord}", discord),
        (
            "sentry-dsn",
            f"SENTRY_DSN=https://{hex32}@o{_digits(r, 6)}.ingest.sentry.io/{_digits(r, 7)}",
            hex32,
        ),
        (
            "twilio-auth-token",
            choose(
                [
                    f'client = Client("{sid}", "{hex32}")',
                    f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={hex32}",
                ]
            ),
            hex32,
        ),
        ("npm-token", f"//registry.npmjs.org/:_authToken={token}", token),
        (
            "oauth-client-secret",
            choose(
                [f'"client_secret": "{token}"', f"OAUTH_CLIENT_SECRET={token}", f"clientSecret: '{token}'"]
            ),
            token,
        ),
        ("datadog-api-key", f"DD_API_KEY={hex32}", hex32),
        (
            "bearer-token",
            choose(
                [
                    f'curl -H "Authorization: Bearer {token}" https://api.example.com/v2/me',
                    f"authorization: bearer {token}",
                    f'headers = {{"Authorization": "Bearer {token}"}}',
                    f"> GET /v1/models HTTP/1.1\n> Authorization: Bearer {token}",
                ]
            ),
            token,
        ),
        (
            "basic-auth",
            choose([f"Authorization: Basic {userpass}", f'-H "authorization: basic {userpass}"']),
            userpass,
        ),
        (
            "authorization-header",
            choose(
                [
                    f"Authorization: Token {token}",
                    f'"Authorization": "{token}"',
                    f"Authorization: Bot {token}",
                ]
            ),
            token,
        ),
        (
            "url-password",
            choose(
                [
                    f"postgres://{user}:{password}@{host}:5432/app",
                    f"DATABASE_URL=mysql://{user}:{password}@{host}/shop",
                    f"git clone https://{user}:{password}@git.example.com/team/repo.git",
                    f"redis://:{password}@{host}:6379/0",
                    f"amqp://{user}:{password}@{host}:5672/%2F",
                ]
            ),
            password,
        ),
        (
            "secret-assignment",
            *choose(
                [
                    (f"{pw_name}={password}", password),
                    (f'{key_name.lower()} = "{token}"', token),
                    (f'"password": "{password}"', password),
                    (f"  password: {password}", password),
                    (f"spring.datasource.password={password}", password),
                    (f"Server=tcp:{host};Database=app;User Id={user};Password={password};", password),
                    (f'{{\\"password\\":\\"{password}\\"}}', password),
                    (f"export {pw_name}='{password}'", password),
                    (f'db_password := "{password}"', password),
                    (f"'password' => '{password}',", password),
                    (f'{key_name}: "{token}"', token),
                    (f"ENCRYPTION_KEY={token}", token),
                ]
            ),
        ),
        (
            "secret-flag",
            *choose(
                [
                    (f"$ mytool login --password={password}", password),
                    (f"$ psql --password {password} -h {host}", password),
                    (f"$ gh-release --token {token}", token),
                    (f"$ cli deploy --api-key={token}", token),
                    (f"$ vault-sync --secret '{password}'", password),
                    (f"$ mysql -u {user} -p{password} app", password),
                    (f"$ sshpass -p '{password}' ssh {user}@{host}", password),
                    (f"$ docker login -u {user} -p {password} registry.example.com", password),
                    (f"$ redis-cli -h {host} -a {password} ping", password),
                    (f"$ curl -u {user}:{password} https://ci.example.com/api/json", password),
                ]
            ),
        ),
        ("netrc-password", f"machine api.example.com login {user} password {password}", password),
        (
            "secret-assignment",
            *choose(
                [
                    (f'"passphrase": "blue Horse {r.randint(10, 99)} staple!"', "blue Horse"),
                    (
                        f"  data:\n    password: {base64.b64encode(password.encode()).decode()}",
                        base64.b64encode(password.encode()).decode(),
                    ),
                    (f'docker run -e "POSTGRES_PASSWORD={password}" postgres:16', password),
                    (f"heroku config:set SECRET_KEY={token}", token),
                    (f'kubectl create secret generic db --from-literal=password="{password}"', password),
                ]
            ),
        ),
        ("password-hash", f"{user}:$2b$12${bcrypt}:19000:0:99999:7:::", bcrypt),
    ]


def _contextual_samples(r: random.Random) -> list[Sample]:
    by_kind: dict[str, list[Sample]] = {}
    while min((len(v) for v in by_kind.values()), default=0) < PER_KIND:
        for kind, snippet, body in _contextual(r):
            if len(by_kind.get(kind, ())) < PER_KIND:
                by_kind.setdefault(kind, []).append(Sample(_wrap(r, snippet), kind, body))
    return [s for samples in by_kind.values() for s in samples]


def secret_samples(seed: int = SEED) -> list[Sample]:
    r = random.Random(seed)
    return _token_samples(r) + _contextual_samples(r)


# --- benign look-alikes -----------------------------------------------------------------------


def _benign_makers(r: random.Random) -> list[tuple[str, str]]:
    """(family, text) for one random instance of each look-alike family."""
    sha = _hex(r, 40)
    uuid = f"{_hex(r, 8)}-{_hex(r, 4)}-4{_hex(r, 3)}-a{_hex(r, 3)}-{_hex(r, 12)}"
    sha256 = _hex(r, 64)
    b64_512 = base64.b64encode(r.randbytes(64)).decode()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + r.randbytes(r.randint(60, 300))).decode()
    word = r.choice(["user", "order", "invoice", "session", "build", "cache"])
    env = r.choice(["DB_PASSWORD", "API_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "SECRET_KEY"])
    return [
        ("git-sha", f"commit {sha}\nAuthor: Dev <dev@example.com>\n\n    fix: handle empty {word}"),
        ("git-sha", f"$ git checkout {sha[:7]}\nHEAD is now at {sha[:7]} refactor {word} loader"),
        ("git-sha", f'{{"sha": "{sha}", "url": "https://api.github.com/repos/o/r/commits/{sha}"}}'),
        ("git-sha", f"Merge: {sha[:7]} {_hex(r, 7)}\n{sha[:12]} (origin/main) bump deps"),
        (
            "uuid",
            f'{{"id": "{uuid}", "request_id": "{_hex(r, 8)}-{_hex(r, 4)}-4{_hex(r, 3)}-b{_hex(r, 3)}-{_hex(r, 12)}"}}',
        ),
        ("uuid", f"INFO trace_id={uuid} span={_hex(r, 16)} status=200"),
        ("uuid", f"session {uuid} resumed"),
        ("digest", f"docker pull ghcr.io/org/app@sha256:{sha256}"),
        ("digest", f'"digest": "sha256:{sha256}", "size": {r.randint(1000, 99999)}'),
        ("digest", f"{sha256}  dist/app-{r.randint(1, 9)}.{r.randint(0, 9)}.tar.gz"),
        ("digest", f"--hash=sha256:{sha256}"),
        ("digest", f"github.com/pkg/errors v0.9.1 h1:{base64.b64encode(r.randbytes(32)).decode()}"),
        ("integrity", f'"integrity": "sha512-{b64_512}"'),
        (
            "integrity",
            f'  integrity sha512-{b64_512}\n  resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{_hex(r, 40)}"',
        ),
        (
            "integrity",
            f'<script src="/app.js" integrity="sha384-{base64.b64encode(r.randbytes(48)).decode()}"></script>',
        ),
        ("base64-data", f"![chart](data:image/png;base64,{png})"),
        ("base64-data", json.dumps({"name": "logo.png", "encoding": "base64", "content": png})),
        (
            "base64-data",
            f"echo {base64.b64encode(f'hello {word} {r.randint(0, 999)}'.encode()).decode()} | base64 -d",
        ),
        ("placeholder", f"export {env}=YOUR_{env}"),
        ("placeholder", f'{env.lower()} = "<your-{word}-token>"'),
        ("placeholder", f"{env}=${{{env}}}"),
        ("placeholder", f'"Authorization": "Bearer ${{{env}}}"'),
        ("placeholder", f'curl -H "Authorization: Bearer ${env}" https://api.example.com/{word}s'),
        ("placeholder", f'token = os.environ["{env}"]'),
        ("placeholder", f"const token = process.env.{env};"),
        ("placeholder", f"password: {'*' * r.randint(6, 12)}"),
        ("placeholder", f"{env}="),
        ("placeholder", f"api_key: xxx{'x' * r.randint(0, 20)}"),
        ("placeholder", "AWS_ACCESS_KEY_ID=" + "AKIA" + "IOSFODNN7EXAMPLE"),
        ("placeholder", "password: changeme"),
        ("placeholder", f"GITHUB_TOKEN=ghp_{'x' * 36}"),
        ("placeholder", f"OPENAI_API_KEY=sk-...{_pick(r, _ALNUM, 4)}"),
        ("placeholder", f'password: "{{{{ vault_{word}_password }}}}"'),
        ("placeholder", f"[REDACTED:{r.choice(['github-token', 'secret-assignment', 'url-password'])}]"),
        ("placeholder", f"Authorization: Bearer <{word}-token>"),
        ("placeholder", f'db_password: "${{{{ secrets.{env} }}}}"'),
        ("code", "password = getpass()"),
        ("code", f"token = get_{word}_token()"),
        ("code", "return authenticate(username=username, password=password)"),
        ("code", f"def login(self, {word}: str, password: str) -> Token:"),
        ("code", "    api_key: str | None = None"),
        ("code", "token: str"),
        ("code", "  password?: string;"),
        ("code", f"self.token = {word}_token"),
        ("code", 'headers = {"Authorization": f"Bearer {token}"}'),
        ("code", f"response = client.chat(max_tokens={r.randint(100, 8000)}, temperature=0.2)"),
        ("code", f"usage: prompt_tokens={r.randint(10, 900)} completion_tokens={r.randint(10, 900)}"),
        ("code", f"token_count: {r.randint(1, 9999)}"),
        (
            "code",
            f"secretName: {word}-tls\n        secretKeyRef:\n          name: {word}-secrets\n          key: password",
        ),
        ("code", "passwordFile: /run/secrets/db_password"),
        ("code", "auth: true\ncredentials: include"),
        ("code", 'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")'),
        ("code", f"secret_key = settings.{env}"),
        ("code", f'password = config.get("{word}_password")'),
        ("code", "const token = req.headers.authorization?.split(' ')[1];"),
        ("code", 'private_key_path = "~/.ssh/id_ed25519"'),
        ("code", 'echo "$PASSWORD" | docker login --username ci --password-stdin ghcr.io'),
        ("code", "gh auth login --with-token < token.txt"),
        ("code", f'if token is None:\n    raise AuthError("missing {word} token")'),
        ("code", 'password=os.getenv("DB_PASSWORD"),'),
        ("code", 'cursor.execute("SELECT id FROM users WHERE password_hash = %s", (hashed,))'),
        ("code", "key: value\ntoken: ${{ secrets.GITHUB_TOKEN }}"),
        ("code", f"--token-file /var/run/{word}/token"),
        ("code", "Options:\n  --password TEXT  Database password.\n  --token TEXT     API token."),
        ("prose", "Bearer tokens are sent in the Authorization header; Basic auth uses base64."),
        ("prose", f"The password: must be at least {r.randint(8, 16)} characters long."),
        ("prose", f"Token: expired {r.randint(2, 9)} hours ago, refreshing."),
        ("prose", "Use `secrets.token_urlsafe(32)` to generate the key."),
        ("prose", f"Set the token: in the settings page, paste it and press save ({r.randint(1, 9)} steps)."),
        ("prose", f"Token refreshed: expires_in={r.randint(60, 7200)}"),
        ("prose", "| password | string | yes | The user's password |"),
        ("prose", 'git commit -m "fix: rotate the api key and drop the old secret"'),
        ("code", '"password": "Password",\n"password_confirmation": "Confirm password",'),
        ("code", 'auth: { type: "bearer", scheme: "jwt" }'),
        ("code", "const apiKey = useApiKey();"),
        ("code", f"api_key = settings.{env}"),
        ("code", "password: str = Field(..., min_length=8)"),
        ("code", 'def __init__(self, api_key: str = "", timeout: float = 30.0) -> None:'),
        ("code", "apiKey: import.meta.env.VITE_API_KEY,"),
        ("code", 'password=os.environ["DB_PASSWORD"],'),
        ("code", f"{env}: ${{{{ secrets.{env} }}}}"),
        ("code", '"secret": true, "tokens": ["a", "b"], "max_tokens": 1024'),
        ("code", "client_secret: <%= ENV['CLIENT_SECRET'] %>"),
        ("code", f"md5: {_hex(r, 32)}\nnonce: {_hex(r, 16)}\nkey_id: {_hex(r, 8)}"),
        ("code", f'"public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_pick(r, _B64, 43)}"'),
        ("code", f'publishable_key = "pk_live_{_pick(r, _ALNUM, 24)}"'),
        ("code", '{"token_type": "bearer", "expires_in": 3600, "scope": "read"}'),
        ("code", "if (token && token.length > 0) { return token; }"),
        ("code", 'assert response.json()["token"] == token'),
        ("code", 'password = "test"\nuser = "alice"'),
        ("code", "access_token_expiry: 3600\nrefresh_token_ttl: 86400"),
        ("url", f"https://github.com/org/{word}-service/pull/{r.randint(1, 9999)}"),
        ("url", f"git@github.com:org/{word}.git"),
        ("url", f"ssh://git@gitlab.example.com:2222/team/{word}.git"),
        ("url", f"http://localhost:{r.randint(3000, 9000)}/api/{word}s?page=2&limit=50"),
        ("url", f"postgres://localhost:5432/{word}_db"),
        ("url", f"https://deploy@ci.example.com/job/{word}/{r.randint(1, 500)}/console"),
        ("url", f"https://storage.googleapis.com/bucket/{word}/{_hex(r, 32)}.json"),
        ("identifier", f"com.example.{word}.authentication.TokenProviderImpl"),
        ("identifier", "test_should_return_token_when_password_is_valid"),
        ("identifier", f"AbstractSingleton{word.title()}FactoryBeanDefinitionRegistryPostProcessor"),
        ("identifier", f"arn:aws:iam::{_digits(r, 12)}:role/{word}-deployer"),
        ("identifier", f"{word}-api-{_hex(r, 10)}-{_pick(r, _LOWER + _DIGITS, 5)}   1/1   Running   0   3d"),
        ("identifier", f"AC{_hex(r, 32)}"),
        ("identifier", f"pk_live_{_pick(r, _ALNUM, 24)}"),
        ("identifier", f"{_digits(r, 12)}-{_pick(r, _LOWER + _DIGITS, 32)}.apps.googleusercontent.com"),
        ("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_pick(r, _B64, 43)} dev@laptop"),
        (
            "public-key",
            f"-----BEGIN CERTIFICATE-----\n{_pick(r, _B64, 64)}\n{_pick(r, _B64, 64)}\n-----END CERTIFICATE-----",
        ),
        ("public-key", f"-----BEGIN PUBLIC KEY-----\n{_pick(r, _B64, 64)}\n-----END PUBLIC KEY-----"),
        ("public-key", f"Key fingerprint = {' '.join(_hex(r, 4).upper() for _ in range(10))}"),
        ("hex", f'ETag: "{_hex(r, 32)}"\nx-amz-request-id: {_pick(r, _UPPER + _DIGITS, 16)}'),
        ("hex", f"CONTAINER ID   IMAGE\n{_hex(r, 12)}   postgres:16"),
        ("hex", f"color: #{_hex(r, 6)}; background: #{_hex(r, 6)};"),
        ("hex", f"object {_hex(r, 32)} at 0x{_hex(r, 12)}"),
    ]


def benign_samples(seed: int = SEED, per_family_instance: int = 30) -> list[Sample]:
    r = random.Random(seed + 1)
    out = []
    for _ in range(per_family_instance):
        for family, text in _benign_makers(r):
            out.append(Sample(_wrap_benign(r, text), family))
    return out


def _wrap_benign(r: random.Random, text: str) -> str:
    style = r.randrange(4)
    if style == 0:
        return text
    if style == 1:
        return json.dumps({"type": "tool_result", "content": f"{text}\n"})
    if style == 2:
        return f"```\n{text}\n```"
    return f"2025-03-0{r.randint(1, 9)}T11:{r.randint(10, 59)}:00Z INFO {text}"


# --- throughput messages ----------------------------------------------------------------------


def _blocks(text: str) -> tuple[str, ...]:
    """Snippets separated by a line holding only ``%%``."""
    return tuple(block.strip("\n") + "\n" for block in text.split("\n%%\n"))


_PROSE = _blocks("""\
I looked at the failing test and the problem is that the fixture creates the user before the
database migration runs, so the token table does not exist yet.
%%
Let me check how the config loader resolves the API key: it first reads the environment, then
falls back to the keyring, and finally prompts for a password.
%%
The build passes locally but CI fails on the lint step; ruff reports an unused import in
auth/session.py and a line that is too long.
%%
I'll refactor the retry logic into a small helper so the HTTP client and the webhook sender share
it, then add tests for the backoff schedule.
%%
Good catch. The migration was never applied on staging because the deploy job skipped the
`alembic upgrade head` step when the cache was warm. I've added it back and pinned the version.
%%
Here's the plan:
1. Split `parse_args` so the CLI and the daemon share validation.
2. Move the retry constants into settings.
3. Add a regression test for the empty-config case.
%%
The flaky test comes from the clock: `datetime.now()` is called twice across a second boundary.
Freezing time with the fixture makes it deterministic.
%%
Yes — the session cookie is marked `HttpOnly` and `Secure`, and the CSRF check runs before the
handler, so the form post is safe. Next I'll look at the rate limiter.
""")
_CODE = _blocks("""\
def refresh(self) -> None:
    token = self._store.get("access_token")
    if token is None or token.expired:
        token = self._client.fetch_token(scope=SCOPES)
        self._store.put("access_token", token)
    self.session.headers["Authorization"] = f"Bearer {token.value}"
%%
export async function getUser(id: string): Promise<User> {
  const res = await fetch(`${API}/users/${id}`, {
    headers: { Authorization: `Bearer ${process.env.API_TOKEN}` },
  });
  if (!res.ok) throw new Error(res.statusText);
  return res.json();
}
%%
class Settings(BaseSettings):
    database_url: str = "postgres://localhost:5432/app"
    secret_key: SecretStr
    api_key: str | None = None
    max_tokens: int = 4096
%%
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
\tvar req loginRequest
\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {
\t\thttp.Error(w, "bad request", http.StatusBadRequest)
\t\treturn
\t}
\tuser, err := s.users.Authenticate(r.Context(), req.Email, req.Password)
}
%%
@@ -12,7 +12,9 @@ def load(path: Path) -> Config:
-    data = yaml.safe_load(path.read_text())
+    text = path.read_text(encoding="utf-8")
+    data = yaml.safe_load(text) or {}
     return Config.model_validate(data)
%%
SELECT u.id, u.email, count(o.id) AS orders
FROM users u LEFT JOIN orders o ON o.user_id = u.id
WHERE u.created_at > now() - interval '30 days'
GROUP BY u.id ORDER BY orders DESC LIMIT 20;
%%
services:
  api:
    image: ghcr.io/acme/api:1.4.2
    environment:
      DATABASE_URL: postgres://api@db:5432/api
      LOG_LEVEL: info
    depends_on: [db]
""")
_OUTPUT = _blocks("""\
============================= test session starts ==============================
collected 128 items

tests/test_auth.py ........F...                                          [ 10%]
tests/test_store.py ..............................                       [ 35%]
%%
On branch main
Your branch is up to date with 'origin/main'.

Changes not staged for commit:
  modified:   recall/scrub/__init__.py
  modified:   tests/test_scrub.py
%%
drwxr-xr-x  5 dev staff   160 Mar  3 10:12 src
-rw-r--r--  1 dev staff  2048 Mar  3 10:12 pyproject.toml
-rw-r--r--  1 dev staff   512 Mar  3 10:11 .env.example
%%
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/httpx/_client.py", line 1001, in send
    response = self._send_handling_auth(request, auth=auth)
httpx.ConnectError: [Errno 111] Connection refused
%%
commit 8c1f0e2d9b7a6c5e4f3a2b1c0d9e8f7a6b5c4d3e
Author: Dev <dev@example.com>
Date:   Mon Mar 3 10:12:44 2025 +0100

    fix(auth): refresh the token before it expires
%%
npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.
added 412 packages, and audited 413 packages in 9s
found 0 vulnerabilities
%%
2025-03-03T10:12:44.123Z INFO  request_id=4f1c9a2e-8b7d-4c6e-9f0a-1b2c3d4e5f60 method=GET path=/api/v1/users status=200 dur_ms=12
2025-03-03T10:12:44.456Z WARN  slow query dur_ms=842 table=orders
""")


def messages(seed: int = SEED, count: int = 2000) -> list[str]:
    """Transcript-like messages of 200-2,000 characters: prose, code, tool output, JSON, logs.

    About 3% carry a secret and a third carry benign look-alikes, as real sessions do.
    """
    r = random.Random(seed + 2)
    secrets = secret_samples(seed)
    lookalikes = benign_samples(seed, 3)
    out = []
    for _ in range(count):
        target = r.randint(200, 2000)
        parts: list[str] = []
        while sum(map(len, parts)) < target:
            roll = r.random()
            if roll < 0.35:
                parts.append(r.choice(_PROSE))
            elif roll < 0.6:
                parts.append(r.choice(_CODE))
            elif roll < 0.85:
                parts.append(r.choice(_OUTPUT))
            elif roll < 0.99:
                parts.append(r.choice(lookalikes).text + "\n")
            else:
                parts.append(r.choice(secrets).text + "\n")
        text = "".join(parts)[:target]
        out.append(json.dumps({"type": "tool_result", "content": text}) if r.random() < 0.2 else text)
    return out
