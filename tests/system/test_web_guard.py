"""`coord web`'s guard over plain HTTP against a real `coord web` and daemon: no token,
no page; a foreign Host (DNS rebinding) is refused; the token becomes an HttpOnly
SameSite=Strict cookie; a POST from another origin, or without the form's CSRF
field, changes nothing; every answer carries the strict CSP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from http import client as http_client
from urllib.parse import urlencode

import pytest

from support import DaemonProcess
from web_server import Answer, WebServer, http, start_web

PROJECT = "/home/ada/shop"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def signed_in(web: WebServer) -> str:
    """The cookie the printed address is exchanged for."""
    answer = http(web.url)
    assert answer.status == 303, answer
    assert answer.headers["location"] == "/"  # the token does not stay in the address bar
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    return cookie.split(";", 1)[0]


def test_no_token_or_a_wrong_one_is_refused(web: WebServer) -> None:
    assert http(web.base + "/").status == 403
    assert http(web.base + "/?token=" + "x" * len(web.token)).status == 403
    assert http(web.base + "/task/1", headers={"Cookie": "coord_web=guess"}).status == 403
    assert http(web.base + "/live").status == 403
    board = http(web.base + "/", headers={"Cookie": signed_in(web)})
    assert board.status == 200
    assert "Waiting for you" in board.body


def test_a_foreign_host_is_refused_even_with_the_token(web: WebServer) -> None:
    for host in (f"evil.example:{web.port}", "127.0.0.1:1", f"127.0.0.1.evil.example:{web.port}"):
        assert http(web.url, headers={"Host": host}).status == 421, host
    for host in (f"localhost:{web.port}", f"127.0.0.1:{web.port}"):
        assert http(web.url, headers={"Host": host}).status == 303, host


def test_every_answer_carries_a_strict_policy(web: WebServer) -> None:
    for answer in (http(web.base + "/"), http(web.base + "/", headers={"Cookie": signed_in(web)})):
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy
        assert answer.headers["x-frame-options"] == "DENY"
    page = http(web.base + "/", headers={"Cookie": signed_in(web)}).body
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/web.js" defer>']


def _cancel(web: WebServer, task: int, headers: dict[str, str], csrf: str) -> Answer:
    form = urlencode({"csrf": csrf, "confirmed": "yes"}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", **headers}
    return http(f"{web.base}/act/cancel/{task}", data=form, headers=headers)


def test_a_cross_origin_post_or_one_without_the_csrf_field_changes_nothing(
    daemon: DaemonProcess, web: WebServer
) -> None:
    with daemon.client() as client:
        task = client.post("keep me", project=PROJECT).task.id
    cookie = signed_in(web)
    page = http(f"{web.base}/task/{task}", headers={"Cookie": cookie}).body
    csrf = re.findall(r'name="csrf" value="([0-9a-f]+)"', page)[0]
    origin = f"http://127.0.0.1:{web.port}"
    refusals = [
        _cancel(web, task, {"Cookie": cookie, "Origin": "http://evil.example"}, csrf),
        _cancel(web, task, {"Cookie": cookie, "Origin": "null"}, csrf),
        _cancel(web, task, {"Cookie": cookie}, csrf),  # no Origin at all
        _cancel(
            web, task, {"Cookie": cookie, "Origin": origin, "Sec-Fetch-Site": "cross-site"}, csrf
        ),
        _cancel(web, task, {"Cookie": cookie, "Origin": origin}, "0" * len(csrf)),
        _cancel(web, task, {"Origin": origin}, csrf),  # no cookie
    ]
    assert [r.status for r in refusals] == [403] * len(refusals)
    with daemon.client() as client:
        assert client.get(task).task.state == "pending"
    done = _cancel(web, task, {"Cookie": cookie, "Origin": origin}, csrf)
    assert done.status == 303 and done.headers["location"] == f"/task/{task}"
    with daemon.client() as client:
        history = client.events_since(after_seq=0, task_id=task).events
    assert history[-1].type == "task.cancelled"
    assert history[-1].agent is not None and history[-1].agent.startswith("human-")


def test_an_action_is_confirmed_before_it_is_done(daemon: DaemonProcess, web: WebServer) -> None:
    with daemon.client() as client:
        task = client.post("cancel me, later", project=PROJECT).task.id
        board_id = client.server_info().board_id
    cookie = signed_in(web)
    # The board page names its board, as every surface does (issue 43).
    assert f"board {board_id}" in http(f"{web.base}/", headers={"Cookie": cookie}).body
    page = http(f"{web.base}/task/{task}", headers={"Cookie": cookie}).body
    csrf = re.findall(r'name="csrf" value="([0-9a-f]+)"', page)[0]
    form = urlencode({"csrf": csrf}).encode()
    headers = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{web.port}"}
    asked = http(f"{web.base}/act/cancel/{task}", data=form, headers=headers)
    assert asked.status == 200 and "Confirm" in asked.body and 'value="yes"' in asked.body
    with daemon.client() as client:
        assert client.get(task).task.state == "pending"
    bad = http(f"{web.base}/act/reject/{task}", data=form, headers=headers)
    assert bad.status == 400 and "a reason is needed" in bad.body
    gone = http(f"{web.base}/task/999", headers={"Cookie": cookie})
    assert gone.status == 404


def _raw_get(web: WebServer, target: str) -> tuple[int, str | None]:
    """A GET with `target` sent as is (urllib would normalise `//host/`): status, Location."""
    conn = http_client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        conn.putrequest("GET", target, skip_host=True)
        conn.putheader("Host", f"127.0.0.1:{web.port}")
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.getheader("location")
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/",
        "/\\evil.example/",
        "/\\/evil.example/",
        "http://evil.example/",
        "/%2F%2Fevil.example/",
        "/%5Cevil.example/",
        "/%09/evil.example/",
        "/%0d%0aSet-Cookie:x=1",
    ],
)
def test_the_sign_in_redirects_to_a_path_on_this_server_only(web: WebServer, path: str) -> None:
    status, location = _raw_get(web, f"{path}?token={web.token}")
    assert (status, location) == (303, "/"), path


def test_the_sign_in_keeps_a_plain_path_and_its_query(web: WebServer) -> None:
    assert _raw_get(web, f"/task/7?token={web.token}") == (303, "/task/7")
    assert _raw_get(web, f"/?state=all&token={web.token}&q=a%20b") == (303, "/?state=all&q=a+b")
