"""`coordd migrate`: a single-machine board moves to a team store whole, and only into an
empty one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from postgres import create_database
from servers import PostgresPeer
from support import DaemonProcess, RawConnection


def coordd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coordd", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def snapshot(daemon: DaemonProcess) -> dict[str, Any]:
    """Everything a client can read of the board, decoded (PostgreSQL spaces JSON apart)."""
    raw = RawConnection(daemon.socket_path)
    try:
        return {
            "tasks": raw.call("task.list", {"limit": 1000})["result"]["tasks"],
            "events": raw.call("events.since", {"after_seq": 0, "limit": 1000})["result"],
            "reservations": raw.call("reservation.list", {})["result"],
            "agents": [a["agent"] for a in raw.call("agent.list")["result"]["agents"]],
        }
    finally:
        raw.close()


def build_board(daemon: DaemonProcess) -> None:
    raw = RawConnection(daemon.socket_path)
    try:
        first = raw.call("task.post", {"title": "schema", "agent": "a", "tags": ["db"]})
        first_id = first["result"]["task"]["id"]
        raw.call("task.post", {"title": "api", "agent": "a", "depends_on": [first_id]})
        raw.call("task.post", {"title": "gone", "agent": "a", "idempotency_key": "k1"})
        claimed = raw.call("task.claim", {"id": first_id, "agent": "b", "lease_s": 3600})
        fence = claimed["result"]["task"]["fence"]
        raw.call("task.complete", {"id": first_id, "agent": "b", "fence": fence, "result": "ok"})
        raw.call("task.claim", {"id": 2, "agent": "c", "lease_s": 3600})
        raw.call("task.cancel", {"id": 3, "agent": "a", "reason": "dup"})
        raw.call(
            "reservation.acquire",
            {"project": "/p", "agent": "c", "patterns": ["src/**"], "ttl_s": 3600},
        )
    finally:
        raw.close()


def test_a_board_moves_to_an_empty_team_store_whole(
    workdir: Path, postgres_cluster: PostgresPeer
) -> None:
    board = DaemonProcess(workdir).start()
    build_board(board)
    before = snapshot(board)
    with board.client() as client:
        board_id = client.server_info().board_id
    assert board_id is not None
    # The daemon still holds the file: refused, nothing written.
    target = create_database(postgres_cluster)
    running = coordd("migrate", "--from", str(board.db_path), "--to", target)
    assert running.returncode == 1 and "in use by another coordd" in running.stderr
    assert board.stop() == 0

    moved = coordd("migrate", "--from", str(board.db_path), "--to", target)
    assert moved.returncode == 0, moved.stderr
    assert "3 tasks" in moved.stdout and "1 reservations" in moved.stdout

    team = DaemonProcess(workdir, store=target, socket_path=workdir / "team.sock").start()
    try:
        after = snapshot(team)
        assert after == before  # tasks with fences and leases, the log, reservations, agents
        raw = RawConnection(team.socket_path)
        try:
            # Counters continue after the source's: no id or seq is reused.
            posted = raw.call("task.post", {"title": "new", "agent": "a"})["result"]["task"]
            assert posted["id"] == 4
            info = raw.call("server.info")["result"]
            assert info["last_seq"] == before["events"]["last_seq"] + 1
            # The board keeps its id (issue 43): its tabs and records name it.
            assert info["board_id"] == board_id and "board_id" in info["features"]
            # The holder's lease and fence came along: it completes on the team store.
            done = raw.call("task.complete", {"id": 2, "agent": "c", "fence": 1})
            assert done["result"]["task"]["state"] == "done"
        finally:
            raw.close()
        # A second migration into the (now non-empty) store is refused.
        again = coordd("migrate", "--from", str(board.db_path), "--to", target)
        assert again.returncode == 1 and "is not empty" in again.stderr
    finally:
        team.ensure_dead()


def test_migrate_refuses_what_it_cannot_move(workdir: Path) -> None:
    missing = coordd("migrate", "--from", str(workdir / "none.db"), "--to", "postgresql://x@/y")
    assert missing.returncode == 1 and "no database at" in missing.stderr
    wrong = coordd("migrate", "--from", str(workdir / "none.db"), "--to", str(workdir / "b.db"))
    assert wrong.returncode == 2 and "postgresql://" in wrong.stderr
