"""`recall ui` over HTTP: every page, escaping, the Host/Origin guard, CSRF tokens, read-only mode and
errors; requests go through the real Starlette app over a real database file (browser tests:
tests/test_web_browser.py)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from starlette.testclient import TestClient
from webdata import PAYLOADS, WebData, build

from recall import Memory
from recall.web import create_app

BASE = "http://127.0.0.1:8766"
POST_FORM = re.compile(r'<form method="post"')


@pytest.fixture
def data(memory: Memory) -> WebData:
    return build(memory)


@pytest.fixture
def client(memory: Memory, data: WebData) -> Iterator[TestClient]:
    with TestClient(create_app(memory, project="spotter"), base_url=BASE) as opened:
        yield opened


@pytest.fixture
def read_only(memory: Memory, data: WebData) -> Iterator[TestClient]:
    with TestClient(create_app(memory, project="spotter", read_only=True), base_url=BASE) as opened:
        yield opened


def _token(client: TestClient, path: str) -> str:
    found = re.search(r'name="csrf_token" value="([0-9a-f]{64})"', client.get(path).text)
    assert found, f"no form on {path}"
    return found.group(1)


def _status(memory: Memory, decision: int) -> str:
    return str(memory.get(f"decision#{decision}").data["status"])


def test_every_page_answers_with_headers_that_forbid_script_framing_and_caching(
    client: TestClient, data: WebData
) -> None:
    paths = ["/", "/?project=*", "/sessions", f"/session/{data.main_session}", "/decisions", "/search",
             "/search?q=phoenix", "/health", "/review", "/connections", "/connections?name=mix+test", f"/row/decision/{data.sqlite}", f"/forget?ref=decision%23{data.sqlite}",
             "/static/style.css", "/static/icon.svg"]  # fmt: skip
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        policy = response.headers["content-security-policy"]
        assert (
            "default-src 'none'" in policy
            and "frame-ancestors 'none'" in policy
            and "script-src" not in policy
        )
        assert (
            response.headers["x-frame-options"] == "DENY" and response.headers["cache-control"] == "no-store"
        )


def test_the_overview_shows_what_is_in_force_and_a_chart_of_thirty_days(client: TestClient) -> None:
    html = client.get("/").text
    assert "Use SQLite for the local store" in html and "halfway through the phoenix upgrade" in html
    assert html.count('class="day"') == 30
    assert "mix phx.server doesnt seem to start" in html  # a recent session, titled by its summary
    other = client.get("/?project=nothing-here").text
    assert "nothing-here (nothing stored)" in other and "No decision in force" in other


def test_a_session_folds_tool_calls_hides_thinking_and_pages(client: TestClient, data: WebData) -> None:
    url = f"/session/{data.main_session}"
    html = client.get(url).text
    assert "page 1 of 3" in html and f"{url}?page=2" in html
    assert html.count('<details class="tool">') > 50 and '<details class="tool" open>' not in html
    assert '<details class="thinking">' in html and '<details class="thinking" open>' not in html
    assert '<details class="thinking" open>' in client.get(f"{url}?thinking=shown").text
    assert '<details class="tool" open>' in client.get(f"{url}?tools=shown").text
    assert "page 3 of 3" in client.get(f"{url}?page=3").text
    last = re.findall(r'id="message-(\d+)"', client.get(f"{url}?page=3").text)[-1]
    moved = client.get(f"/message/{last}", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == f"{url}?page=3#message-{last}"
    by_alias = client.get(f"/row/sessions/{data.main_session}", follow_redirects=False)
    assert by_alias.status_code == 303 and by_alias.headers["location"] == url


def test_search_links_by_query_string_and_draws_score_parts(client: TestClient) -> None:
    html = client.get("/search?q=phoenix&mode=hybrid&project=spotter").text
    assert "hybrid mode" in html and html.count('<li class="hit">') > 3
    widths = [float(w) for w in re.findall(r'width="([\d.]+)" height="10" class="score"', html)]
    assert widths and max(widths) > 0 and all(0 <= w <= 160 for w in widths)
    keyword = client.get("/search?q=phoenix&mode=keyword").text
    assert "keyword mode" in keyword and "(rank 1)" in keyword
    bad = client.get("/search?q=phoenix&mode=psychic")
    assert bad.status_code == 400 and "unknown search mode &#39;psychic&#39;" in bad.text


def test_connections_of_a_file_link_its_sessions_and_what_was_seen_with_it(
    client: TestClient, data: WebData
) -> None:
    file = "lib/spotter_web/live/session_live.ex"
    session = client.get(f"/session/{data.main_session}").text
    link = "/connections?name=lib%2Fspotter_web%2Flive%2Fsession_live.ex&amp;project=spotter"
    assert f'href="{link}"' in session
    html = client.get(link.replace("&amp;", "&")).text
    assert f"<code>{file}</code>" in html and f'href="/session/{data.main_session}"' in html
    assert (
        "edited with" in html and 'href="/connections?name=assets%2Fjs%2Fapp.js&amp;project=spotter"' in html
    )
    by_base_name = client.get("/connections?name=session_live.ex").text  # the default project: spotter
    assert f"<code>{file}</code>" in by_base_name
    missing = client.get("/connections?name=%3Cscript%3Enothing.py").text
    assert "No file, symbol, package, command or error named “&lt;script&gt;nothing.py”" in missing


def test_stored_html_is_shown_as_text_on_every_page(client: TestClient, data: WebData) -> None:
    pages = {
        "overview": "/",
        "session": f"/session/{data.hostile_session}",
        "decision log": "/decisions",
        "decision": f"/row/decision/{data.tagged}",
        "search": "/search?q=%22please+render%22&mode=keyword",
    }
    for name, path in pages.items():
        html = client.get(path).text
        for payload in PAYLOADS:
            assert payload not in html, name
        assert "<script" not in html and "onerror=" not in html.replace("onerror=&#34;", ""), name
    session = client.get(pages["session"]).text
    assert "please render &lt;script&gt;window.__xss" in session and "&lt;img src=x onerror=" in session
    assert "hostile &lt;script&gt;" in client.get("/").text
    assert "please render &lt;script&gt;" in client.get(pages["search"]).text
    assert "&lt;img src=x onerror=&#34;window.__xss" in client.get("/decisions").text
    row = client.get(pages["decision"]).text
    assert "<dt>source</dt><dd>ticket &lt;script&gt;" in row and "<code>ticket</code>: WEB-7" in row


def test_health_shows_doctor_and_counts_and_checks_again_when_its_report_is_old(
    client: TestClient, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = client.get("/health").text
    for heading in ("Database", "Embedding model", "Agents", "Secrets redacted", "Embedding backlog"):
        assert f"<h2>{heading}</h2>" in html
    assert "integrity check passed" in html and "No secret has been redacted" in html
    memory.add("learning", "CI pushes with ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", project="spotter")
    assert "No secret has been redacted" in client.get("/health").text  # the report is a minute old at most
    monkeypatch.setattr("recall.web.health.MAX_AGE", 0.0)
    deadline = time.monotonic() + 60
    while "<td>github-token</td><td>1</td>" not in (html := client.get("/health").text):
        assert time.monotonic() < deadline, "the health report was never made again"
        time.sleep(0.1)
    assert "Checked " in html


def test_requests_addressed_to_another_name_or_from_another_site_are_refused(client: TestClient) -> None:
    assert client.get("/", headers={"host": "evil.example"}).status_code == 421
    assert client.get("/", headers={"host": "localhost:8766"}).status_code == 200
    assert client.get("/", headers={"origin": "http://evil.example"}).status_code == 403


def test_an_action_needs_this_servers_token_and_origin(
    client: TestClient, memory: Memory, data: WebData
) -> None:
    ref = f"decision#{data.sqlite}"
    token = _token(client, f"/row/decision/{data.sqlite}")
    refused = [
        {"ref": ref},
        {"ref": ref, "csrf_token": "0" * 64},
        {"ref": ref, "csrf_token": token[::-1]},
    ]
    for form in refused:
        response = client.post("/actions/supersede", data=form)
        assert response.status_code == 403 and "reload the page" in response.text
    other_port = client.post(
        "/actions/supersede",
        data={"ref": ref, "csrf_token": token},
        headers={"origin": "http://127.0.0.1:3000"},
    )
    assert other_port.status_code == 403 and "another site or port" in other_port.text
    with TestClient(create_app(memory), base_url=BASE) as other_server:  # its own secret
        other_server.get("/")
        other_server.cookies.update(client.cookies)
        assert other_server.post("/actions/revert", data={"ref": ref, "csrf_token": token}).status_code == 403
    assert _status(memory, data.sqlite) == "active"


def test_supersede_and_revert_from_the_page_change_the_log(
    client: TestClient, memory: Memory, data: WebData
) -> None:
    token = _token(client, f"/row/decision/{data.sqlite}")
    form = {"ref": f"decision#{data.sqlite}", "by": f"decision#{data.postgres}", "csrf_token": token}
    done = client.post("/actions/supersede", data=form, headers={"origin": BASE}, follow_redirects=False)
    assert done.status_code == 303
    assert (
        done.headers["location"] == f"/decisions?project=spotter&changed={data.sqlite}#decision-{data.sqlite}"
    )
    assert memory.get(f"decision#{data.sqlite}").data["superseded_by"] == data.postgres
    log = client.get(done.headers["location"]).text
    assert f'id="decision-{data.sqlite}" class="event state-superseded changed"' in log
    assert f'by <a href="#decision-{data.postgres}">decision#{data.postgres}</a>' in log
    again = client.post("/actions/supersede", data=form)
    assert again.status_code == 409 and "only active decisions can be changed" in again.text
    client.post("/actions/revert", data={"ref": f"decision#{data.postgres}", "csrf_token": token})
    assert _status(memory, data.postgres) == "reverted"


def test_forget_from_the_page_takes_the_session_and_its_messages(
    client: TestClient, memory: Memory, data: WebData
) -> None:
    ref = f"session#{data.hostile_session}"
    confirm_page = f"/forget?ref={ref.replace('#', '%23')}"
    confirm = client.get(confirm_page).text
    assert "Forget session#" in confirm and "2 messages" in confirm
    done = client.post("/actions/forget", data={"ref": ref, "csrf_token": _token(client, confirm_page)})
    assert done.status_code == 200 and f"{ref} forgotten with 2 messages" in done.text
    assert memory.find(ref) is None and memory.find(f"message#{data.hostile_message}") is None
    assert client.get(f"/session/{data.hostile_session}").status_code == 404


def test_forget_one_message_from_its_session_page(client: TestClient, memory: Memory, data: WebData) -> None:
    ref = f"message#{data.hostile_message}"
    confirm_page = f"/forget?ref=message%23{data.hostile_message}"
    assert f'href="{confirm_page}"' in client.get(f"/session/{data.hostile_session}").text
    done = client.post("/actions/forget", data={"ref": ref, "csrf_token": _token(client, confirm_page)})
    assert done.status_code == 200 and f"{ref} forgotten" in done.text and "summary was rebuilt" in done.text
    assert memory.find(ref) is None and memory.find(f"session#{data.hostile_session}") is not None


def test_review_accepts_and_rejects_extracted_records_with_their_lines(
    client: TestClient, memory: Memory
) -> None:
    waiting = [item.ref for item in memory.review(project="spotter")]
    assert len(waiting) >= 3
    html = client.get("/review").text
    assert all(f'value="{ref}"' in html for ref in waiting) and "<q>" in html and 'href="/message/' in html
    token = _token(client, "/review")
    kept = client.post(
        "/actions/accept",
        data={"ref": waiting[0], "project": "spotter", "csrf_token": token},
        follow_redirects=False,
    )
    assert kept.status_code == 303 and kept.headers["location"] == "/review?project=spotter"
    thrown = client.post(
        "/actions/reject", data={"ref": waiting[1:3], "project": "spotter", "csrf_token": token}
    )
    assert thrown.status_code == 200 and all(f'value="{ref}"' not in thrown.text for ref in waiting[:3])
    assert [item.ref for item in memory.review(project="spotter")] == waiting[3:]
    assert memory.find(waiting[0]) is not None
    assert memory.find(waiting[1]) is None and memory.find(waiting[2]) is None
    nothing = client.post("/actions/accept", data={"project": "spotter", "csrf_token": token})
    assert nothing.status_code == 400 and "tick at least one record" in nothing.text


def test_read_only_serves_no_action_and_shows_no_form_that_changes(
    read_only: TestClient, memory: Memory, data: WebData
) -> None:
    for path in (
        "/",
        f"/session/{data.main_session}",
        "/decisions",
        f"/row/decision/{data.sqlite}",
        "/review",
    ):
        html = read_only.get(path).text
        assert not POST_FORM.search(html) and "Forget" not in html and "read-only" in html, path
    for action in (
        "supersede",
        "revert",
        "forget",
        "accept",
        "reject",
    ):  # not 403 for want of a token: not there
        response = read_only.post(f"/actions/{action}", data={"ref": f"decision#{data.sqlite}"})
        assert response.status_code == 404 and "read-only" in response.text
    assert read_only.get(f"/forget?ref=decision%23{data.sqlite}").status_code == 404
    assert _status(memory, data.sqlite) == "active" and memory.find(f"decision#{data.sqlite}") is not None


def test_bad_requests_get_one_line_that_says_what_is_wrong(client: TestClient, data: WebData) -> None:
    cases = {
        "/session/99999": (404, "no session with id 99999"),
        "/row/nonsense/1": (400, "unknown kind &#39;nonsense&#39;"),
        f"/session/{data.main_session}?page=two": (400, "expected a whole number"),
        "/message/99999": (404, "no message with id 99999"),
        "/nowhere": (404, "no such page here"),
    }
    for path, (status, words) in cases.items():
        response = client.get(path)
        assert response.status_code == status and words in response.text, path
        assert response.headers["content-type"].startswith("text/html")


def test_recall_ui_serves_from_the_command_line(tmp_path: Path, memory: Memory, data: WebData) -> None:
    command = [sys.executable, "-m", "recall", "--db", str(memory.path), "ui", "--port", "0", "--json"]
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert server.stdout is not None
        started = json.loads(server.stdout.readline())
        assert started["url"].startswith("http://127.0.0.1:") and started["read_only"] is False
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx2.get(started["url"] + "?project=spotter", timeout=30)
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert response.status_code == 200 and "Use SQLite for the local store" in response.text
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_port_in_use_is_one_line(memory: Memory) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "recall", "--db", str(memory.path), "ui", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    expected = (
        f"recall: cannot listen on 127.0.0.1:{port}: Address already in use; pick another with --port, "
        "or --port 0 for any free one"
    )
    assert done.stderr.strip().splitlines() == [expected]
