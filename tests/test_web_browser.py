"""`recall ui` in a real browser: headless Chromium opens the overview, searches, opens a session,
supersedes a decision and sees the log change, and meets hostile text that must never run.

The server is the real command (``python -m recall ui --port 0``) over a real database of real
transcripts, embedded with the real model so hybrid search has both score parts. Screenshots of
each page are written to ``tests/artifacts/ui/`` (``RECALL_TEST_ARTIFACTS`` moves them); each test
prints the path it wrote. Without Chromium these tests skip and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from browser import Browser, Page, find_chromium
from webdata import IMAGE, SCRIPT, WebData, build

from recall import Memory
from recall.search.embedder import Embedder

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium installed: apt-get install chromium (.ci/run does)"
    ),
]
ARTIFACTS = Path(os.environ.get("RECALL_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts") / "ui"


@dataclass(frozen=True, slots=True)
class Served:
    url: str  # ends with /
    data: WebData


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("ui")
    env = {name: value for name, value in os.environ.items() if name not in ("RECALL_PROJECT", "RECALL_DB")}
    env["RECALL_HOME"] = str(root / "home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RECALL_HOME", env["RECALL_HOME"])
        with Memory(root / "recall.db", embedder=minilm) as memory:
            data = build(memory)
            memory.embed()
    command = [sys.executable, "-m", "recall", "--db", str(root / "recall.db"), "ui", "--port", "0", "--json",
               "--project", "spotter"]  # fmt: skip
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root, env=env
    )
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        _wait_until_served(url)
        yield Served(url, data)
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    assert CHROMIUM is not None
    opened = Browser(CHROMIUM, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page()
    try:
        yield opened
    finally:
        browser.call("Target.closeTarget", targetId=opened.target)


def _wait_until_served(url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx2.get(url + "static/icon.svg", timeout=30)
            return
        except httpx2.TransportError:
            assert time.monotonic() < deadline, "recall ui did not start"
            time.sleep(0.05)


def _shot(page: Page, name: str) -> None:
    path = page.screenshot(ARTIFACTS / f"{name}.png")
    print(f"screenshot: {path}")


def _nothing_ran(page: Page) -> None:
    """No dialog, no script element, no image, no CSP violation, no uncaught error, no planted global."""
    events = page.events
    assert events.dialogs == [] and events.exceptions == []
    assert [line for line in events.console if "Content Security Policy" in line or "xss" in line] == []
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.count("script") == 0 and page.count("img") == 0 and page.count("[onerror]") == 0


def test_the_overview_in_a_browser(page: Page, served: Served) -> None:
    page.goto(served.url)
    assert page.text("h1") == "project spotter"
    assert page.count("svg rect.day") == 30
    assert "Use SQLite for the local store" in page.text("main")
    assert "halfway through the phoenix upgrade" in page.text("main")
    assert (
        page.evaluate("getComputedStyle(document.querySelector('header.top')).display") == "flex"
    )  # CSS loaded
    _nothing_ran(page)
    _shot(page, "overview")


def test_search_in_a_browser_draws_both_score_parts(page: Page, served: Served) -> None:
    page.goto(served.url + "search?q=the+phoenix+server+does+not+start&mode=hybrid&project=spotter")
    assert page.count("li.hit") >= 5
    widths = page.evaluate(
        "[...document.querySelectorAll('svg.bars')].map(svg => ['score', 'keyword', 'meaning'].map("
        "part => Number(svg.querySelector('rect.' + part).getAttribute('width'))))"
    )
    assert all(score > 0 for score, _, _ in widths)
    assert any(keyword > 0 for _, keyword, _ in widths) and any(meaning > 0 for _, _, meaning in widths)
    assert (
        page.evaluate("document.querySelector('form.search input[name=q]').value")
        == "the phoenix server does not start"
    )
    _nothing_ran(page)
    _shot(page, "search")


def test_open_a_session_from_the_overview(page: Page, served: Served) -> None:
    main = served.data.main_session
    page.goto(served.url)
    page.click(f"ul.sessions a.title[href='/session/{main}']")
    assert page.url.endswith(f"/session/{main}")
    assert "page 1 of 3" in page.text(".pager")
    assert page.count("details.tool") > 50 and page.count("details.tool[open]") == 0
    assert page.count("details.thinking") > 0 and page.count("details.thinking[open]") == 0
    hidden = "[...document.querySelectorAll('details.thinking .text')].every(e => !e.checkVisibility())"
    assert page.evaluate(hidden) is True
    _nothing_ran(page)
    _shot(page, "session")
    page.click(".pager a[rel=next]")
    assert "page 2 of 3" in page.text(".pager")
    page.click(".toggles a")  # show thinking
    assert page.count("details.thinking[open]") == page.count("details.thinking") > 0


def test_from_a_session_to_everything_connected_to_a_file(page: Page, served: Served) -> None:
    page.goto(served.url + f"session/{served.data.main_session}")
    page.click("ul.entities a[href*='session_live.ex']")
    assert "/connections?name=lib%2Fspotter_web%2Flive%2Fsession_live.ex" in page.url
    assert page.count(f"ul.sessions a[href='/session/{served.data.main_session}']") == 1
    assert page.count("a[href^='/connections?name=']") > 3  # what was seen with it, each a link
    _nothing_ran(page)
    _shot(page, "connections")


def test_supersede_a_decision_and_see_the_log_change(page: Page, served: Served) -> None:
    old, new = served.data.sqlite, served.data.postgres
    page.goto(served.url + "decisions")
    assert page.evaluate(f"document.getElementById('decision-{old}').className") == "event state-active"
    page.click(f"#decision-{old} a.button")
    assert page.url.endswith(f"/row/decision/{old}")
    page.evaluate(f"document.querySelector('select[name=by]').value = 'decision#{new}'")
    _shot(page, "decision")
    page.click("form[action='/actions/supersede'] button")
    assert f"/decisions?project=spotter&changed={old}" in page.url
    entry = page.text(f"#decision-{old}")
    assert (
        page.evaluate(f"document.getElementById('decision-{old}').className")
        == "event state-superseded changed"
    )
    assert "superseded" in entry and f"by decision#{new}" in entry
    chain = page.evaluate(
        f"[...document.getElementById('decision-{old}').closest('ol.timeline').children].map(li => li.id)"
    )
    assert chain == [f"decision-{old}", f"decision-{new}"]
    _nothing_ran(page)
    _shot(page, "decisions")


def test_review_a_record_and_see_it_leave_the_queue(page: Page, served: Served) -> None:
    page.goto(served.url + "review")
    waiting = page.evaluate("[...document.querySelectorAll('ol.review li.item')].map(li => li.id)")
    assert len(waiting) >= 3 and page.count("ul.sources a[href^='/message/']") >= len(waiting)
    _nothing_ran(page)
    _shot(page, "review")
    page.click(f"#{waiting[0]} form button")  # Accept
    assert page.url.endswith("/review?project=spotter")
    left = page.evaluate("[...document.querySelectorAll('ol.review li.item')].map(li => li.id)")
    assert left == waiting[1:]


def test_hostile_text_is_shown_and_never_runs(page: Page, served: Served) -> None:
    data = served.data
    pages = {
        "overview": ("", SCRIPT),  # the session title
        "session": (f"session/{data.hostile_session}", IMAGE),  # the message
        "decisions": ("decisions", IMAGE),  # the tag
        "decision": (f"row/decision/{data.tagged}", IMAGE),
        "search": ("search?q=%22please+render%22&mode=keyword&project=spotter", SCRIPT),
    }
    for name, (path, shown) in pages.items():
        page.goto(served.url + path)
        _nothing_ran(page)
        assert shown in page.text("main"), name
    page.goto(served.url + f"session/{data.hostile_session}")
    _shot(page, "hostile-text")


def test_health_in_a_browser(page: Page, served: Served) -> None:
    page.goto(served.url + "health")
    headings = page.evaluate("[...document.querySelectorAll('main h2')].map(h => h.innerText)")
    assert headings[:2] == ["Database", "Embedding model"]
    assert {"Secrets redacted", "Embedding backlog"} <= set(headings)
    assert "Nothing waits for a vector." in page.text("main")
    _nothing_ran(page)
    _shot(page, "health")
