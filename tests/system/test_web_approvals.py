"""`coord web` over plain HTTP against a real `coord web` and daemon, what review found
of issue 47: a request for part of the human's pattern ends the whole pattern when
approved (a pattern cannot be cut in two), and the confirm page says so before the
human signs; a gate's own page offers Approve and Reject; a task's history says when
as every surface does; and the board's cells are HTML, not raw text (`<1m` escaped)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import urlencode

import pytest

from coordd_client.human import human_agent
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


def _facts(page: str) -> dict[str, str]:
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page, re.S)
    return {unescape(k): unescape(re.sub(r"<[^>]+>", "", v)) for k, v in pairs}


def test_approving_a_file_of_the_humans_pattern_says_the_whole_pattern_ends(
    daemon: DaemonProcess, web: WebServer
) -> None:
    human = human_agent()
    with daemon.client() as client:
        client.reserve(["src/db/**"], agent=human, project=PROJECT)
        client.reserve(["docs/**"], agent=human, project=PROJECT)
        request = client.request_release(
            patterns=["src/db/schema.py"], body="a column", agent="claude-7", project=PROJECT
        ).request
    cookie = _cookie(web)
    page = http(f"{web.base}/messages", headers={"Cookie": cookie}).body
    csrf = re.findall(r'name="csrf" value="([0-9a-f]+)"', page)[0]
    headers = {"Cookie": cookie, "Origin": web.base}
    form = urlencode({"csrf": csrf, "decision": "approve"}).encode()
    asked = http(f"{web.base}/act/answer/{request.id}", data=form, headers=headers)
    assert asked.status == 200 and 'value="yes"' in asked.body
    facts = _facts(asked.body)
    assert facts["asks for"] == "src/db/schema.py"
    assert facts["also ends"] == (
        f"{human}'s src/db/** (a reservation ends whole: re-reserve what is still needed)"
    )
    # Narrowed to what the human holds as it is, nothing else ends.
    form = urlencode({"csrf": csrf, "decision": "narrow", "patterns": "src/db/**"}).encode()
    narrowed = http(f"{web.base}/act/answer/{request.id}", data=form, headers=headers)
    assert narrowed.status == 200 and "also ends" not in _facts(narrowed.body)
    # And it is so: approved, the human holds docs/** only.
    form = urlencode({"csrf": csrf, "decision": "approve", "confirmed": "yes"}).encode()
    assert http(f"{web.base}/act/answer/{request.id}", data=form, headers=headers).status == 303
    with daemon.client() as client:
        held = client.reservations(project=PROJECT, agent=human).reservations
    assert [r.pattern for r in held] == ["docs/**"]


def test_a_fresh_rows_age_is_escaped_html(daemon: DaemonProcess, web: WebServer) -> None:
    with daemon.client() as client:
        client.post("just posted", project=PROJECT)
    board = http(f"{web.base}/", headers={"Cookie": _cookie(web)}).body
    assert re.findall(r'<td class="age"[^>]*>([^<]*)</td>', board) == ["&lt;1m"]


def test_a_tasks_history_says_when_as_every_surface_does(
    daemon: DaemonProcess, web: WebServer
) -> None:
    """Found in review (issue 47 item 4): the task page's History said
    `2026-12-06T07:18:27.796778Z`, where `coord show --history` says `just now (07:18Z)`."""
    with daemon.client() as client:
        task = client.post("deploy to staging?", project=PROJECT).task
    page = http(f"{web.base}/task/{task.id}", headers={"Cookie": _cookie(web)}).body
    history = page[page.index('class="history"') :]
    cell = re.search(r'<td title="([^"]+)">([^<]+)</td>', history)
    assert cell is not None, history
    assert cell.group(1) == task.created_at
    assert re.fullmatch(r"just now \(\d\d:\d\dZ\)", cell.group(2)), cell.group(2)


def test_a_gates_own_page_offers_approve_and_reject(daemon: DaemonProcess, web: WebServer) -> None:
    """Found in review: the board's "Waiting for you" links a gate to its page, which
    offered assign, cancel and reopen but neither Approve nor Reject; a task that is not
    waiting for the human offers neither."""
    human = human_agent()
    with daemon.client() as client:
        gate = client.post("deploy to staging?", assignee=human, project=PROJECT).task
        other = client.post("not a gate", project=PROJECT).task
    cookie = _cookie(web)
    page = http(f"{web.base}/task/{gate.id}", headers={"Cookie": cookie}).body
    assert f'action="/act/approve/{gate.id}"' in page
    assert f'action="/act/reject/{gate.id}"' in page
    plain = http(f"{web.base}/task/{other.id}", headers={"Cookie": cookie}).body
    assert "/act/approve/" not in plain and "/act/reject/" not in plain
    # The button leads to the page that shows what is approved, as the board's does.
    csrf = re.findall(r'name="csrf" value="([0-9a-f]+)"', page)[0]
    asked = http(
        f"{web.base}/act/approve/{gate.id}",
        data=urlencode({"csrf": csrf}).encode(),
        headers={"Cookie": cookie, "Origin": web.base},
    )
    assert asked.status == 200 and 'Approve gate #1 "deploy to staging?"' in unescape(asked.body)
