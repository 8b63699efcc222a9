"""`coord web --webhook`: chosen events reach a receiver as signed JSON (a real HTTP
receiver on loopback, a real `coord web`, a real daemon)."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import queue
import re
import threading
import time
from pathlib import Path
from typing import Any

from support import DaemonProcess, coord
from web_server import WebServer, start_web
from web_server import http as fetch

PROJECT = "/home/ada/shop"
SECRET = "correct horse battery staple"
#: Seconds a delivery may take on a loaded machine: a bound only a hang crosses.
WAIT_S = 60.0


def _plain_receiver() -> tuple[
    http.server.ThreadingHTTPServer, queue.Queue[tuple[dict[str, str], bytes]]
]:
    """A receiver that answers every delivery 204 and keeps its headers and body, in order."""
    got: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.put((dict(self.headers), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    return receiver, got


def test_gates_and_failures_are_posted_signed_and_nothing_else(daemon: DaemonProcess) -> None:
    receiver, got = _plain_receiver()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    web = start_web(
        daemon.socket_path, PROJECT, "--webhook", hook, "--notify-on", "gate,task.failed",
        env={"COORD_WEBHOOK_SECRET": SECRET},
    )  # fmt: skip
    try:
        with daemon.client() as client:
            client.post("not interesting", project=PROJECT)
            gate = client.post("ship it?", project=PROJECT, assignee="human").task
            doomed = client.post("doomed", project=PROJECT).task
            claim = client.claim(doomed.id, "worker")
            client.fail(doomed.id, "worker", fence=claim.task.fence, reason="disk full")
        received = [got.get(timeout=WAIT_S) for _ in range(2)]
    finally:
        web.stop()
        receiver.shutdown()
        receiver.server_close()
    assert got.empty()
    kinds = []
    for headers, body in received:
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["X-Coord-Signature"], expected)
        document = json.loads(body)
        assert document["kind"] == headers["X-Coord-Event"]
        assert str(document["event"]["seq"]) == headers["X-Coord-Seq"]
        kinds.append((document["kind"], document["event"]["task_id"]))
    assert kinds == [("gate", gate.id), ("task.failed", doomed.id)]


def test_a_webhook_without_a_secret_is_refused(daemon: DaemonProcess) -> None:
    done = coord("web", "--webhook", "http://127.0.0.1:9/hook", socket=daemon.socket_path)
    assert done.returncode == 1 and "COORD_WEBHOOK_SECRET" in done.stderr


# --- delivery: deadlines, redirects, retries, and what the human sees (issue 44 #6) ---

#: The seconds `coord web` gives one delivery (notify.DEADLINE_S), for the log's words.
DEADLINE_WORDS = "no answer within 10 s"


class Receiver:
    """A loopback HTTP receiver that records each POST's title and seq (in arrival order)
    and answers each of `first` in turn, then `answer` to the rest: a status, or None to
    trickle "200 OK" a byte a second."""

    def __init__(
        self, answer: int | None = 204, *, first: tuple[int, ...] = (), location: str = ""
    ) -> None:
        self.got: queue.Queue[tuple[str, int]] = queue.Queue()
        self.seen: list[tuple[str, int]] = []
        self.contacted = threading.Event()
        answers = list(first)
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner.contacted.set()
                document = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                title = (document["event"].get("task") or {}).get("title", "")
                owner.seen.append((title, document["event"]["seq"]))
                status = answers.pop(0) if answers else answer
                if status is None:
                    owner.trickle(self)
                    return
                owner.got.put((title, status))
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                owner.contacted.set()
                owner.seen.append(("GET", 0))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    @staticmethod
    def trickle(handler: http.server.BaseHTTPRequestHandler) -> None:
        """The answer one byte a second, until the client hangs up (or 10 minutes)."""
        answer = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"." * 600 + b"\r\n\r\n"
        try:
            for byte in answer:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(1.0)
        except OSError:
            return

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _wait_for_log(log: Path, words: str) -> str:
    """The log's text once it holds `words` (bounded: a hang fails, a slow machine not)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        text = log.read_text()
        if words in text:
            return text
        time.sleep(0.1)
    raise AssertionError(f"{words!r} never reached coord web's log:\n{log.read_text()}")


def _board_text(web: WebServer) -> str:
    """The board page as the human signed in with the printed address sees it."""
    cookie = fetch(web.url).headers["set-cookie"].split(";", 1)[0]
    return fetch(f"{web.base}/", headers={"Cookie": cookie}).body


def _titles(receiver: Receiver, count: int) -> list[str]:
    return [receiver.got.get(timeout=WAIT_S)[0] for _ in range(count)]


def _post(daemon: DaemonProcess, *titles: str) -> None:
    with daemon.client() as client:
        for title in titles:
            client.post(title, project=PROJECT)


def test_a_trickling_receiver_holds_back_only_itself_and_fails_at_the_deadline(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    slow, fast = Receiver(None), Receiver(204)
    log = tmp_path / "web.log"
    web = start_web(
        daemon.socket_path, PROJECT, "--webhook", slow.url, "--webhook", fast.url,
        "--notify-on", "task.posted", env={"COORD_WEBHOOK_SECRET": SECRET}, log=log,
    )  # fmt: skip
    try:
        _post(daemon, "one", "two", "three")
        assert _titles(fast, 3) == ["one", "two", "three"]  # while the slow one trickles
        assert slow.contacted.wait(WAIT_S)
        text = _wait_for_log(log, DEADLINE_WORDS)
        page = _board_text(web)
    finally:
        web.stop()
        slow.close()
        fast.close()
    failure = next(line for line in text.splitlines() if DEADLINE_WORDS in line)
    assert slow.url in failure and "(seq" in failure and "3 waiting" in failure
    assert re.search(
        rf"{re.escape(slow.url)}: 0 delivered, 3 waiting, [1-9]\d* failed attempts", page
    )
    assert f"last failure: task.posted (seq {slow.seen[0][1]}): {DEADLINE_WORDS}" in page
    assert f"{fast.url}: 3 delivered, 0 waiting, 0 failed attempts, 0 dropped" in page


def test_a_redirect_is_a_failure_and_is_not_followed(daemon: DaemonProcess, tmp_path: Path) -> None:
    elsewhere = Receiver(204)
    redirecting = Receiver(302, location=elsewhere.url)
    log = tmp_path / "web.log"
    web = start_web(
        daemon.socket_path, PROJECT, "--webhook", redirecting.url, "--notify-on", "task.posted",
        env={"COORD_WEBHOOK_SECRET": SECRET}, log=log,
    )  # fmt: skip
    try:
        _post(daemon, "moved")
        assert redirecting.got.get(timeout=WAIT_S) == ("moved", 302)
        text = _wait_for_log(log, "answered 302")
        page = _board_text(web)
    finally:
        web.stop()
        redirecting.close()
        elsewhere.close()
    assert "given up" in text
    assert not elsewhere.contacted.is_set() and elsewhere.seen == []
    assert len(redirecting.seen) == 1  # a redirect is not retried either
    assert f"{redirecting.url}: 0 delivered, 0 waiting, 1 failed attempts, 1 dropped" in page
    assert "answered 302: a redirect is not followed" in page


def test_retries_keep_each_receivers_order(daemon: DaemonProcess, tmp_path: Path) -> None:
    flaky = Receiver(204, first=(503, 503))
    log = tmp_path / "web.log"
    web = start_web(
        daemon.socket_path, PROJECT, "--webhook", flaky.url, "--notify-on", "task.posted",
        env={"COORD_WEBHOOK_SECRET": SECRET}, log=log,
    )  # fmt: skip
    try:
        _post(daemon, "first", "second", "third")
        answered = [flaky.got.get(timeout=WAIT_S) for _ in range(5)]
    finally:
        web.stop()
        flaky.close()
    assert answered == [
        ("first", 503), ("first", 503), ("first", 204), ("second", 204), ("third", 204)
    ]  # fmt: skip
    seqs = [seq for _, seq in flaky.seen]
    assert seqs[:3] == [seqs[0]] * 3 and seqs[2:] == sorted(seqs[2:])
    assert log.read_text().count("answered 503") == 2


def test_a_budget_crossing_reaches_a_receiver_that_chose_it(daemon: DaemonProcess) -> None:
    """Issue 48: `--notify-on usage.budget` names an event no page subscribes to."""
    receiver, got = _plain_receiver()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    web = start_web(
        daemon.socket_path, PROJECT, "--webhook", hook, "--notify-on", "usage.budget",
        env={"COORD_WEBHOOK_SECRET": SECRET},
    )  # fmt: skip
    try:
        with daemon.client() as client:
            task = client.post("bounded", project=PROJECT, budget=100).task
            client.claim(task.id, "worker")
            at = client.get(task.id).task.updated_at  # the claim's instant: held then
            client.report_usage(
                "claude", [{"id": "1", "at": at, "model": "m", "input": 90}],
                agent="worker", project=PROJECT,
            )  # fmt: skip
        body = json.loads(got.get(timeout=WAIT_S)[1])
    finally:
        web.stop()
        receiver.shutdown()
        receiver.server_close()
    assert got.empty()
    assert body["kind"] == "usage.budget"
    assert body["event"]["budget"] == {
        "task_id": task.id, "tokens": 100, "spent": 90, "threshold": 80, "released": False,
    }  # fmt: skip
