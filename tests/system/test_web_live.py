"""`coord web`'s `/live` against a browser that does not read (issue 44): the server
holds a bounded backlog per stream, ends a stream that falls that far behind, and a
stream resumed with `Last-Event-ID` is sent every event after that id, once.

A stream here is a raw HTTP connection: opened, and then not read at all, as a
stopped tab's or a hostile local user's would be."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http import client as http_client

import pytest

from coordd_apps.web.live import LIVE_TYPES
from support import DaemonProcess
from web_server import WebServer, http, start_web

PROJECT = "/home/ada/shop"
#: Streams that never read, and events posted while they are open: the issue measured
#: 20 streams of an 11k-event log growing `coord web` from 39 to 128 MiB.
STREAMS = 20
EVENTS = 1500
#: A task body the size an agent's plan may have: every event carries its task whole.
BODY = "plan " * 1600
#: A long title (the bound is 300), so a row, what a stream sends, is long too.
TITLE = "a title as long as an agent may write " * 7
#: What the streams may add to the server's RSS: generous (allocator slack, the
#: machine's noise); the old code held each stream's backlog, some 170 MiB here.
GROWTH_BOUND = 48 * 1024 * 1024
#: The unread streams' receive buffers (the kernel's default is 128 KiB).
RECEIVE_BUFFER = 4096
#: Seconds a stream may take to end, or a resumed one to catch up, on a loaded machine.
WAIT_S = 120.0


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def _cookie(web: WebServer) -> str:
    return http(web.url).headers["set-cookie"].split(";", 1)[0]


def _stream(
    web: WebServer, cookie: str, after: int, last_id: int | None = None
) -> http_client.HTTPConnection:
    """A `/live` request sent, and nothing read (on a socket with a small receive
    buffer, so what the kernels hold is small beside what `coord web` might)."""
    conn = http_client.HTTPConnection("127.0.0.1", web.port, timeout=WAIT_S)
    conn.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    conn.sock.settimeout(WAIT_S)
    conn.sock.connect(("127.0.0.1", web.port))
    headers = {"Cookie": cookie, "Accept": "text/event-stream"}
    if last_id is not None:
        headers["Last-Event-ID"] = str(last_id)
    conn.request("GET", f"/live?after={after}", headers=headers)
    return conn


def _ids(text: str) -> list[int]:
    return [int(found) for found in re.findall(r"^id: (\d+)$", text, re.MULTILINE)]


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        kib = next(line for line in status if line.startswith("VmRSS:")).split()[1]
    return int(kib) * 1024


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def _settle(pid: int) -> None:
    """Until the process has used no CPU for a second (it has done what it will do)."""
    deadline = time.monotonic() + WAIT_S
    before = _cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _cpu_ticks(pid)
        if now == before:
            return
        before = now


def _post_many(daemon: DaemonProcess, count: int) -> int:
    """`count` tasks posted (from a few connections at once); the last seq."""

    def post(share: range) -> None:
        with daemon.client() as client:
            for n in share:
                client.post(f"{n:05} {TITLE}", body=BODY, project=PROJECT)

    shares = [range(start, count, 4) for start in range(4)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(post, shares))
    with daemon.client() as client:
        return client.server_info().last_seq


def _expected(daemon: DaemonProcess, after: int, last: int) -> list[int]:
    """The seqs `/live` owes a stream resumed after `after`, up to `last`."""
    seqs: list[int] = []
    with daemon.client() as client:
        while after < last:
            page = client.events_since(after_seq=after, project=PROJECT, limit=500)
            if not page.events:
                break
            seqs += [e.seq for e in page.events if e.type in LIVE_TYPES and e.seq <= last]
            after = page.events[-1].seq
    return seqs


def _follow(web: WebServer, cookie: str, last_id: int, until: int) -> list[int]:
    """What a browser's EventSource does: read, and when the stream ends, reconnect
    with `Last-Event-ID`, until it has seen `until`."""
    got: list[int] = []
    deadline = time.monotonic() + WAIT_S
    while (got[-1] if got else last_id) < until and time.monotonic() < deadline:
        conn = _stream(web, cookie, after=0, last_id=got[-1] if got else last_id)
        answer = conn.getresponse()
        assert answer.status == 200
        text = ""
        while (got[-1] if got else last_id) < until:
            chunk = answer.read1(65536).decode()
            if not chunk:
                break  # ended by the server: resume
            text += chunk
            whole, _, text = text.rpartition("\n\n")
            got += _ids(whole)
        conn.close()
    return got


#: Its waits (settling twice, 20 streams ended, a resume) are each bounded by WAIT_S; on a
#: machine as busy as CI's may be, together they outlast the suite's default hang bound.
@pytest.mark.timeout(5 * WAIT_S)
def test_streams_that_do_not_read_are_bounded_ended_and_resume(
    daemon: DaemonProcess, web: WebServer
) -> None:
    cookie = _cookie(web)
    pid = web.proc.pid
    with daemon.client() as client:
        start = client.server_info().last_seq
    assert http(web.base + "/", headers={"Cookie": cookie}).status == 200
    _settle(pid)
    before = _rss(pid)
    stalled = [_stream(web, cookie, after=start) for _ in range(STREAMS)]
    try:
        last = _post_many(daemon, EVENTS)
        _settle(pid)
        grown = _rss(pid) - before
        assert grown < GROWTH_BOUND, f"{STREAMS} unread streams grew coord web {grown >> 20} MiB"

        # Each unread stream was ended: read now, it has an end, and what it sent is in order.
        ends = []
        for conn in stalled:
            ids = _ids(conn.getresponse().read().decode())  # to its end, or a timeout
            assert ids == sorted(set(ids)) and all(start < i <= last for i in ids)
            assert not ids or ids[-1] < last, "a stream that did not read was sent everything"
            ends.append(ids[-1] if ids else start)
    finally:
        for conn in stalled:  # closed here, not by a later test's garbage collection
            conn.close()

    # Resumed from where one stopped, a reading stream gets every later event, once.
    resume_at = min(ends)
    assert _follow(web, cookie, resume_at, last) == _expected(daemon, resume_at, last)
