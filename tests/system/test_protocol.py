"""PROTOCOL.md sections 2, 3 and 6 against a real daemon, in raw frames."""

from __future__ import annotations

import json
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import DaemonProcess, RawConnection

pytestmark = pytest.mark.both_backends


@pytest.fixture
def raw(daemon: DaemonProcess) -> Iterator[RawConnection]:
    conn = RawConnection(daemon.socket_path)
    yield conn
    conn.close()


def error_of(response: dict[str, Any]) -> tuple[int, str]:
    return response["error"]["code"], response["error"]["data"]["kind"]


def test_ping_and_server_info(raw: RawConnection, daemon: DaemonProcess) -> None:
    assert raw.call("ping") == {"jsonrpc": "2.0", "id": 1, "result": {"pong": True}}
    info = raw.call("server.info", request_id="s")["result"]
    assert info["protocol"] == 1 and info["pid"] == daemon.pid
    if daemon.store is None:
        assert info["db_path"] == str(daemon.db_path)
        check = info["store"].pop("check")  # 1.2 section 3c: run beside serving
        assert check["state"] in ("running", "ok") and check["problems"] == []
        assert info["store"] == {"backend": "sqlite", "location": str(daemon.db_path)}
    else:
        # Team mode: no file; the DSN as given (it has no password to hide here).
        assert info["db_path"] is None
        assert info["store"]["backend"] == "postgresql"
        assert info["store"]["location"].startswith("postgresql://postgres@/")
        assert info["store"]["check"] is None
    assert info["node"] and info["peers"] == []
    assert set(info["counts"]) == {"pending", "claimed", "done", "failed", "cancelled"}
    assert info["last_seq"] == 0


def test_post_get_list_claim_in_raw_frames(raw: RawConnection) -> None:
    posted = raw.call(
        "task.post", {"title": "fix parser", "kind": "bug", "tags": ["parser"], "agent": "a"}
    )
    task = posted["result"]["task"]
    assert posted["result"]["created"] is True
    assert set(task) == {
        "id",
        "project",
        "kind",
        "title",
        "body",
        "state",
        "priority",
        "tags",
        "created_by",
        "created_at",
        "updated_at",
        "claimed_by",
        "claimed_at",
        "lease_expires_at",
        "fence",
        "attempts",
        "result",
        # 1.1 (PROTOCOL.md section 4)
        "assignee",
        "depends_on",
        "blocked_by",
    }
    assert (task["assignee"], task["depends_on"], task["blocked_by"]) == (None, [], [])
    assert task["project"] == "default" and task["state"] == "pending" and task["fence"] == 0
    assert task["created_at"].endswith("Z") and len(task["created_at"]) == 27
    assert raw.call("task.get", {"id": task["id"]})["result"]["task"] == task
    listed = raw.call("task.list", {"kind": "bug", "tag": "parser"})["result"]
    assert [t["id"] for t in listed["tasks"]] == [task["id"]] and listed["next_after_id"] is None
    won = raw.call("task.claim", {"id": task["id"], "agent": "b"})["result"]
    assert won["won"] is True and won["task"]["claimed_by"] == "b" and won["task"]["fence"] == 1
    lost = raw.call("task.claim", {"id": task["id"], "agent": "c"})["result"]
    assert lost["won"] is False and lost["task"]["claimed_by"] == "b"


def test_parse_error_keeps_the_connection(raw: RawConnection) -> None:
    raw.send_payload(b"{nope")
    response = raw.recv()
    assert response["id"] is None and error_of(response) == (-32700, "parse_error")
    assert raw.call("ping")["result"] == {"pong": True}


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 3},
        {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        [],
        7,
    ],
)
def test_invalid_requests(raw: RawConnection, message: object) -> None:
    raw.send(message)
    assert error_of(raw.recv()) == (-32600, "invalid_request")
    assert raw.call("ping")["result"] == {"pong": True}


def test_unknown_method(raw: RawConnection) -> None:
    response = raw.call("task.explode", {})
    assert response["id"] == 1 and error_of(response) == (-32601, "method_not_found")


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("task.post", {"title": "x", "titel": "typo"}, "titel"),
        ("task.post", {"title": "x", "priority": 5000}, "priority"),
        ("task.get", {}, "id"),
        ("task.get", {"id": 0}, "id"),
        ("task.claim", {"id": 1, "agent": "", "lease_s": 5}, "agent"),
        ("task.claim", {"id": 1, "agent": "a", "lease_s": 0.5}, "lease_s"),
        ("task.list", {"limit": 1001}, "limit"),
        ("task.list", {"state": "sleeping"}, "state"),
        ("task.wait", {"timeout_s": 4000}, "timeout_s"),
        ("events.since", {"limit": 10001}, "limit"),
    ],
)
def test_invalid_params_name_the_field(
    raw: RawConnection, method: str, params: dict[str, Any], field: str
) -> None:
    response = raw.call(method, params)
    assert error_of(response) == (-32602, "invalid_params")
    assert response["error"]["data"]["field"] == field


def test_positional_params_are_refused(raw: RawConnection) -> None:
    raw.send({"jsonrpc": "2.0", "id": 5, "method": "task.get", "params": [1]})
    response = raw.recv()
    assert response["id"] == 5 and error_of(response) == (-32602, "invalid_params")


def test_domain_errors(raw: RawConnection) -> None:
    assert error_of(raw.call("task.get", {"id": 999})) == (-32001, "not_found")
    task = raw.call("task.post", {"title": "t"})["result"]["task"]
    raw.call("task.cancel", {"id": task["id"]})
    conflict = raw.call("task.cancel", {"id": task["id"]})
    assert error_of(conflict) == (-32002, "conflict")
    assert conflict["error"]["data"]["task"]["state"] == "cancelled"
    other = raw.call("task.post", {"title": "u"})["result"]["task"]
    raw.call("task.claim", {"id": other["id"], "agent": "a"})
    lost = raw.call("task.complete", {"id": other["id"], "agent": "b"})
    assert error_of(lost) == (-32003, "lease_lost")
    assert lost["error"]["data"]["task"]["claimed_by"] == "a"


def test_notifications_execute_but_are_never_answered(raw: RawConnection) -> None:
    raw.send({"jsonrpc": "2.0", "method": "task.post", "params": {"title": "silent"}})
    raw.send({"jsonrpc": "2.0", "method": "no.such.method"})
    # The next frame to arrive answers the ping, not the notifications.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        listed = raw.call("task.list", {}, request_id="after")
        assert listed["id"] == "after"
        if listed["result"]["tasks"]:
            break
    assert [t["title"] for t in listed["result"]["tasks"]] == ["silent"]


def test_batch_answers_every_request_and_skips_notifications(raw: RawConnection) -> None:
    raw.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
            {"jsonrpc": "2.0", "id": 3, "method": "task.post", "params": {"title": "in batch"}},
            17,
        ]
    )
    responses = raw.recv()
    assert isinstance(responses, list) and len(responses) == 4
    by_id = {r["id"]: r for r in responses}
    assert by_id[1]["result"] == {"pong": True}
    assert error_of(by_id[2]) == (-32601, "method_not_found")
    assert by_id[3]["result"]["task"]["title"] == "in batch"
    assert error_of(by_id[None]) == (-32600, "invalid_request")


def test_batch_of_notifications_gets_no_frame(raw: RawConnection) -> None:
    raw.send([{"jsonrpc": "2.0", "method": "ping"}, {"jsonrpc": "2.0", "method": "ping"}])
    assert raw.call("ping", request_id="x")["id"] == "x"


def test_oversized_frame_is_answered_then_closed(workdir: Path) -> None:
    process = DaemonProcess(workdir, args=("--max-frame", "1000")).start()
    try:
        conn = RawConnection(process.socket_path)
        conn.sock.sendall(struct.pack(">I", 1001))  # the payload is never sent
        response = conn.recv()
        assert response["id"] is None and error_of(response) == (-32600, "frame_too_large")
        assert conn.is_closed_by_peer()
        conn.close()
        ok = RawConnection(process.socket_path)
        assert ok.call("ping", request_id=2)["result"] == {"pong": True}
        ok.close()
    finally:
        assert process.stop() == 0


def test_zero_length_frame_is_answered_then_closed(raw: RawConnection) -> None:
    raw.sock.sendall(struct.pack(">I", 0))
    response = raw.recv()
    assert response["id"] is None and error_of(response) == (-32600, "invalid_request")
    assert raw.is_closed_by_peer()


def test_truncated_frame_has_no_effect(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    payload = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "task.post", "params": {"title": "half"}}
    ).encode()
    conn.sock.sendall(struct.pack(">I", len(payload)) + payload[:-5])
    conn.close()
    with daemon.client() as client:
        client.ping()
        assert client.list_tasks().tasks == []


def test_responses_may_overtake_a_blocking_wait(raw: RawConnection) -> None:
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": "w",
            "method": "task.wait",
            "params": {"timeout_s": 30, "kind": "bug"},
        }
    )
    assert raw.call("ping", request_id="p")["id"] == "p"
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": "post",
            "method": "task.post",
            "params": {"title": "b", "kind": "bug"},
        }
    )
    first, second = raw.recv(), raw.recv()
    by_id = {first["id"]: first, second["id"]: second}
    assert by_id["w"]["result"]["task"]["title"] == "b"
    assert by_id["post"]["result"]["created"] is True


def test_in_flight_cap_answers_overloaded(raw: RawConnection) -> None:
    cap = 512  # Limits.max_inflight_per_connection
    for index in range(cap):
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "task.wait",
                "params": {"timeout_s": 60, "kind": "never"},
            }
        )
    raw.send({"jsonrpc": "2.0", "id": "over", "method": "ping"})
    response = raw.recv()
    assert response["id"] == "over" and error_of(response) == (-32004, "overloaded")


def test_pipelined_writes_are_all_admitted(raw: RawConnection) -> None:
    count = 300  # PROTOCOL.md: at least 256 writes in flight before -32004
    raw.sock.sendall(
        b"".join(
            struct.pack(">I", len(p)) + p
            for p in (
                json.dumps(
                    {"jsonrpc": "2.0", "id": i, "method": "task.post", "params": {"title": f"t{i}"}}
                ).encode()
                for i in range(count)
            )
        )
    )
    responses = [raw.recv() for _ in range(count)]
    assert sorted(r["id"] for r in responses) == list(range(count))
    assert all("result" in r for r in responses)


def test_shutdown_answers_pending_waits_with_shutting_down(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    conn.send(
        {
            "jsonrpc": "2.0",
            "id": "w",
            "method": "task.wait",
            "params": {"timeout_s": 60, "kind": "x"},
        }
    )
    assert conn.call("ping", request_id="p")["id"] == "p"  # the wait is registered
    assert daemon.proc is not None
    daemon.proc.send_signal(15)
    response = conn.recv()
    assert response["id"] == "w" and error_of(response) == (-32005, "shutting_down")
    conn.close()
    assert daemon.proc.wait(20) == 0


def test_large_and_small_answers_interleave_intact(raw: RawConnection) -> None:
    """Answers bigger than the socket buffer are written partly at once and the
    rest through trio; small answers queued behind them must not cut in."""
    body = "b" * 60_000
    for n in range(40):
        raw.call("task.post", {"title": f"big {n}", "body": body}, request_id=f"p{n}")
    requests = []
    for n in range(60):
        if n % 10 == 0:
            requests.append({"jsonrpc": "2.0", "id": n, "method": "task.list", "params": {}})
        else:
            requests.append({"jsonrpc": "2.0", "id": n, "method": "ping"})
    raw.sock.sendall(
        b"".join(struct.pack(">I", len(p)) + p for p in (json.dumps(r).encode() for r in requests))
    )
    time.sleep(0.3)  # let the daemon fill the socket buffer before we read
    responses = {r["id"]: r for r in (raw.recv() for _ in requests)}
    assert sorted(responses) == list(range(60))
    for n, response in responses.items():
        if n % 10 == 0:
            tasks = response["result"]["tasks"]
            assert len(tasks) == 40 and all(t["body"] == body for t in tasks)
        else:
            assert response["result"] == {"pong": True}


def test_writer_thread_answers_queue_intact_behind_a_slow_reader(raw: RawConnection) -> None:
    """Write answers leave from the writer thread; when the client is slow to
    read, what the socket refuses queues in the connection's outbox and is
    flushed by trio, frame after whole frame."""
    body = "w" * 60_000
    count = 200  # about 12 MB of answers: far more than a socket buffer holds
    frames = b"".join(
        struct.pack(">I", len(p)) + p
        for p in (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "task.post",
                    "params": {"title": f"slow {n}", "body": body},
                }
            ).encode()
            for n in range(count)
        )
    )
    # Sent from a thread: the daemon stops reading requests while its answers
    # are not read, so a send of 12 MB before any read would race that
    # backpressure (and time out) instead of testing the outbox.
    sender = threading.Thread(target=raw.sock.sendall, args=(frames,))
    sender.start()
    time.sleep(0.5)  # read nothing for a while
    responses = [raw.recv() for _ in range(count)]
    sender.join()
    assert sorted(r["id"] for r in responses) == list(range(count))
    titles = {r["result"]["task"]["title"] for r in responses}
    assert titles == {f"slow {n}" for n in range(count)}
    assert all(r["result"]["task"]["body"] == body for r in responses)
