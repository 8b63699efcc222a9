"""`coord web` as the tests run it: a real process on a real daemon's socket, its address
read from the line it prints, and a browser (Debian's chromium under Playwright).

Playwright's own browser download is unreachable here, so the browser is the
distribution's (`executable_path`); `make test` installs it in CI
(`scripts/ensure-chromium.sh`) and `COORDD_REQUIRE_BROWSER=1` (set by `.ci/run`)
turns a missing one into a failure instead of a skip.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from support import COORD, coord_env

#: Seconds `coord web` may take to print its address on a loaded machine.
START_TIMEOUT_S = 60.0
#: Milliseconds a page may take to show what a test waits for: a bound only a hang
#: crosses (the machine is shared and busy), never a measurement.
WAIT_MS = 30_000


@dataclass
class WebServer:
    proc: subprocess.Popen[str]
    url: str  # with the token

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_web(
    socket: Path,
    project: str,
    *args: str,
    env: dict[str, str] | None = None,
    log: Path | None = None,
) -> WebServer:
    """`coord web` on `socket`, once it has printed the address it serves; its stderr
    (its log) goes to `log` when given, else to the test's own."""
    environ = coord_env(socket)
    environ.update(env or {})
    with open(log or os.devnull, "ab") as sink:
        proc = subprocess.Popen(
            [COORD, "--project", project, "web", *args],
            stdout=subprocess.PIPE,
            stderr=sink if log is not None else None,  # else pytest shows it on a failure
            stdin=subprocess.DEVNULL,
            text=True,
            env=environ,
        )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=START_TIMEOUT_S)
    except queue.Empty:
        WebServer(proc, "").stop()
        raise TimeoutError("coord web printed no address") from None
    if not line.startswith("coord web: "):
        WebServer(proc, "").stop()
        raise RuntimeError(f"coord web said {line!r} (exit {proc.poll()})")
    return WebServer(proc, line.removeprefix("coord web: ").strip())


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    headers: dict[str, str]


def http(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
    """One request, redirects not followed, any status returned rather than raised."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(request, timeout=30) as answer:
            return Answer(answer.status, answer.read().decode(), dict(answer.headers))
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, exc.read().decode(), dict(exc.headers))


def chromium_path() -> str:
    """Debian's chromium, or a skip (a failure where CI requires the browser)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (scripts/ensure-chromium.sh installs it)"
        if os.environ.get("COORDD_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium per test module (a test module imports this fixture by name)."""
    executable = chromium_path()
    # Chromium refuses to start as root with its sandbox on (CI runs as root).
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=args)
        yield launched
        launched.close()


def open_board(browser: Browser, web: WebServer, path: str = "") -> Page:
    """The printed address (token and all), then the page, once its stream is live."""
    page = browser.new_context(viewport={"width": 1200, "height": 640}).new_page()
    page.on("dialog", lambda dialog: pytest.fail(f"a dialog opened: {dialog.message}"))
    page.goto(web.url + path)
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    return page
