"""Leases and fences with real processes and real time (PROTOCOL.md section 5)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from racing import WORKERS, race

from coordd.clock import parse_time
from support import DaemonProcess


def test_claim_next_race_hands_out_every_task_once_in_priority_order(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        posted = [client.post(f"t{n}", priority=(n * 37) % 11 - 5).task for n in range(120)]
    outputs = race("next_claimer.py", daemon.socket_path, [[f"w{n}"] for n in range(12)])
    claimed_ids = [task_id for output in outputs for task_id, _ in output]
    assert sorted(claimed_ids) == sorted(t.id for t in posted)  # each exactly once
    assert sum(1 for output in outputs if output) > 1  # really shared among processes
    # The writer serialises claim_next: in commit order, priorities never rise,
    # and within one priority the older task goes first.
    conn = sqlite3.connect(daemon.db_path)
    try:
        order = conn.execute(
            "SELECT json_extract(data, '$.task.priority'), json_extract(data, '$.task_id')"
            " FROM events WHERE type = 'task.claimed' ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    keys = [(-priority, task_id) for priority, task_id in order]
    assert keys == sorted(keys)


def test_paused_process_past_its_lease_is_fenced_out(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        task_id = client.post("contested").task.id
    with subprocess.Popen(
        [sys.executable, str(WORKERS / "zombie.py"), str(daemon.socket_path), str(task_id), "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as zombie:
        try:
            assert zombie.stdout is not None and zombie.stdin is not None
            old_fence = int(zombie.stdout.readline())
            zombie.send_signal(signal.SIGSTOP)
            with daemon.client() as client:
                deadline = time.monotonic() + 10
                while not (won := client.claim(task_id, "replacement", lease_s=60)).won:
                    assert time.monotonic() < deadline, "lease never expired"
                    time.sleep(0.1)
                assert won.task.fence == old_fence + 1
                client.complete(task_id, "replacement", fence=won.task.fence, result="the real fix")
            zombie.send_signal(signal.SIGCONT)
            zombie.stdin.write("go\n")
            zombie.stdin.flush()
            assert zombie.stdout.readline().strip() == "lease_lost"
            with daemon.client() as client:
                final = client.get(task_id).task
            assert final.result == "the real fix" and final.claimed_by == "replacement"
        finally:
            zombie.kill()  # never leave a SIGSTOPped child behind a failed assertion


def test_heartbeat_keeps_a_short_lease_then_it_expires_within_lease_plus_one_second(
    daemon: DaemonProcess,
) -> None:
    lease = 1.0
    with daemon.client() as client:
        task_id = client.post("kept alive").task.id
        assert client.claim(task_id, "tab", lease_s=lease).won
        stop_at = time.monotonic() + 3 * lease
        while time.monotonic() < stop_at:
            assert client.heartbeat("tab", lease_s=lease).renewed == 1
            time.sleep(lease / 4)
        last_expiry = parse_time(client.get(task_id).task.lease_expires_at or "")
        assert client.get(task_id).task.state == "claimed"
        while client.get(task_id).task.state == "claimed":
            time.sleep(0.02)
        freed_at = time.time()
    late_by = freed_at - last_expiry.timestamp()
    assert late_by <= 1.0, f"expired {late_by:.3f}s after the lease ended"


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_restart_grace_and_fences_survive_a_restart(workdir: Path, stop: str) -> None:
    process = DaemonProcess(workdir, args=("--restart-grace", "5")).start()
    with process.client() as client:
        task_id = client.post("held across restarts").task.id
        fence = client.claim(task_id, "tab", lease_s=1).task.fence
    if stop == "sigkill":
        process.kill()
    else:
        assert process.stop() == 0
    time.sleep(1.5)  # the lease lapses while the daemon is down
    restarted = DaemonProcess(workdir, args=("--restart-grace", "5")).start()
    try:
        with restarted.client() as client:
            task = client.get(task_id).task
            assert task.state == "claimed" and task.claimed_by == "tab"
            remaining = parse_time(task.lease_expires_at or "").timestamp() - time.time()
            assert 3.0 < remaining <= 5.0
            renewed = client.renew(task_id, "tab", fence=fence, lease_s=60).task
            assert renewed.fence == fence
            client.release(task_id, "tab", fence=fence)
            assert client.claim(task_id, "other").task.fence == fence + 1
    finally:
        assert restarted.stop() == 0
