"""Every error answered to a client is logged once, in one format (docs/OPERATIONS.md).

Each case reads the daemon's own log after the answer has arrived: the line
is written before the response is queued, so no wait is needed, and each
test counts the lines, so a refusal logged twice fails as surely as one
never logged. Before `dispatch.error_reply` a parse error, an invalid batch
item and the in-flight cap were answered but never logged, and a frame
error was logged in a format of its own.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator

import pytest

from support import DaemonProcess, RawConnection

#: `dispatch.REFUSAL_FORMAT` as the daemon's log handler prints it.
LINE = "INFO coordd.methods.dispatch: {method} (id {id}) -> {kind}: "


@pytest.fixture
def raw(daemon: DaemonProcess) -> Iterator[RawConnection]:
    conn = RawConnection(daemon.socket_path)
    yield conn
    conn.close()


def count_refusals(log: str, method: str, request_id: object, kind: str) -> int:
    """How many log lines record this one refusal, in the one format."""
    prefix = LINE.format(method=method, id=repr(request_id), kind=kind)
    return len(re.findall(rf"^\S+ \S+ {re.escape(prefix)}", log, re.M))


def test_a_parse_error_is_logged_once(raw: RawConnection, daemon: DaemonProcess) -> None:
    raw.send_payload(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    response = raw.recv()
    assert response["id"] is None and response["error"]["code"] == -32700
    assert count_refusals(daemon.log(), "-", None, "parse_error") == 1, daemon.log()


def test_an_invalid_batch_item_is_logged_once_with_its_id(
    raw: RawConnection, daemon: DaemonProcess
) -> None:
    raw.send(
        [
            {"jsonrpc": "1.0", "id": "bad-1", "method": "ping"},
            {"jsonrpc": "2.0", "id": "good-1", "method": "ping"},
        ]
    )
    by_id = {answer["id"]: answer for answer in raw.recv()}
    assert by_id["bad-1"]["error"]["code"] == -32600 and "result" in by_id["good-1"]
    log = daemon.log()
    assert count_refusals(log, "-", "bad-1", "invalid_request") == 1, log
    assert "'good-1'" not in log  # an answered request is not a refusal


def test_a_frame_error_is_logged_once_in_the_same_format(
    raw: RawConnection, daemon: DaemonProcess
) -> None:
    raw.sock.sendall(struct.pack(">I", 0))
    response = raw.recv()
    assert response["id"] is None and response["error"]["data"]["kind"] == "invalid_request"
    assert raw.is_closed_by_peer()
    log = daemon.log()
    assert count_refusals(log, "-", None, "invalid_request") == 1, log
    assert "closing a connection:" not in log  # the second format is gone


def test_in_flight_cap_refusals_are_logged_once_each(
    raw: RawConnection, daemon: DaemonProcess
) -> None:
    cap = 512  # Limits.max_inflight_per_connection
    waits = b"".join(
        struct.pack(">I", len(payload)) + payload
        for payload in (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "task.wait",
                    "params": {"timeout_s": 60, "kind": "never"},
                }
            ).encode()
            for n in range(cap)
        )
    )
    raw.sock.sendall(waits)
    raw.send(
        [
            {"jsonrpc": "2.0", "id": "over-1", "method": "ping"},
            {"jsonrpc": "2.0", "id": "over-2", "method": "ping"},
        ]
    )
    refused = raw.recv()
    assert [answer["id"] for answer in refused] == ["over-1", "over-2"]
    assert {answer["error"]["data"]["reason"] for answer in refused} == {"connection_inflight"}
    log = daemon.log()
    for request_id in ("over-1", "over-2"):
        assert count_refusals(log, "ping", request_id, "overloaded") == 1, log


def test_a_write_refused_on_the_writer_thread_is_logged_once(
    raw: RawConnection, daemon: DaemonProcess
) -> None:
    response = raw.call("task.claim", {"id": 999_999, "agent": "a"}, request_id="claim-1")
    assert response["error"]["data"]["kind"] == "not_found"
    log = daemon.log()
    assert count_refusals(log, "task.claim", "claim-1", "not_found") == 1, log


def test_bad_params_of_a_direct_request_are_logged_once(
    raw: RawConnection, daemon: DaemonProcess
) -> None:
    response = raw.call("task.claim", {"id": 1, "agent": ""}, request_id="claim-2")
    assert response["error"]["code"] == -32602
    log = daemon.log()
    assert count_refusals(log, "task.claim", "claim-2", "invalid_params") == 1, log
