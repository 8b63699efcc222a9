"""`coord web --webhook`: chosen events reach a receiver as signed JSON (a real HTTP
receiver on loopback, a real `coord web`, a real daemon)."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import queue
import threading
from typing import Any

from support import DaemonProcess, coord
from web_server import start_web

PROJECT = "/home/ada/shop"
SECRET = "correct horse battery staple"
#: Seconds a delivery may take on a loaded machine: a bound only a hang crosses.
WAIT_S = 60.0


def test_gates_and_failures_are_posted_signed_and_nothing_else(daemon: DaemonProcess) -> None:
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
