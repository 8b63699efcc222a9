"""`coord web` over plain HTTP against a real `coord web` and daemon, found in review
(issue 47): the board's cells are HTML, not raw text (`<1m` escaped)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from support import DaemonProcess
from web_server import WebServer, http, start_web

PROJECT = "/home/ada/shop"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def _cookie(web: WebServer) -> str:
    return http(web.url).headers["set-cookie"].split(";", 1)[0]


def test_a_fresh_rows_age_is_escaped_html(daemon: DaemonProcess, web: WebServer) -> None:
    with daemon.client() as client:
        client.post("just posted", project=PROJECT)
    board = http(f"{web.base}/", headers={"Cookie": _cookie(web)}).body
    assert re.findall(r'<td class="age"[^>]*>([^<]*)</td>', board) == ["&lt;1m"]
