"""Headless Chromium driven over the Chrome DevTools Protocol, for the web view's end-to-end tests.

Debian's ``chromium`` starts with a fresh profile, background networking, component updates and
sync switched off, and a DevTools port chosen by the browser (read from ``DevToolsActivePort``).
One websocket carries every call; pages are flat sessions on it. Each page records what a test
must see never happened: JavaScript dialogs (dismissed at once), console messages and log entries
(a Content-Security-Policy violation is one), and uncaught exceptions.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM_NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--remote-debugging-port=0",
)
TIMEOUT = 60.0  # a shared, loaded machine starts a browser slowly


def find_chromium() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


class CdpError(RuntimeError):
    pass


@dataclass
class PageEvents:
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    loads: int = 0


class Browser:
    def __init__(self, binary: str, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + TIMEOUT
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise CdpError(f"{binary} did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().split()[:2]
        self._closing = ExitStack()
        self._ws: ClientConnection = self._closing.enter_context(
            connect(f"ws://127.0.0.1:{port}{path}", max_size=None)
        )
        self._next = 0
        self._events: dict[str, PageEvents] = {}

    def new_page(self, width: int = 1280, height: int = 900) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self._events[session] = PageEvents()
        page = Page(self, session, target)
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            page.call(domain)
        page.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return page

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self._ws.send(json.dumps(message))
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    def wait_for_load(self, session: str, seen: int) -> None:
        """Until the page has fired more than ``seen`` load events."""
        deadline = time.monotonic() + TIMEOUT
        while self._events[session].loads <= seen:
            self._receive(deadline)

    def events(self, session: str) -> PageEvents:
        return self._events[session]

    def _receive(self, deadline: float) -> dict[str, Any]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CdpError("the browser did not answer in time")
        message: dict[str, Any] = json.loads(self._ws.recv(timeout=remaining))
        if "method" in message:
            self._record(message)
        return message

    def _record(self, message: dict[str, Any]) -> None:
        events = self._events.get(message.get("sessionId", ""))
        if events is None:
            return
        method, params = message["method"], message.get("params", {})
        if method == "Page.loadEventFired":
            events.loads += 1
        elif method == "Page.javascriptDialogOpening":
            events.dialogs.append(params.get("message", ""))
            # Dismiss it, or the page would wait for a click forever; the reply is not awaited.
            self._next += 1
            self._ws.send(json.dumps({"id": self._next, "method": "Page.handleJavaScriptDialog",
                                      "params": {"accept": False}, "sessionId": message["sessionId"]}))  # fmt: skip
        elif method == "Runtime.consoleAPICalled":
            events.console.append(" ".join(str(arg.get("value", "")) for arg in params.get("args", [])))
        elif method == "Log.entryAdded":
            events.console.append(params["entry"].get("text", ""))
        elif method == "Runtime.exceptionThrown":
            events.exceptions.append(params["exceptionDetails"].get("text", ""))

    def close(self) -> None:
        try:
            if hasattr(self, "_closing"):
                self._closing.close()
        finally:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


class Page:
    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self._browser = browser
        self.session = session
        self.target = target

    @property
    def events(self) -> PageEvents:
        return self._browser.events(self.session)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._browser.call(method, self.session, **params)

    def goto(self, url: str) -> None:
        seen = self.events.loads
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise CdpError(f"cannot open {url}: {result['errorText']}")
        self._browser.wait_for_load(self.session, seen)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CdpError(f"{expression!r} failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """Click the element and wait for the page it leads to."""
        seen = self.events.loads
        found = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                              f"if (!e) return false; e.click(); return true; }})()")  # fmt: skip
        if not found:
            raise CdpError(f"nothing on {self.url} matches {selector!r}")
        self._browser.wait_for_load(self.session, seen)

    @property
    def url(self) -> str:
        return str(self.evaluate("location.href"))

    def text(self, selector: str = "body") -> str:
        return str(self.evaluate(f"document.querySelector({json.dumps(selector)}).innerText"))

    def count(self, selector: str) -> int:
        return int(self.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))

    def screenshot(self, path: Path) -> Path:
        """The whole page, not only the viewport, as PNG."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12_000), "scale": 1}
        data = self.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)[
            "data"
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path
