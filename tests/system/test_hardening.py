"""The hostile-user probe's robustness findings (issue 12): connections, the database, input.

Each fix's test failed on the daemon before the fix, and its docstring says
what the daemon used to do; the tests without a "Before:" pin a choice or
guard a neighbouring case.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from coordd_client import Client
from support import DaemonProcess, RawConnection, coord, run_coordd


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """`coordd serve` that is expected to refuse and exit on its own."""
    return run_coordd("serve", *args)


# --- 2. the slow-loris deadline starts at a frame's first byte -----------------------


def test_a_frame_sent_in_pieces_after_idleness_is_served(workdir: Path) -> None:
    """Before: after `--frame-timeout` of idleness, the next multi-read frame was cut."""
    daemon = DaemonProcess(workdir, args=("--frame-timeout", "1")).start()
    try:
        conn = RawConnection(daemon.socket_path)
        assert conn.call("ping")["result"] == {"pong": True}
        time.sleep(1.5)  # idle between frames is not slow-loris
        payload = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "task.post",
                "params": {"title": "after idleness", "body": "x" * 65536},
            }
        ).encode()
        conn.sock.sendall(struct.pack(">I", len(payload)))  # the header alone
        time.sleep(0.3)
        conn.sock.sendall(payload)
        answer = conn.recv()
        assert answer["result"]["task"]["title"] == "after idleness", answer
        # ...while a frame left unfinished past its deadline is still cut off.
        conn.sock.sendall(struct.pack(">I", 100) + b"{")
        assert conn.is_closed_by_peer(timeout_s=5)
        conn.close()
    finally:
        daemon.stop()


# --- 3. a request's lifetime is bound to its connection's ----------------------------


def _open_fds(pid: int) -> int:
    """The daemon's open sockets: what a connection (and a wait on it) holds. Not every
    fd: a busy machine makes the read pool open another SQLite connection meanwhile,
    which is a file the pool keeps, not a leak."""
    fds = f"/proc/{pid}/fd"
    return sum(1 for fd in os.listdir(fds) if _link(f"{fds}/{fd}").startswith("socket:"))


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""  # closed while we looked


def _send_then_close(path: Path, method: str, params: dict[str, object], times: int) -> None:
    """Connect, send one request, close at once: the race between the request and EOF."""
    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    frame = struct.pack(">I", len(payload)) + payload
    for _ in range(times):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(path))
        sock.sendall(frame)
        sock.close()


@pytest.mark.both_backends
def test_waits_never_outlive_their_connection(daemon: DaemonProcess) -> None:
    """Before: about half of 200 such waits lived on for their whole hour, each with an fd."""
    with daemon.client() as client:
        client.ping()
        baseline_fds = _open_fds(daemon.pid)
    _send_then_close(daemon.socket_path, "task.wait", {"timeout_s": 3600}, 200)
    deadline = time.monotonic() + 20
    with daemon.client() as client:
        while True:
            info = client.call_raw("server.info")
            waiters = json.loads(bytes(info.result))["waiters"]
            if waiters == 0 and _open_fds(daemon.pid) <= baseline_fds + 1:
                break
            assert time.monotonic() < deadline, (waiters, _open_fds(daemon.pid), baseline_fds)
            time.sleep(0.1)


@pytest.mark.both_backends
def test_subscriptions_never_outlive_their_connection(daemon: DaemonProcess) -> None:
    _send_then_close(daemon.socket_path, "events.subscribe", {}, 200)
    deadline = time.monotonic() + 20
    with daemon.client() as client:
        while json.loads(bytes(client.call_raw("server.info").result))["subscriptions"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)


# --- 4. batches count item by item, and reads are shared fairly ----------------------


def _post_many(conn: RawConnection, count: int) -> None:
    for start in range(0, count, 256):
        batch = [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "task.post",
                "params": {"title": f"filler {n}", "tags": ["filler"]},
            }
            for n in range(start, min(count, start + 256))
        ]
        conn.send(batch)
        answers = conn.recv()
        assert all("result" in a for a in answers), answers[:2]


def _readers(conn: RawConnection) -> dict[str, int]:
    """`server.info.readers`: the reader pool, and how fairly it has been shared."""
    answer = conn.call("server.info")
    assert "reader_shares" in answer["result"]["features"]
    readers: dict[str, int] = answer["result"]["readers"]
    return readers


@pytest.mark.both_backends
def test_a_batch_flood_does_not_starve_another_connections_reads(daemon: DaemonProcess) -> None:
    """Before: one frame of 256 scanning waits made another client's server.info take 23 s.

    The daemon counts what fairness means: one connection never holds or waits for more
    than its share of the reader pool, and no read finds more reads queued ahead of it
    than the shares of the connections reading beside it, however many scans the flood
    sent. Without the per-connection share, the flood's 512 scans queue for the pool
    together and the reads behind them count hundreds ahead.
    """
    filler = RawConnection(daemon.socket_path, timeout_s=60)
    _post_many(filler, 20_000)
    reader = RawConnection(daemon.socket_path, timeout_s=120)
    before = _readers(reader)
    flood = RawConnection(daemon.socket_path, timeout_s=60)
    scans = [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "task.wait",
            "params": {"timeout_s": 5, "tag": "nowhere"},
        }
        for n in range(256)
    ]
    flood.send(scans)
    flood.send(scans)
    # A third frame would pass 512 requests in flight: refused whole, item by item.
    flood.send(scans[:2])
    refused = flood.recv()
    assert [a["error"]["data"]["reason"] for a in refused] == ["connection_inflight"] * 2
    # Another connection reads while the flood's scans run (or after: the counts are
    # kept since the daemon started, so they cover the flood either way).
    for _ in range(5):
        assert "result" in reader.call("task.wait", {"timeout_s": 0, "tag": "elsewhere"})
    deadline = time.monotonic() + 60  # only to catch a hang
    while (after := _readers(reader))["admitted"] < before["admitted"] + 512 + 5 + 1:
        assert time.monotonic() < deadline, (before, after)
        time.sleep(0.05)
    print(f"\nreaders before the flood {before}; after {after}")
    share = after["per_connection"]
    assert share < after["size"]
    # The flood held or waited for at most its share of the pool...
    assert after["most_held_by_one"] <= share, after
    # ...so at most the one other reading connection's share was ever queued ahead of
    # a read: never the flood's 512 scans.
    assert after["longest_queue_ahead"] <= share, after
    for conn in (filler, reader, flood):
        conn.close()


# --- 5. an aliased database path meets the same lock ---------------------------------


def test_a_symlink_to_a_served_database_is_refused(daemon: DaemonProcess, workdir: Path) -> None:
    """Before: a second daemon served the same file and the first's writes failed -32603."""
    alias = workdir / "alias.db"
    alias.symlink_to(daemon.db_path)
    result = serve("--db", str(alias), "--socket", str(workdir / "s2.sock"))
    assert result.returncode == 1 and "in use by another coordd" in result.stderr, result
    with daemon.client() as client:
        assert client.post("still the only writer").created


# --- 6. a damaged or foreign file is refused at start, with advice -------------------


def _database_with_tasks(workdir: Path, count: int) -> Path:
    daemon = DaemonProcess(workdir, db_path=workdir / "big.db").start()
    conn = RawConnection(daemon.socket_path, timeout_s=60)
    _post_many(conn, count)
    conn.close()
    assert daemon.stop() == 0
    return daemon.db_path


@pytest.mark.parametrize("damage", ["garbage-header", "truncated"])
def test_a_damaged_database_is_refused_with_advice(workdir: Path, damage: str) -> None:
    """Before: a traceback. A file whose header or schema cannot be read is refused at
    start; damage further in is found by the check run beside serving, and every write
    refused (tests/system/test_store_check.py)."""
    if damage == "garbage-header":
        db = workdir / "g.db"
        db.write_bytes(b"this is not an SQLite database" * 200)
    else:
        db = _database_with_tasks(workdir, 3000)
        with open(db, "r+b") as file:
            file.truncate(db.stat().st_size // 2)
    before = db.read_bytes()
    result = serve("--db", str(db), "--socket", str(workdir / "s.sock"))
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    assert f"coordd check --db {db}" in result.stderr and "coordd backup" in result.stderr
    assert db.read_bytes() == before  # nothing written onto it
    check = run_coordd("check", "--db", str(db))
    assert check.returncode == 1 and "Traceback" not in check.stderr + check.stdout, check


# --- 8. validation gaps --------------------------------------------------------------


@pytest.mark.both_backends
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"id": 1, "agent": "claude-1\n"}, "agent"),
        ({"id": 1, "agent": "zero\u200bwidth"}, "agent"),
        ({"id": 1, "agent": "right\u202eleft"}, "agent"),
        ({"id": 1, "agent": "next\u0085line"}, "agent"),
        ({"id": 1, "agent": "para\u2029graph"}, "agent"),
    ],
)
def test_agent_names_must_be_printable_to_the_end(
    daemon: DaemonProcess, params: dict[str, object], field: str
) -> None:
    conn = RawConnection(daemon.socket_path)
    answer = conn.call("task.claim", params)
    assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == field
    conn.close()


@pytest.mark.both_backends
def test_a_kind_with_a_trailing_newline_is_refused(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    answer = conn.call("task.post", {"title": "t", "kind": "bug\n"})
    assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "kind"
    conn.close()


@pytest.mark.both_backends
@pytest.mark.parametrize(
    "params",
    [b'{"title":"caf\xe9"}', b'{"ti\xfftle":"x"}', b'{"title":"x","tags":["\xc3"]}'],
)
def test_invalid_utf8_inside_params_is_a_parse_error(daemon: DaemonProcess, params: bytes) -> None:
    conn = RawConnection(daemon.socket_path)
    conn.send_payload(b'{"jsonrpc":"2.0","id":7,"method":"task.post","params":' + params + b"}")
    answer = conn.recv()
    assert answer["error"]["code"] == -32700, answer
    conn.close()


@pytest.mark.both_backends
def test_duplicate_keys_keep_the_last(daemon: DaemonProcess) -> None:
    """A documented choice (docs/CONFORMANCE.md): last wins, as most JSON parsers do."""
    conn = RawConnection(daemon.socket_path)
    conn.send_payload(
        b'{"jsonrpc":"2.0","id":1,"method":"task.post","params":{"title":"a","title":"b"}}'
    )
    assert conn.recv()["result"]["task"]["title"] == "b"
    conn.close()


# --- 9. a resume point from the future -----------------------------------------------


@pytest.mark.both_backends
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("events.since", {"after_seq": 1000}),
        ("events.subscribe", {"after_seq": 1000}),
        ("task.wait", {"after_seq": 1000, "timeout_s": 1}),
    ],
)
def test_after_seq_beyond_the_newest_event_is_refused(
    daemon: DaemonProcess, method: str, params: dict[str, object]
) -> None:
    """Before: echoed back as the resume point, so every new event was silently missed."""
    with daemon.client() as client:
        client.post("one event")
    conn = RawConnection(daemon.socket_path)
    answer = conn.call(method, params)
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["data"]["field"] == "after_seq"
    assert answer["error"]["data"]["last_seq"] == 1
    assert "result" in conn.call(method, {**params, "after_seq": 1}, request_id=2)
    conn.close()


# --- 10. backups, a deleted socket, autostart, duplicate keys ------------------------


def test_a_deleted_socket_file_is_noticed_and_bound_again(daemon: DaemonProcess) -> None:
    daemon.socket_path.unlink()
    deadline = time.monotonic() + 15
    while True:
        try:
            with Client(daemon.socket_path, timeout_s=5) as client:
                assert client.post("reachable again").created
            break
        except Exception:
            assert time.monotonic() < deadline, daemon.log()
            time.sleep(0.1)
    assert "was removed or replaced; bound it again" in daemon.log()


def test_autostart_reports_a_daemon_that_exits_at_once(workdir: Path) -> None:
    """Before: the CLI waited its full 15 s, then said only "did not answer"."""
    (workdir / "bad.db").write_bytes(b"not a database" * 100)
    result = coord(
        "ls",
        socket=workdir / "auto.sock",
        autostart=True,
        env={"COORDD_DB": str(workdir / "bad.db"), "XDG_STATE_HOME": str(workdir / "state")},
    )
    assert result.returncode == 1
    assert "coordd exited with status 1 at start" in result.stderr, result
    assert "cannot use the database" in result.stderr
