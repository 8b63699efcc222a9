"""After a disk error the daemon stops and recovers from its log (docs/ARCHITECTURE.md).

The daemon runs under `fiu-run -x` (tests/fiu.py); `fiu-ctrl` makes its
fsync and fdatasync fail with EIO while it serves. What must hold: nothing
the disk failed is acknowledged (the write in flight gets a retryable -32004
`disk_error`, never -32603); the daemon exits 74 at once, without
checkpointing from a page cache it no longer trusts; restarted, it
recovers from the WAL, every acknowledged write is there, an unacknowledged
one is there whole or not at all (a retry with its key makes it exactly
once), and `PRAGMA integrity_check` says ok. The quick case (a few
seconds) runs in `make test`; `make soak` adds 40 rounds under concurrent
writers, audited like the kill -9 rounds of test_crash.py (the writers run
for a fixed time, too long for the quick tier).
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from test_crash import audit, start_workers

from fiu import FaultyDaemon
from support import DaemonProcess, RawConnection

#: `coordd serve`'s documented exit after a disk fault (sysexits' EX_IOERR), written
#: out rather than imported: supervisors and scripts see the number, not the name.
EXIT_DISK_FAULT = 74

#: How long a daemon may take to notice the fault and exit, on a loaded machine.
EXIT_TIMEOUT_S = 60


def post(conn: RawConnection, key: str) -> dict[str, object]:
    reply: dict[str, object] = conn.call("task.post", {"title": key, "idempotency_key": key})
    return reply


def test_a_failed_sync_is_not_acknowledged_and_the_daemon_restarts_from_its_log(
    workdir: Path,
) -> None:
    daemon = FaultyDaemon(workdir)
    daemon.start()
    try:
        conn = RawConnection(daemon.socket_path)
        acknowledged = {}
        for n in range(20):
            result = post(conn, f"before-{n}")["result"]
            assert isinstance(result, dict)
            acknowledged[f"before-{n}"] = result["task"]["id"]
        daemon.fail_syncs()
        reply = post(conn, "during")
        error = reply.get("error")
        assert isinstance(error, dict), reply
        reason = (error.get("data") or {}).get("reason")
        assert (error["code"], reason) == (-32004, "disk_error"), reply
        assert daemon.proc is not None
        assert daemon.proc.wait(EXIT_TIMEOUT_S) == EXIT_DISK_FAULT, daemon.log()
        conn.close()
        log = daemon.log()
        assert "CRITICAL" in log and "disk" in log, log
        # Exited without the closing checkpoint: the log is left for recovery.
        wal = Path(f"{daemon.db_path}-wal")
        assert wal.exists() and wal.stat().st_size > 0

        restarted = DaemonProcess(
            workdir, db_path=daemon.db_path, socket_path=daemon.socket_path
        ).start()
        try:
            conn = RawConnection(restarted.socket_path)
            for key, task_id in acknowledged.items():
                task = conn.call("task.get", {"id": task_id})["result"]["task"]
                assert task["title"] == key
            # The unacknowledged post is whole or absent; its retry makes it exactly once.
            assert "result" in post(conn, "during")
            conn.close()
            assert restarted.stop() == 0
        finally:
            restarted.ensure_dead()
        db = sqlite3.connect(daemon.db_path)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            keys = [k for (k,) in db.execute("SELECT idempotency_key FROM tasks")]
        finally:
            db.close()
        assert sorted(keys) == sorted([*acknowledged, "during"])
    finally:
        daemon.ensure_dead()


def fault_rounds(workdir: Path, rounds: int, writers: int = 3) -> dict[str, int]:
    """`rounds` disk faults under concurrent writers, each at a random point of the load;
    the daemon exits 74 each time and is restarted, as its supervisor would."""
    daemon = FaultyDaemon(workdir, args=("--log-level", "warning"))
    daemon.start()
    seconds = rounds * 4.0 + 10.0
    histories = [workdir / f"history-{n}.jsonl" for n in range(writers + 1)]
    workers = start_workers(daemon.socket_path, histories, seconds)
    rng = random.Random(rounds)
    exits: list[float] = []
    try:
        for _ in range(rounds):
            wait_for_progress(histories[:writers], rng.randint(5, 60), workers)
            daemon.fail_syncs()
            faulted = time.monotonic()
            assert daemon.proc is not None
            assert daemon.proc.wait(EXIT_TIMEOUT_S) == EXIT_DISK_FAULT, daemon.log()
            exits.append(time.monotonic() - faulted)
            daemon.start()
        for worker in workers:
            assert worker.wait(seconds + 60) == 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        daemon.ensure_dead()
    print(f"fault to exit: max {max(exits):.2f} s over {len(exits)} rounds")
    return audit(daemon.db_path, histories)


def wait_for_progress(
    histories: list[Path], operations: int, workers: list[subprocess.Popen[bytes]]
) -> None:
    """Until the writers have recorded `operations` more outcomes: the fault lands mid-load."""

    def recorded() -> int:
        return sum(p.read_bytes().count(b"\n") for p in histories if p.exists())

    target = recorded() + operations
    deadline = time.monotonic() + 60
    while recorded() < target:
        assert all(w.poll() is None for w in workers), "a worker ended before the rounds did"
        assert time.monotonic() < deadline, "the writers made no progress"
        time.sleep(0.01)


@pytest.mark.soak
@pytest.mark.timeout(1800)
def test_soak_many_disk_fault_rounds(workdir: Path) -> None:
    outcomes = fault_rounds(workdir, rounds=40, writers=4)
    print("audited:", outcomes)
