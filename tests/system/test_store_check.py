"""The SQLite file's integrity check runs beside serving, not before it (issue 59: a
start read every page first, 4.9 s at a million tasks), and still nothing is written
onto a damaged file: the daemon finds the damage, refuses every write with advice,
says so in `server.info` and `coord doctor`, and leaves the file as it found it
(docs/PROTOCOL-1.2.md section 3c)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from support import DaemonProcess, RawConnection, coord, run_coordd

PAGE = 4096


def _database_with_tasks(workdir: Path, count: int) -> Path:
    daemon = DaemonProcess(workdir, db_path=workdir / "big.db").start()
    conn = RawConnection(daemon.socket_path, timeout_s=60)
    for start in range(0, count, 256):
        batch = [
            {"jsonrpc": "2.0", "id": n, "method": "task.post",
             "params": {"title": f"filler {n}", "body": "x" * 200}}
            for n in range(start, min(count, start + 256))
        ]  # fmt: skip
        conn.send(batch)
        assert all("result" in a for a in conn.recv())
    conn.close()
    assert daemon.stop() == 0
    return daemon.db_path


def _check(daemon: DaemonProcess) -> dict[str, Any]:
    """`server.info.store.check` as the daemon sends it."""
    with daemon.client() as client:
        info = json.loads(bytes(client.call_raw("server.info").result))
    check: dict[str, Any] = info["store"]["check"]
    return check


def _verdict(daemon: DaemonProcess) -> dict[str, Any]:
    """The check once it has ended (its state while running is `running`)."""
    deadline = time.monotonic() + 60  # only to catch a hang
    while (check := _check(daemon))["state"] == "running":
        assert time.monotonic() < deadline, daemon.log()
        time.sleep(0.05)
    return check


def test_the_daemon_serves_first_and_checks_its_file_beside(workdir: Path) -> None:
    db = _database_with_tasks(workdir, 3000)
    daemon = DaemonProcess(workdir, db_path=db).start()
    try:
        assert _check(daemon)["state"] in ("running", "ok")  # answered while it runs
        assert _verdict(daemon) == {"state": "ok", "problems": []}
        with daemon.client() as client:
            assert client.post("after the check").created
            assert "store_check" in client.server_info().features
        log = daemon.log()
        # The check began once the daemon served: its verdict is logged after the
        # line that says it serves (a check before serving would come first).
        served = log.index("serving")
        assert served < log.index("the store's integrity check passed"), log
    finally:
        assert daemon.stop() == 0


def test_damage_found_by_the_check_refuses_every_write_and_the_file_is_left_alone(
    workdir: Path,
) -> None:
    """Before: refused at start by a full read (now run beside serving); the pages
    overwritten here are past the header and schema, which a start still reads."""
    db = _database_with_tasks(workdir, 3000)
    pages = db.stat().st_size // PAGE
    with open(db, "r+b") as file:
        for page in (pages // 3, pages // 2, pages // 2 + 1):
            file.seek(page * PAGE)
            file.write(os.urandom(PAGE))
    before = db.read_bytes()
    daemon = DaemonProcess(workdir, db_path=db).start()
    try:
        check = _verdict(daemon)
        assert check["state"] == "damaged" and check["problems"], check
        conn = RawConnection(daemon.socket_path)
        answer = conn.call("task.post", {"title": "onto the damage"})
        conn.close()
        error = answer["error"]
        assert error["code"] == -32603 and error["data"]["reason"] == "store_damaged", answer
        assert f"coordd check --db {db}" in error["message"] and "coordd backup" in error["message"]
        assert "damaged" in daemon.log() and "Traceback" not in daemon.log()
        doctor = coord("doctor", "--json", socket=daemon.socket_path, cwd=workdir)
        found = [f for f in json.loads(doctor.stdout)["checks"] if f["check"] == "store"]
        assert found and found[0]["status"] == "missing", doctor.stdout
        assert f"coordd check --db {db}" in found[0]["fix"], found
    finally:
        stopped = daemon.stop()
    assert stopped == 1, daemon.log()  # not a clean stop: it served a damaged file
    # Whatever was written since the start (the restart grace, a migration) is in the
    # WAL beside the file, never in it: no checkpoint before a passed check.
    assert db.read_bytes() == before
    check_run = run_coordd("check", "--db", str(db))
    assert check_run.returncode == 1 and "Traceback" not in check_run.stderr + check_run.stdout
