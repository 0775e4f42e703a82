"""Load a page in headless Chromium and watch it, with the standard library only.

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe`` (the
browser reads JSON commands on fd 3 and writes replies/events on fd 4, each message ended
by a NUL byte), so no websocket client and no network port are needed.

    with Chromium() as browser:
        page = browser.load("file:///tmp/report.html", width=1400, height=2000)
        page.console_errors, page.requests, page.evaluate("document.title")
        page.screenshot("test-artifacts/report.png", full_page=True)
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The Chromium binary (``$CHROMIUM`` first), or None."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).exists():
        return env
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    browser: Chromium
    session: str
    url: str
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text)
    exceptions: list[str] = field(default_factory=list)
    log: list[tuple[str, str, str]] = field(default_factory=list)  # (level, source, text)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    @property
    def console_errors(self) -> list[str]:
        errs = [t for lvl, t in self.console if lvl in ("error", "assert")]
        errs += [f"{src}: {t}" for lvl, src, t in self.log if lvl == "error"]
        return errs + self.exceptions

    @property
    def network_requests(self) -> list[str]:
        """Requests other than the page itself and inline data: URLs."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]

    def send(self, method: str, **params):
        return self.browser.send(method, params, session=self.session)

    def page_height(self) -> float:
        m = self.send("Page.getLayoutMetrics")
        return (m.get("cssContentSize") or m["contentSize"])["height"]

    def evaluate(self, expression: str):
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(
        self,
        path: str | Path,
        *,
        full_page: bool = True,
        clip: tuple[float, float, float, float] | None = None,
    ) -> Path:
        """A PNG of the whole page (or of ``clip`` = x, y, width, height in CSS px)."""
        params: dict = {"format": "png"}
        if clip is not None:
            x, y, w, h = clip
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
            params["captureBeyondViewport"] = True
        elif full_page:
            m = self.send("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m["contentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        r = self.send("Page.captureScreenshot", **params)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(r["data"]))
        return path


class Chromium:
    """A headless Chromium process talking DevTools over a pipe."""

    def __init__(self, binary: str | None = None, *, timeout: float = 30.0) -> None:
        self.binary = binary or find_chromium()
        if not self.binary:
            raise BrowserError("chromium not found")
        self.timeout = timeout
        self._id = 0
        self._buf = b""
        self._events: list[dict] = []
        self._profile = tempfile.mkdtemp(prefix="tracelens-chromium-")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Chromium:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()

        def setup_fds() -> None:  # in the child: fd 3 = commands in, fd 4 = replies out
            r, w = os.dup(to_child_r), os.dup(from_child_w)  # in case either is 3 or 4
            os.dup2(r, 3, inheritable=True)
            os.dup2(w, 4, inheritable=True)

        args = [
            self.binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--metrics-recording-only",
            "--hide-scrollbars",
            "--mute-audio",
            f"--user-data-dir={self._profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=setup_fds,  # noqa: PLW1509 - fds must be 3 and 4 in the child
            pass_fds=(3, 4),  # kept open by the child after setup_fds
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._w = to_child_w
        self._r = from_child_r
        os.set_blocking(self._r, False)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.send("Browser.close", {}, timeout=5)
            except Exception:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr:
                self.proc.stderr.close()
            self.proc = None
            for fd in (self._w, self._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- protocol -----------------------------------------------------------------------
    def _read_messages(self, deadline: float) -> list[dict]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("timed out waiting for chromium")
            ready, _, _ = select.select([self._r], [], [], min(left, 0.5))
            if not ready:
                if self.proc is not None and self.proc.poll() is not None:
                    err = (
                        self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                    )
                    raise BrowserError(f"chromium exited ({self.proc.returncode}): {err[-2000:]}")
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the pipe")
            self._buf += chunk
        *complete, self._buf = self._buf.split(b"\0")
        return [json.loads(m) for m in complete if m]

    def send(self, method: str, params: dict, *, session: str | None = None, timeout=None):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._w, data)
            data = data[n:]
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for m in self._read_messages(deadline):
                if m.get("id") == self._id:
                    if "error" in m:
                        raise BrowserError(f"{method}: {m['error']}")
                    return m.get("result", {})
                self._events.append(m)

    def _drain(self, page: Page, until: str | None, deadline: float) -> None:
        """Record the page's events; stop at event ``until`` (or when the deadline passes)."""
        while True:
            events, self._events = self._events, []
            for m in events:
                if m.get("sessionId") != page.session:
                    continue
                method, p = m.get("method"), m.get("params", {})
                if method == "Runtime.consoleAPICalled":
                    text = " ".join(
                        str(a.get("value", a.get("description", ""))) for a in p.get("args", [])
                    )
                    page.console.append((p.get("type", ""), text))
                elif method == "Runtime.exceptionThrown":
                    d = p.get("exceptionDetails", {})
                    page.exceptions.append(
                        d.get("exception", {}).get("description") or d.get("text", "exception")
                    )
                elif method == "Log.entryAdded":
                    e = p.get("entry", {})
                    page.log.append((e.get("level", ""), e.get("source", ""), e.get("text", "")))
                elif method == "Network.requestWillBeSent":
                    page.requests.append(p.get("request", {}).get("url", ""))
                if until and method == until:
                    return
            try:
                self._events.extend(self._read_messages(deadline))
            except BrowserError:
                if until:
                    raise
                return

    def load(self, url: str, *, width: int = 1400, height: int = 2000, settle: float = 0.5) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session, url)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        page.send("Page.navigate", url=url)
        self._drain(page, "Page.loadEventFired", time.monotonic() + self.timeout)
        self._drain(page, None, time.monotonic() + settle)
        return page
