"""`coord web --open` puts no secret on any command line (issue 44): the browser is
started on a 0600 file that redirects with a one-time code, which signs in once and
is then refused with the way to sign in.

The browser is a fake (`$BROWSER`, which `webbrowser` honours): a script that
records its own argv (`/proc/self/cmdline`) and every process's command line it
can read at the moment it starts, then does what a browser does with what it was
given (read the file, follow its redirect, keep the cookie) and reports it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import DaemonProcess
from web_server import WebServer, start_web

PROJECT = "/home/ada/shop"
#: Seconds the fake browser may take to start and report (a loaded machine).
REPORT_TIMEOUT_S = 60.0

FAKE_BROWSER = r"""
import html, json, os, re, sys, urllib.error, urllib.parse, urllib.request

record = {"argv": sys.argv[1:]}
with open("/proc/self/cmdline", "rb") as own:
    record["cmdline"] = own.read().decode(errors="replace")
everyone = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as found:
                everyone.append(found.read().decode(errors="replace"))
        except OSError:
            pass
record["everyone"] = everyone


class Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def lower(headers):
    return {key.lower(): value for key, value in headers.items()}


def get(url, cookie=None):
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.build_opener(Keep).open(request, timeout=30) as answer:
            return answer.status, lower(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, lower(exc.headers), exc.read().decode()


def refresh(page):
    return html.unescape(re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', page).group(1))


try:
    path = urllib.parse.unquote(urllib.parse.urlsplit(sys.argv[1]).path)
    record["mode"] = os.stat(path).st_mode & 0o777
    with open(path) as page:
        target = refresh(page.read())
    record["target"] = target
    status, headers, body = get(target)
    record["exchange"] = [status, refresh(body)]
    cookie = headers["set-cookie"].split(";", 1)[0]
    base = target.split("/?", 1)[0]
    status, _, body = get(base + refresh(body), cookie)
    record["board"] = [status, "Waiting for you" in body]
    status, _, body = get(target)
    record["again"] = [status, body]
except Exception as exc:
    record["error"] = repr(exc)
with open(os.environ["FAKE_BROWSER_RECORD"], "w") as out:
    json.dump(record, out)
"""


@pytest.fixture
def opened(daemon: DaemonProcess, tmp_path: Path) -> Iterator[tuple[WebServer, dict[str, Any]]]:
    browser = tmp_path / "fake-browser"
    browser.write_text(f"#!{sys.executable}\n{FAKE_BROWSER}")
    browser.chmod(0o700)
    record = tmp_path / "record.json"
    env = {"BROWSER": str(browser), "FAKE_BROWSER_RECORD": str(record)}
    server = start_web(daemon.socket_path, PROJECT, "--open", env=env)
    try:
        deadline = time.monotonic() + REPORT_TIMEOUT_S
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert record.exists(), "the fake browser never reported"
        yield server, json.loads(record.read_text())
    finally:
        server.stop()


def test_open_puts_no_secret_on_any_command_line(opened: tuple[WebServer, dict[str, Any]]) -> None:
    web, seen = opened
    assert len(seen["argv"]) == 1 and seen["argv"][0].startswith("file:///"), seen["argv"]
    code = seen.get("target", "").rpartition("code=")[2]
    secrets = [web.token, *([code] if code else [])]
    for line in [seen["cmdline"], *seen["everyone"]]:
        for secret in secrets:
            assert secret not in line, f"a secret on a command line: {line!r}"
    assert seen["mode"] == 0o600, oct(seen["mode"])
    assert code and code != web.token


def test_open_signs_the_browser_in_once(opened: tuple[WebServer, dict[str, Any]]) -> None:
    web, seen = opened
    assert "error" not in seen, seen.get("error")
    assert seen["exchange"] == [200, "/"]  # a page that goes on (the Strict cookie)
    assert seen["board"] == [200, True]
    status, body = seen["again"]  # the same code a second time: refused, with the way in
    assert status == 403
    assert "used already or has expired" in body and "printed" in body
    assert web.token not in body
    file = Path(seen["argv"][0].removeprefix("file://"))
    deadline = time.monotonic() + REPORT_TIMEOUT_S
    while file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not file.exists(), "the sign-in file outlived its code"


def test_a_stop_removes_the_file_of_a_code_never_used(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    given = tmp_path / "given"
    browser = tmp_path / "browser"  # records what it was given, and opens nothing
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {given}\n')
    browser.chmod(0o700)
    server = start_web(daemon.socket_path, PROJECT, "--open", env={"BROWSER": str(browser)})
    try:
        deadline = time.monotonic() + REPORT_TIMEOUT_S
        while not given.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        file = Path(given.read_text().removeprefix("file://"))
        assert file.exists()
    finally:
        server.stop()  # SIGTERM
    assert server.proc.returncode == 0
    assert not file.exists(), "a stopped coord web left its sign-in file"


def test_open_with_no_browser_to_start_says_to_open_the_address(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """Found in review: `coord web --open` on a machine with no browser to start printed
    the address and said nothing more, so a person waited for a page. `webbrowser`
    reports the failure (here `$BROWSER` exits 1), and coord web says so."""
    log = tmp_path / "web.log"
    server = start_web(
        daemon.socket_path, PROJECT, "--open", env={"BROWSER": "/bin/false"}, log=log
    )
    try:
        note = "coord web: --open found no browser to start here; open the address above"
        deadline = time.monotonic() + REPORT_TIMEOUT_S
        while note not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert note in log.read_text()
    finally:
        server.stop()
