"""The write-path scrubber: secrets out, look-alikes kept, invisible text gone, idempotent.

Fake secrets are assembled at run time (``"gh" + "p_" + ...``) so this file holds nothing a
secret scanner would flag.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata

import pytest

from recall.scrub import KINDS, Scrubbed, _lowercase, scrub, scrub_value
from recall.scrub.invisible import strip_invisible

MIXED = "Ab1Cd2Ef3Gh4Jk5Lm6Np7Qr8St9Uv0Wx"  # 32 chars, mixed case and digits
HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  # 64 hex chars
B64 = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDRA"  # 70 base64 chars


def _pem(label: str, newline: str = "\n") -> tuple[str, str]:
    lines = [B64[:64], (MIXED * 2)[:64], MIXED[:20] + "=="]
    body = newline.join(lines)
    return f"-----BEGIN {label}-----{newline}{body}{newline}-----END {label}-----", lines[1]


PEM_RSA, PEM_RSA_BODY = _pem("RSA PRIVATE KEY")
PEM_JSON, PEM_JSON_BODY = _pem("PRIVATE KEY", "\\n")
GH = "gh" + "p_" + MIXED + "AbCd"
JWT = "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + MIXED[:43]
PASSWORD = "Tr0ub4dor&3xK"

# (id, text, secret body that must vanish, kind that must be reported)
POSITIVES: list[tuple[str, str, str, str]] = [
    (
        "aws-access-key-id",
        "aws_access_key_id = AK" + "IAZ7RQ2MVK9QQW4TLB",
        "Z7RQ2MVK9QQW4TLB",
        "aws-access-key-id",
    ),
    ("aws-secret-ini", "aws_secret_access_key = " + MIXED + "wJal/K7+", MIXED, "aws-secret-access-key"),
    ("aws-secret-json", '"SecretAccessKey": "' + MIXED + 'wJalr/K7+Q",', MIXED, "aws-secret-access-key"),
    ("aws-secret-csv", "AK" + "IAZ7RQ2MVK9QQW4TLB," + MIXED + "wJal/K7+", MIXED, "aws-secret-access-key"),
    ("aws-session-token", "AWS_SESSION_TOKEN=" + B64, B64, "aws-session-token"),
    ("google-api-key", "key=AI" + "za" + MIXED + "Xy_", MIXED, "google-api-key"),
    (
        "google-oauth-client-secret",
        '"client_secret": "GOC' + "SPX-" + MIXED[:28] + '"',
        MIXED[:28],
        "google-oauth-client-secret",
    ),
    ("google-oauth-token", "ya" + "29." + MIXED + MIXED, MIXED, "google-oauth-token"),
    (
        "service-account-json",
        json.dumps({"type": "service_account", "private_key": PEM_RSA}),
        PEM_RSA_BODY,
        "private-key",
    ),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + B64 + "AbCd1234==;",
        B64,
        "azure-storage-key",
    ),
    (
        "azure-sas-token",
        "https://x.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=" + MIXED + "abc%3D",
        MIXED,
        "azure-sas-token",
    ),
    (
        "azure-shared-access-key",
        "Endpoint=sb://x/;SharedAccessKeyName=Root;SharedAccessKey=" + MIXED + "Ab1Cd2Ef3Gh=",
        MIXED,
        "azure-shared-access-key",
    ),
    (
        "azure-client-secret",
        "AZURE_CLIENT_SECRET=" + "Ab1" + "8Q~" + MIXED[:34],
        MIXED[:34],
        "azure-client-secret",
    ),
    ("digitalocean-token", "do" + "p_v1_" + HEX, HEX, "digitalocean-token"),
    ("github-classic", "git push https://x:" + GH + "@github.com/o/r", MIXED, "github-token"),
    ("github-oauth", "token gh" + "o_" + MIXED + "wxyz", MIXED, "github-token"),
    (
        "github-fine-grained",
        "github" + "_pat_" + MIXED[:22] + "_" + MIXED + MIXED[:27],
        MIXED[:22],
        "github-fine-grained-token",
    ),
    ("gitlab-pat", "PRIVATE-TOKEN: gl" + "pat-" + MIXED[:20], MIXED[:20], "gitlab-token"),
    ("gitlab-runner", "token = gl" + "rt-" + MIXED[:24], MIXED[:24], "gitlab-token"),
    ("slack-bot", "xo" + "xb-123456789012-123456789012-" + MIXED[:24], MIXED[:24], "slack-token"),
    ("slack-app", "xa" + "pp-1-A0123456789-1234567890123-" + HEX[:40], HEX[:40], "slack-token"),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + MIXED[:24],
        MIXED[:24],
        "slack-webhook",
    ),
    (
        "discord-bot",
        "client.run('MT" + "k4NzY1NDMyMTA5ODc2NTQz.GaBcDe." + MIXED + "xyz')",
        MIXED,
        "discord-bot-token",
    ),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/123456789012345678/" + MIXED + MIXED,
        MIXED,
        "discord-webhook",
    ),
    ("openai-legacy", "OPENAI_API_KEY=sk" + "-" + MIXED + "T3BlbkFJ" + MIXED[:12], MIXED, "openai-api-key"),
    ("openai-project", 'api_key="sk' + "-proj-" + MIXED + MIXED + '"', MIXED, "openai-api-key"),
    ("openai-service-account", "sk" + "-svcacct-" + MIXED + "_-" + MIXED, MIXED, "openai-api-key"),
    (
        "anthropic-api-key",
        "x-api-key: sk" + "-ant-api03-" + MIXED + MIXED + MIXED + "AA",
        MIXED,
        "anthropic-api-key",
    ),
    ("anthropic-admin-key", "sk" + "-ant-admin01-" + MIXED + MIXED + "AA", MIXED, "anthropic-admin-key"),
    ("huggingface", "HF_TOKEN=hf" + "_" + MIXED + "Yz", MIXED, "huggingface-token"),
    ("stripe-live", "Stripe.api_key = 'sk" + "_live_" + MIXED + "'", MIXED, "stripe-secret-key"),
    ("stripe-restricted", "rk" + "_live_" + MIXED, MIXED, "stripe-secret-key"),
    ("stripe-webhook", "STRIPE_WEBHOOK_SECRET=wh" + "sec_" + MIXED, MIXED, "stripe-webhook-secret"),
    ("sendgrid", "SG" + "." + MIXED[:22] + "." + MIXED + "Ab1Cd2Ef3Gh", MIXED[:22], "sendgrid-api-key"),
    ("mailgun-key", "api:ke" + "y-" + HEX[:32], HEX[:32], "mailgun-api-key"),
    (
        "mailgun-private-key",
        "MAILGUN_KEY: " + HEX[:32] + "-" + HEX[32:40] + "-" + HEX[40:48],
        HEX[:32],
        "mailgun-api-key",
    ),
    ("mailchimp", "MC_KEY " + HEX[:32] + "-us14", HEX[:32], "mailchimp-api-key"),
    ("twilio-api-key", "S" + "K" + HEX[:32], HEX[:32], "twilio-api-key"),
    (
        "twilio-auth-token",
        'Client("AC' + "0123456789abcdef" * 2 + '", "' + HEX[32:] + '")',
        HEX[32:],
        "twilio-auth-token",
    ),
    ("npm-token", "//registry.npmjs.org/:_authToken=np" + "m_" + MIXED + "Wxyz", MIXED, "npm-token"),
    ("npmrc-legacy", "//registry.npmjs.org/:_authToken=" + MIXED, MIXED, "npm-token"),
    ("pypi-token", "password = py" + "pi-AgEIcHlwaS5vcmc" + MIXED + MIXED, MIXED, "pypi-token"),
    ("pem-rsa", "cat id_rsa\n" + PEM_RSA + "\n", PEM_RSA_BODY, "private-key"),
    ("pem-openssh", _pem("OPENSSH PRIVATE KEY")[0], PEM_RSA_BODY, "private-key"),
    ("pem-ec", _pem("EC PRIVATE KEY")[0], PEM_RSA_BODY, "private-key"),
    ("pem-encrypted", _pem("ENCRYPTED PRIVATE KEY")[0], PEM_RSA_BODY, "private-key"),
    ("pem-pgp", _pem("PGP PRIVATE KEY BLOCK")[0], PEM_RSA_BODY, "private-key"),
    ("pem-json-escaped", '{"key": "' + PEM_JSON + '\\n"}', PEM_JSON_BODY, "private-key"),
    (
        "pem-truncated",
        "-----BEGIN RSA PRIVATE KEY-----\n" + B64[:64] + "\n" + (MIXED * 2)[:64] + "\n",
        MIXED,
        "private-key",
    ),
    (
        "pem-base64-kubeconfig",
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + B64,
        B64,
        "private-key",
    ),
    ("jwt", "id_token: " + JWT, MIXED[:43], "jwt"),
    ("bearer-header", 'curl -H "Authorization: Bearer ' + MIXED + '" https://api', MIXED, "bearer-token"),
    ("bearer-lowercase", "authorization: bearer " + MIXED, MIXED, "bearer-token"),
    (
        "basic-header",
        "Authorization: Basic YWRtaW46UzNjcjN0UGFzc3cwcmQh",
        "YWRtaW46UzNjcjN0UGFzc3cwcmQh",
        "basic-auth",
    ),
    ("authorization-token-scheme", "Authorization: Token " + MIXED, MIXED, "authorization-header"),
    ("requests-auth-tuple", 'requests.get(url, auth=("admin", "' + PASSWORD + '"))', PASSWORD, "basic-auth"),
    ("url-password", "postgres://admin:" + PASSWORD + "@db:5432/app", PASSWORD, "url-password"),
    ("url-password-at-sign", "mysql://root:p@ss" + PASSWORD + "@db/shop", PASSWORD, "url-password"),
    ("url-token-user", "https://" + MIXED + "@github.com/org/repo.git", MIXED, "url-password"),
    ("dotenv-password", "DB_PASSWORD=" + PASSWORD, PASSWORD, "secret-assignment"),
    ("export-quoted", "export SMTP_PASSWORD='" + PASSWORD + "'", PASSWORD, "secret-assignment"),
    ("yaml-password", "  password: " + PASSWORD, PASSWORD, "secret-assignment"),
    ("json-apikey", '{"apiKey": "' + MIXED + '"}', MIXED, "secret-assignment"),
    ("json-escaped", '{\\"password\\":\\"' + PASSWORD + '\\"}', PASSWORD, "secret-assignment"),
    ("python-constant", 'SECRET_KEY = "' + MIXED + '"', MIXED, "secret-assignment"),
    ("toml-token", 'token = "' + MIXED + '"', MIXED, "secret-assignment"),
    ("go-assign", 'dbPassword := "' + PASSWORD + '"', PASSWORD, "secret-assignment"),
    ("php-array", "'password' => '" + PASSWORD + "',", PASSWORD, "secret-assignment"),
    ("properties", "spring.datasource.password=" + PASSWORD, PASSWORD, "secret-assignment"),
    ("connection-string", "Server=db;User Id=sa;Password=" + PASSWORD + ";", PASSWORD, "secret-assignment"),
    ("query-string", "GET /v1/items?api_key=" + MIXED + "&page=2", MIXED, "secret-assignment"),
    ("header-x-api-key", "X-Api-Key: " + MIXED, MIXED, "secret-assignment"),
    (
        "cli-space-separated",
        "aws configure set aws_secret_access_key " + MIXED + "wJal/K7+",
        MIXED,
        "aws-secret-access-key",
    ),
    ("oauth-client-secret", "OAUTH_CLIENT_SECRET=" + MIXED, MIXED, "oauth-client-secret"),
    ("datadog", "DD_API_KEY=" + HEX[:32], HEX[:32], "datadog-api-key"),
    (
        "heroku-uuid",
        "HEROKU_API_KEY=01234567-89ab-4cde-8f01-23456789abcd",
        "89ab-4cde-8f01",
        "heroku-api-key",
    ),
    ("flag-equals", "mytool login --password=" + PASSWORD, PASSWORD, "secret-flag"),
    ("flag-space", "psql --password " + PASSWORD + " -h db", PASSWORD, "secret-flag"),
    ("flag-token", "gh-release --token " + MIXED, MIXED, "secret-flag"),
    ("flag-api-key", "cli deploy --api-key=" + MIXED, MIXED, "secret-flag"),
    ("flag-secret-quoted", "vault-sync --secret '" + PASSWORD + "'", PASSWORD, "secret-flag"),
    ("mysql-p", "mysql -u root -p" + PASSWORD + " app", PASSWORD, "secret-flag"),
    ("sshpass", "sshpass -p '" + PASSWORD + "' ssh deploy@host", PASSWORD, "secret-flag"),
    ("docker-login", "docker login -u ci -p " + PASSWORD + " ghcr.io", PASSWORD, "secret-flag"),
    ("redis-cli", "redis-cli -h db -a " + PASSWORD + " ping", PASSWORD, "secret-flag"),
    ("curl-user", "curl -u admin:" + PASSWORD + " https://ci/api", PASSWORD, "secret-flag"),
    ("netrc", "machine api.example.com login deploy password " + PASSWORD, PASSWORD, "netrc-password"),
    ("shopify", "sh" + "pat_" + HEX[:32], HEX[:32], "shopify-token"),
    ("square-oauth", "sq" + "0csp-" + MIXED + "Ab1Cd2Ef3Gh", MIXED, "square-token"),
    ("square-access", "EA" + "AA" + MIXED + MIXED, MIXED, "square-token"),
    ("heroku-new", "HR" + "KU-AA" + MIXED + MIXED, MIXED, "heroku-api-key"),
    (
        "sentry-dsn",
        "SENTRY_DSN=https://" + HEX[:32] + "@o123456.ingest.sentry.io/1234567",
        HEX[:32],
        "sentry-dsn",
    ),
    ("sentry-token", "sn" + "trys_" + MIXED + MIXED, MIXED, "sentry-token"),
    ("telegram", "bot = Bot('1234567890:AA" + MIXED + "a')", MIXED, "telegram-bot-token"),
    ("linear", "li" + "n_api_" + MIXED + "AbCdEfGh", MIXED, "linear-api-key"),
    ("notion-new", "nt" + "n_" + "12345678901" + MIXED + "Abc", MIXED, "notion-token"),
    ("notion-legacy", "secret" + "_" + MIXED + "Ab1Cd2Ef3Gh", MIXED, "notion-token"),
    ("postman", "PM" + "AK-" + HEX[:24] + "-" + HEX[24:58], HEX[24:58], "postman-api-key"),
    ("doppler", "dp" + ".st." + MIXED + "Ab1Cd2Ef3Gh4", MIXED, "doppler-token"),
    ("vault", "VAULT_TOKEN=hv" + "s." + MIXED, MIXED, "vault-token"),
    (
        "age",
        "AGE" + "-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
        "QPZRY9X8GF2TVDW0",
        "age-secret-key",
    ),
    ("databricks", "da" + "pi" + HEX[:32], HEX[:32], "databricks-token"),
    ("atlassian", "ATA" + "TT3" + MIXED + MIXED, MIXED, "atlassian-api-token"),
    ("grafana-cloud", "gl" + "c_" + MIXED + MIXED, MIXED, "grafana-token"),
    ("pulumi", "pu" + "l-" + HEX[:40], HEX[:40], "pulumi-token"),
    ("terraform", MIXED[:14] + ".atlas" + "v1." + MIXED + MIXED, MIXED, "terraform-token"),
    ("newrelic", "NR" + "AK-" + "ABCDEFGHIJ0123456789KLMNOPQ", "ABCDEFGHIJ0123456789", "newrelic-key"),
    ("supabase", "sb" + "p_" + HEX[:40], HEX[:40], "supabase-token"),
    ("replicate", "r8" + "_" + MIXED + "Ab1Cd", MIXED, "replicate-token"),
    ("groq", "gs" + "k_" + MIXED + MIXED[:20], MIXED, "groq-api-key"),
    ("xai", "xa" + "i-" + MIXED + MIXED + MIXED[:16], MIXED, "xai-api-key"),
    ("perplexity", "pp" + "lx-" + MIXED + MIXED[:16], MIXED, "perplexity-api-key"),
    ("twitter", "A" * 21 + MIXED + MIXED, MIXED, "twitter-bearer-token"),
    ("artifactory", "AK" + "Cp" + MIXED + MIXED, MIXED, "artifactory-token"),
    ("dropbox", "sl" + "." + MIXED * 5, MIXED, "dropbox-token"),
    ("bcrypt", "admin:$2b$12$" + (MIXED + MIXED)[:53] + ":19000:0:99999:7:::", MIXED, "password-hash"),
    ("zero-width-split", "ghp\u200b_" + MIXED + "AbCd", MIXED, "github-token"),
    # Kinds of the layers under the vendor rules (tests/test_scrub_generalises.py has more).
    ("vendor-shape", "| docker | dckr" + "_pat_" + MIXED[:27] + " |", MIXED[:27], "vendor-token"),
    ("generated-run", "| prod | EAAG" + MIXED + MIXED + " |", MIXED, "generated-token"),
    ("session-name", "session=" + MIXED, MIXED, "session-token"),
    ("signature-param", "https://x.s3.amazonaws.com/k?X-Amz-Signature=" + HEX, HEX, "signature"),
    ("cookie-header", "Cookie: theme=dark; sid=" + MIXED, MIXED, "cookie"),
    (
        "webhook-path",
        "https://acme.webhook.office.com/webhookb2/" + HEX[:32] + "/IncomingWebhook/" + MIXED,
        MIXED,
        "webhook-url",
    ),
    ("pgpass-line", "db.internal:5432:app:app_user:" + PASSWORD, PASSWORD, "pgpass-password"),
    ("stated-password", "The staging admin password is " + PASSWORD, PASSWORD, "stated-secret"),
    (
        "base64-blob",
        "config.json: " + base64.b64encode(('{"db_password": "' + PASSWORD + '"}').encode()).decode(),
        base64.b64encode(('{"db_password": "' + PASSWORD + '"}').encode()).decode()[8:24],
        "base64-secret",
    ),
]

# Look-alikes that must come back byte for byte unchanged.
BENIGN: list[tuple[str, str]] = [
    ("git-sha", "commit 3f2a9c1e4b5d6a7f8e9d0c1b2a3f4e5d6c7b8a90\nMerge: 3f2a9c1 e4b5d6a"),
    ("short-sha", "HEAD is now at 3f2a9c1 fix: handle empty token list"),
    ("uuid", '{"id": "550e8400-e29b-41d4-a716-446655440000"}'),
    ("docker-digest", "ghcr.io/org/app@sha256:" + HEX),
    ("sha256sum", HEX + "  dist/app-1.2.tar.gz"),
    ("pip-hash", "--hash=sha256:" + HEX),
    ("npm-integrity", '"integrity": "sha512-' + B64 + B64[:16] + '=="'),
    ("yarn-integrity", "  integrity sha1-" + B64[:27] + "="),
    ("sri", '<script integrity="sha384-' + B64[:64] + '"></script>'),
    ("go-sum", "github.com/pkg/errors v0.9.1 h1:" + B64[:43] + "="),
    ("data-uri", "![img](data:image/png;base64,iVBORw0KGgo" + B64 + ")"),
    ("base64-file", json.dumps({"encoding": "base64", "content": B64 + B64})),
    ("your-api-key", "export OPENAI_API_KEY=YOUR_API_KEY"),
    ("angle-placeholder", 'api_key = "<your-token>"'),
    ("xxx", "API_KEY=xxx"),
    ("masked-ghp", "GITHUB_TOKEN=gh" + "p_" + "x" * 36),
    ("env-brace", "DB_PASSWORD=${DB_PASSWORD}"),
    ("env-dollar", "psql --password $DB_PASSWORD"),
    ("os-environ", 'token = os.environ["API_KEY"]'),
    ("process-env", "const token = process.env.TOKEN;"),
    ("changeme", "password: changeme"),
    ("empty-password", "password="),
    ("empty-json", '"password": ""'),
    ("masked", "password: ********"),
    ("bullets", "Password: ••••••••"),
    ("redacted-marker", "DB_PASSWORD=[REDACTED:secret-assignment]"),
    ("redacted-bearer", "Authorization: Bearer [REDACTED:bearer-token]"),
    ("redacted-url", "postgres://admin:[REDACTED:url-password]@db:5432"),
    ("getpass", "password = getpass()"),
    ("get-token", "token = get_token()"),
    ("password-kwarg", "return login(username=username, password=password)"),
    ("annotation", "token: str"),
    ("annotation-optional", "    api_key: Optional[str] = None"),
    ("ts-annotation", "  password?: string;"),
    ("attribute", "self.token = token"),
    ("fstring-bearer", 'headers = {"Authorization": f"Bearer {token}"}'),
    ("bearer-env", 'curl -H "Authorization: Bearer $TOKEN" https://api'),
    ("bearer-angle", "Authorization: Bearer <token>"),
    ("bearer-prose", "Bearer tokens go in the Authorization header."),
    ("basic-prose", "Basic usage: run the server, then open the page."),
    ("www-authenticate", 'WWW-Authenticate: Bearer realm="api", Basic realm="x"'),
    ("max-tokens", "client.create(max_tokens=4096, temperature=0)"),
    ("token-count", "token_count: 1234\nprompt_tokens=12 completion_tokens=34"),
    ("k8s-secret-ref", "secretName: web-tls\nsecretKeyRef:\n  name: db\n  key: password"),
    ("password-file", "passwordFile: /run/secrets/db_password"),
    ("key-path", 'private_key_path = "~/.ssh/id_ed25519"'),
    ("password-stdin", "echo $PW | docker login -u ci --password-stdin ghcr.io"),
    ("token-file", "--token-file /var/run/secrets/token"),
    ("click-help", "Options:\n  --password TEXT  Database password.\n  --token TEXT     API token."),
    ("tokenizer", 'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")'),
    ("vault-template", 'password: "{{ vault_db_password }}"'),
    ("gha-secret", "token: ${{ secrets.GITHUB_TOKEN }}"),
    ("yaml-tag", "password: !vault |"),
    ("bool-auth", "auth: true\ncredentials: include"),
    ("prose-colon", "The password: must be at least 12 characters long."),
    ("url-plain", "https://github.com/org/repo/pull/123?page=2&limit=50"),
    ("url-user-only", "ssh://git@gitlab.example.com:2222/team/repo.git"),
    ("scp-url", "git@github.com:org/repo.git"),
    ("url-port", "postgres://localhost:5432/app"),
    ("url-placeholder-password", "postgres://user:password@localhost/db"),
    ("public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + B64[:43] + " dev@laptop"),
    ("certificate", "-----BEGIN CERTIFICATE-----\n" + B64[:64] + "\n-----END CERTIFICATE-----"),
    ("public-pem", "-----BEGIN PUBLIC KEY-----\n" + B64[:64] + "\n-----END PUBLIC KEY-----"),
    ("aws-example", "AWS_ACCESS_KEY_ID=AK" + "IAIOSFODNN7EXAMPLE"),
    ("twilio-sid-alone", "AC" + HEX[:32]),
    ("stripe-publishable", "pk_live_" + MIXED[:24]),
    ("arn", "arn:aws:iam::123456789012:role/deployer"),
    ("long-identifier", "AbstractSingletonProxyFactoryBeanDefinitionRegistryPostProcessor"),
    ("snake-identifier", "test_should_return_token_when_password_is_valid"),
    ("cache-key", "Cache restored from key: node-cache-key-" + HEX[:32]),
    ("docker-user", "docker run -u 1000:1000 image"),
    ("hex-color", "color: #a1b2c3; background: #ffffff;"),
    ("password-hash-column", 'cursor.execute("SELECT id FROM users WHERE password_hash = %s", (h,))'),
    ("comparison", 'if password == "":\n    raise ValueError'),
]


@pytest.mark.parametrize(("text", "body", "kind"), [p[1:] for p in POSITIVES], ids=[p[0] for p in POSITIVES])
def test_secret_is_removed_and_reported(text: str, body: str, kind: str) -> None:
    assert body in text.replace("\u200b", "")  # the case itself is sound
    result = scrub(text)
    assert body not in result.text
    assert kind in result.kinds
    assert f"[REDACTED:{kind}]" in result.text


@pytest.mark.parametrize("text", [b[1] for b in BENIGN], ids=[b[0] for b in BENIGN])
def test_look_alike_is_kept(text: str) -> None:
    assert scrub(text) == Scrubbed(text, ())


def test_every_kind_has_a_positive_case() -> None:
    assert KINDS - {p[3] for p in POSITIVES} == set()


def test_kind_names_are_kebab_case() -> None:
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", kind) for kind in KINDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=" + PASSWORD, "DB_PASSWORD=[REDACTED:secret-assignment]"),
        ("Authorization: Bearer " + MIXED, "Authorization: Bearer [REDACTED:bearer-token]"),
        (
            "postgres://admin:" + PASSWORD + "@db:5432/app",
            "postgres://admin:[REDACTED:url-password]@db:5432/app",
        ),
        ('{"apiKey": "' + MIXED + '"}', '{"apiKey": "[REDACTED:secret-assignment]"}'),
        ("AccountKey=" + B64 + "AbCd1234==;", "AccountKey=[REDACTED:azure-storage-key];"),
        ("--password=" + PASSWORD + " --verbose", "--password=[REDACTED:secret-flag] --verbose"),
    ],
    ids=["dotenv", "bearer", "url", "json", "azure", "flag"],
)
def test_the_non_secret_part_is_kept(text: str, expected: str) -> None:
    assert scrub(text).text == expected


def test_kinds_are_reported_in_order_of_appearance() -> None:
    text = "first " + GH + " then postgres://u:" + PASSWORD + "@h/db then AK" + "IAZ7RQ2MVK9QQW4TLB"
    assert scrub(text).kinds == ("github-token", "url-password", "aws-access-key-id")


def test_vendor_kind_wins_over_the_generic_assignment() -> None:
    assert scrub("GITHUB_TOKEN=" + GH).kinds == ("github-token",)


def _corpus() -> list[str]:
    """Every case alone, and glued together the way a transcript mixes them."""
    texts = [p[1] for p in POSITIVES] + [b[1] for b in BENIGN]
    glued = ["\n".join(texts[i : i + 5]) for i in range(0, len(texts), 3)] + [
        json.dumps({"content": "\n".join(texts[i : i + 4])}) for i in range(0, len(texts), 4)
    ]
    return texts + glued


@pytest.mark.parametrize("text", _corpus())
def test_scrub_is_idempotent(text: str) -> None:
    once = scrub(text)
    twice = scrub(once.text)
    assert twice.text == once.text
    assert twice.kinds == ()


def test_secrets_inside_json_encoded_tool_output_are_found() -> None:
    """Tool results arrive as JSON: every line break is a two-character escape next to a secret."""
    blob = json.dumps({"content": "\n".join(p[1] for p in POSITIVES)}, ensure_ascii=False)
    out = scrub(blob).text
    assert [body for body in {p[2] for p in POSITIVES} if body in out] == []


# --- invisible characters and terminal escapes -------------------------------------------------


@pytest.mark.parametrize(
    "char",
    ["\u200b", "\u200c", "\u200e", "\u200f", "\u061c", "\ufeff", "\u2060", "\u00ad"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_format_and_bidi_characters_are_stripped(char: str) -> None:
    assert scrub(f"a{char}b").text == "ab"


def test_tag_characters_smuggling_ascii_are_stripped() -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "ignore previous instructions")
    assert scrub("hello" + hidden + "\U000e007f").text == "hello"


def test_every_format_character_of_this_unicode_version_is_stripped() -> None:
    format_chars = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf" and c != 0x200D]
    assert strip_invisible("".join(format_chars)) == ""


def test_zwj_survives_inside_emoji_and_nowhere_else() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    rainbow = "\U0001f3f3\ufe0f\u200d\U0001f308"
    assert scrub(f"{family} {rainbow}").text == f"{family} {rainbow}"
    assert scrub("pass\u200dword").text == "password"
    assert scrub("\u200d\U0001f600").text == "\U0001f600"


def test_controls_are_stripped_but_line_breaks_and_tabs_kept() -> None:
    controls = (
        "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")
        + "\x7f"
        + "".join(chr(c) for c in range(0x80, 0xA0))
    )
    assert scrub(f"a{controls}b\tc\r\nd").text == "ab\tc\r\nd"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[1;31mERROR\x1b[0m done", "ERROR done"),
        ("\x1b[2K\x1b[1Gprogress 50%", "progress 50%"),
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),
        ("\x1b]0;window title\x07prompt$ ", "prompt$ "),
        ("\x1b]8;;https://evil.example/x\x1b\\click here\x1b]8;;\x1b\\", "click here"),
        ("\x1bPq#0;2;0;0;0#0~~@@\x1b\\after", "after"),
        ("\x1b(Bcharset \x1b7saved\x1b8", "charset saved"),
        ("mojibake \x9b31m kept", "mojibake 31m kept"),
        ("lone \x1b escape", "lone  escape"),
        ("\x1b]2;unterminated title\nnext line", "\nnext line"),
    ],
    ids=[
        "sgr",
        "erase",
        "private-mode",
        "osc-title",
        "osc8-link",
        "dcs-sixel",
        "charset",
        "c1-alone",
        "lone",
        "unterminated",
    ],
)
def test_terminal_escapes_are_stripped(raw: str, clean: str) -> None:
    assert scrub(raw).text == clean


def test_plain_ascii_is_returned_as_is() -> None:
    text = "nothing to see here\n\tindented"
    assert strip_invisible(text) is text


def test_secret_hidden_behind_an_escape_is_still_found() -> None:
    result = scrub("\x1b[32m" + GH + "\x1b[0m")
    assert result.text == "[REDACTED:github-token]"


# --- structured values -------------------------------------------------------------------------


def test_scrub_value_walks_nested_json_and_uses_keys_as_context() -> None:
    value = {
        "cmd": "export GITHUB_TOKEN=" + GH,
        "env": {"password": PASSWORD, "user": "admin", "port": 5432},
        "args": ["--token", MIXED, "Authorization: Bearer " + MIXED],
        "notes": [{"text": "clean \u200bvalue"}, None, True, 1.5],
    }
    cleaned, kinds = scrub_value(value)
    assert cleaned == {
        "cmd": "export GITHUB_TOKEN=[REDACTED:github-token]",
        "env": {"password": "[REDACTED:secret-assignment]", "user": "admin", "port": 5432},
        # A lone generated string is a secret by its make-up alone (an argv token here).
        "args": ["--token", "[REDACTED:generated-token]", "Authorization: Bearer [REDACTED:bearer-token]"],
        "notes": [{"text": "clean value"}, None, True, 1.5],
    }
    assert kinds == ("github-token", "secret-assignment", "generated-token", "bearer-token")


def test_scrub_value_keeps_look_alikes_under_secret_keys() -> None:
    value = {"password": "${DB_PASSWORD}", "token": "", "api_key": "YOUR_API_KEY", "secret_name": "db-creds"}
    assert scrub_value(value) == (value, ())


def test_scrub_value_prefers_the_vendor_kind_under_a_secret_key() -> None:
    assert scrub_value({"password": GH}) == ({"password": "[REDACTED:github-token]"}, ("github-token",))


def test_changed_reflects_redactions_only() -> None:
    assert scrub("plain").changed is False
    assert scrub("a\u200bb").changed is False  # stripping is not a redaction
    assert scrub("DB_PASSWORD=" + PASSWORD).changed is True


def test_lowercase_twin_keeps_every_index() -> None:
    text = "\u0130stanbul TOKEN=x \u212a"
    lowered = _lowercase(text)
    assert len(lowered) == len(text)
    assert lowered.index("token") == text.index("TOKEN")


def test_lowercase_twin_lowers_ascii_letters_and_keeps_the_classes_of_the_rest() -> None:
    text = "ÉTÉ DB_PASSWORD=Tr0ub4dor&3xK — Straße ÅNGSTRÖM \u212a\u0130 \U0001f600 TOKEN"
    lowered = _lowercase(text)
    assert len(lowered) == len(text)
    assert [
        c.lower() if c.isascii() else c for c in text.replace("\u212a", "k").replace("\u0130", "i")
    ] == list(lowered)
    # What lets other letters keep their case: no code point's lowercase differs from it in a class
    # the scan's regexes use, but the two mapped above.
    classes = [re.compile(p) for p in (r"\w", r"\s", r"\d")]
    differing = {
        hex(cp)
        for cp in range(0x80, 0x110000)
        if not 0xD800 <= cp < 0xE000
        and (low := chr(cp).lower()) != chr(cp)
        and (
            len(low) != 1
            or low.isascii()
            or any(bool(c.match(chr(cp))) != bool(c.match(low)) for c in classes)
        )
    }
    assert differing == {"0x130", "0x212a"}


def test_a_secret_beside_letters_in_other_cases_and_scripts_is_found() -> None:
    result = scrub("ÉTÉ — Ünïcode DB_PASSWORD=" + PASSWORD + " İSTANBUL")
    assert PASSWORD not in result.text
    assert result.text.endswith(" İSTANBUL")
