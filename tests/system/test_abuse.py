"""Hostile load: stalled and garbage connections, non-readers, fd exhaustion, locks, a full disk."""

from __future__ import annotations

import json
import os
import random
import resource
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from racing import WORKERS, race

from coordd.limits import Limits
from coordd.store.schema import SCHEMA_VERSION
from coordd_client import Client, Overloaded
from support import DaemonProcess, RawConnection, rss_kib


def open_raw(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    return sock


def closed_by_peer(sock: socket.socket, timeout_s: float) -> bool:
    sock.settimeout(timeout_s)
    try:
        while True:
            if sock.recv(65536) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_stalled_and_garbage_connections_do_not_hurt_a_fresh_client(workdir: Path) -> None:
    daemon = DaemonProcess(workdir, args=("--frame-timeout", "2", "--log-level", "warning")).start()
    try:
        rss_before = rss_kib(daemon.pid)
        rng = random.Random(7)
        stalled: list[socket.socket] = []
        for n in range(300):
            sock = open_raw(daemon.socket_path)
            kind = n % 3
            if kind == 0:
                sock.sendall(b"\x00\x00")  # half a header
            elif kind == 1:
                sock.sendall(struct.pack(">I", 500) + b'{"jsonrpc":')  # half a payload
            stalled.append(sock)  # kind 2: idle, which is allowed
        garbage = [open_raw(daemon.socket_path) for _ in range(50)]
        for sock in garbage:
            sock.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))))
        latencies = []
        with daemon.client() as client:
            task_ids = [client.post(f"t{n}").task.id for n in range(100)]
            for index in range(300):
                start = time.perf_counter()
                if index % 3 == 0:
                    assert client.claim(task_ids[index // 3], "fresh").won
                else:
                    assert client.ping().pong
                latencies.append(time.perf_counter() - start)
        rss_during = rss_kib(daemon.pid)
        # Slow-loris: the two half-sent kinds are cut off after the frame timeout; idle ones stay.
        assert all(closed_by_peer(s, 6) for s in stalled[0::3][:20])
        assert all(closed_by_peer(s, 6) for s in stalled[1::3][:20])
        assert not closed_by_peer(stalled[2], 0.2)
        latencies.sort()
        print(
            f"\nfresh client under abuse: p50 {latencies[150] * 1e6:.0f} us,"
            f" p99 {latencies[296] * 1e6:.0f} us;"
            f" daemon RSS {rss_before} -> {rss_during} KiB with 350 hostile connections"
        )
        assert rss_during - rss_before < 30_000  # 350 connections cost little, not megabytes each
        with daemon.client() as client:
            assert client.server_info().counts["claimed"] == 100
    finally:
        for sock in [*stalled, *garbage]:
            sock.close()
        assert daemon.stop() == 0


def test_client_that_never_reads_is_cut_off_and_costs_no_memory(workdir: Path) -> None:
    daemon = DaemonProcess(workdir, args=("--write-timeout", "2")).start()
    try:
        hog = open_raw(daemon.socket_path)
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        body = "x" * 60_000
        frame = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "task.list", "params": {"limit": 1000}}
        ).encode()
        with daemon.client() as client:
            for n in range(200):
                client.post(f"big {n}", body=body)
        rss_before = rss_kib(daemon.pid)
        hog.settimeout(10)
        sent = 0
        try:
            for _ in range(400):  # each answer is ~12 MB; never read any of them
                hog.sendall(struct.pack(">I", len(frame)) + frame)
                sent += 1
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        time.sleep(4)  # past the 2 s write timeout, still reading nothing
        assert "did not read" in daemon.log()
        assert closed_by_peer(hog, 15)  # what was buffered drains, then the end
        with daemon.client() as client:  # everyone else is fine
            assert client.ping().pong
        assert rss_kib(daemon.pid) - rss_before < 200_000
    finally:
        hog.close()
        assert daemon.stop() == 0


def test_writer_thread_answers_to_a_client_that_never_reads_are_bounded(workdir: Path) -> None:
    """Writes are answered from the writer thread, which never waits on a
    socket; what the client does not read queues in its outbox. The connection
    stops reading requests once it is owed `Limits.unsent_answers_per_connection`
    answers, a count the daemon reports (`server.info.stalled`), however fast
    the client writes and however slow the writer runs; the client is then cut
    off after the write timeout."""
    bound = Limits.unsent_answers_per_connection
    # Small answers, so the count binds before the 1 MiB byte mark does; the write
    # timeout is long enough to watch the stall before the cut-off.
    daemon = DaemonProcess(workdir, args=("--write-timeout", "6")).start()
    hog = open_raw(daemon.socket_path)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    frames = b"".join(
        struct.pack(">I", len(payload)) + payload
        for payload in (
            json.dumps(
                {"jsonrpc": "2.0", "id": n, "method": "task.post", "params": {"title": f"u{n}"}}
            ).encode()
            for n in range(5 * bound)
        )
    )
    # Blocks once the daemon stops reading, until the cut-off breaks the pipe.
    writing = threading.Thread(target=_send_until_cut_off, args=(hog, frames), daemon=True)
    writing.start()
    try:
        with daemon.client() as client:
            assert "stalled_connections" in client.server_info().features
            seen = []
            deadline = time.monotonic() + 60  # catches a hang, not a speed
            while True:
                stalled = client.server_info().stalled
                assert stalled is not None
                seen.append(stalled.answers)
                assert stalled.answers <= bound, seen  # never more owed than the bound
                if stalled.connections == 1 and stalled.answers == bound:
                    break
                assert time.monotonic() < deadline, seen
                time.sleep(0.05)
        until_logged(daemon, "did not read", timeout_s=60)  # cut off after the 6 s
        # What the kernel took before the stall; the answers still owed were dropped.
        delivered = _answers_until_closed(hog, timeout_s=15)
        writing.join(timeout=60)
        assert not writing.is_alive()
        with daemon.client() as client:  # everyone else is fine
            info = client.server_info()
            assert info.stalled is not None and info.stalled.connections == 0
            # Every request it read was either answered into the socket or owed at
            # the stall, so it posted at most that many of the hog's tasks.
            assert 0 < info.counts["pending"] <= len(delivered) + bound, len(delivered)
            assert client.ping().pong
            assert client.post("after the hog").created
    finally:
        hog.close()
        assert daemon.stop() == 0


def _answers_until_closed(sock: socket.socket, timeout_s: float) -> list[object]:
    """Every whole answer frame left to read on `sock`, up to the daemon's close."""
    sock.settimeout(timeout_s)
    data = bytearray()
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    answers, at = [], 0
    while at + 4 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if at + 4 + length > len(data):
            break  # cut off partway: that answer was never whole, so still owed
        answers.append(json.loads(data[at + 4 : at + 4 + length]))
        at += 4 + length
    return answers


def _send_until_cut_off(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass  # cut off (EPIPE, ECONNRESET), or closed by the test


def until_logged(daemon: DaemonProcess, text: str, timeout_s: float) -> None:
    """Wait until the daemon's log says `text` (a deadline, not a fixed sleep)."""
    deadline = time.monotonic() + timeout_s
    while text not in daemon.log():
        assert time.monotonic() < deadline, f"the daemon never logged {text!r}"
        time.sleep(0.1)


def test_accept_loop_survives_fd_exhaustion(workdir: Path) -> None:
    def low_fd_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    daemon = DaemonProcess(workdir)
    daemon.start(wait=False)
    assert daemon.proc is not None
    daemon.proc.kill()  # replaced by one started with a low fd limit
    daemon.proc.wait()
    log = open(workdir / "emfile.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(daemon.command(), stdout=log, stderr=log, preexec_fn=low_fd_limit)  # noqa: PLW1509
    log.close()
    daemon.proc = proc
    try:
        daemon.wait_ready()
        flood = []
        for _ in range(120):
            try:
                flood.append(open_raw(daemon.socket_path))
            except OSError:
                break
        time.sleep(1.0)
        for sock in flood:
            sock.close()
        time.sleep(0.5)
        with Client(daemon.socket_path, timeout_s=10) as client:
            assert client.ping().pong  # recovered
        assert "accept failed" in (workdir / "emfile.log").read_text()
    finally:
        daemon.ensure_dead()


def test_external_write_lock_gives_retryable_errors_then_recovers(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.post("before the lock")
        shell = sqlite3.connect(daemon.db_path, isolation_level=None)
        shell.execute("BEGIN IMMEDIATE")  # a user's sqlite3 shell holding the write lock
        try:
            with pytest.raises(Overloaded) as info:
                client.post("while locked")
            assert info.value.data["reason"] == "database_locked"
            assert client.ping().pong
            assert len(client.list_tasks().tasks) == 1  # reads go on
        finally:
            shell.execute("ROLLBACK")
            shell.close()
        assert client.post("after the lock").created


def test_full_database_refuses_writes_keeps_reads_and_recovers(workdir: Path) -> None:
    daemon = DaemonProcess(workdir, args=("--max-db-pages", "60")).start()
    try:
        with daemon.client() as client:
            full = None
            for n in range(200):
                try:
                    client.post(f"filler {n}", body="y" * 20_000)
                except Overloaded as exc:
                    full = exc
                    break
            assert full is not None and full.data["reason"] == "disk_full"
            stored = len(client.list_tasks(limit=1000).tasks)
            assert stored > 0 and client.ping().pong
        assert daemon.stop() == 0
        daemon.args = ()  # space returns
        daemon.start()
        with daemon.client() as client:
            assert len(client.list_tasks(limit=1000).tasks) == stored  # nothing lost
            assert client.post("after space returned", body="y" * 20_000).created
        conn = sqlite3.connect(daemon.db_path)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
    finally:
        daemon.ensure_dead()


def test_wal_stays_bounded_under_sustained_writes_and_reads(daemon: DaemonProcess) -> None:
    wal = Path(str(daemon.db_path) + "-wal")
    sizes = []
    readers = [RawConnection(daemon.socket_path) for _ in range(2)]
    try:

        def sample() -> None:
            for reader in readers:
                assert "result" in reader.call("task.list", {"limit": 200})
            sizes.append(wal.stat().st_size if wal.exists() else 0)

        import threading

        stop = threading.Event()

        def sampler() -> None:
            while not stop.is_set():
                sample()
                time.sleep(0.1)

        thread = threading.Thread(target=sampler)
        thread.start()
        race("poster.py", daemon.socket_path, [[f"w{n}", "2500"] for n in range(4)])
        stop.set()
        thread.join()
    finally:
        for reader in readers:
            reader.close()
    print(f"\nWAL size: max {max(sizes) / 1e6:.1f} MB over {len(sizes)} samples")
    # 10,000 durable posts write far more than this; the log is restarted, not left to grow.
    assert max(sizes) < 40 * 1024 * 1024


def test_backup_while_writing_and_check(daemon: DaemonProcess, workdir: Path) -> None:
    coordd = str(Path(sys.executable).parent / "coordd")

    def admin(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [coordd, *args, "--db", str(daemon.db_path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    with daemon.client() as client:
        for n in range(50):
            client.post(f"t{n}")
    with subprocess.Popen(
        [
            sys.executable,
            str(WORKERS / "poster.py"),
            str(daemon.socket_path),
            "bg",
            "300",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as writer:
        assert writer.stdout is not None and writer.stdin is not None
        writer.stdout.readline()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        backup = admin("backup", str(workdir / "copy.db"))
        writer.communicate(timeout=60)
    assert backup.returncode == 0 and "integrity_check: ok" in backup.stdout
    conn = sqlite3.connect(workdir / "copy.db")
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] >= 50
    conn.close()
    check = admin("check")
    assert (
        check.returncode == 0
        and "integrity_check: ok" in check.stdout
        and f"schema version:  {SCHEMA_VERSION}" in check.stdout
    )
    refused = admin("backup", str(workdir / "copy.db"))
    assert refused.returncode == 1 and "refusing to overwrite" in refused.stderr
    assert os.path.exists(workdir / "copy.db")
    # The counts server.info answers are kept by triggers; check holds them to the tasks.
    conn = sqlite3.connect(workdir / "copy.db")
    with conn:
        conn.execute("UPDATE task_counts SET n = n + 1 WHERE state = 'pending'")
    conn.close()
    tampered = subprocess.run([coordd, "check", "--db", str(workdir / "copy.db")],
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert tampered.returncode == 1 and "kept task counts disagree" in tampered.stderr
