"""An idle Claude Code tab's wake hook outlives the daemon: killed (`kill -9`), stopped
cleanly (an upgrade's restart), or started again by the hook itself, the daemon that
comes back on the same socket and store is waited on by the same hook process, and a
message or an assignment sent to the tab after the restart wakes it.

Each case waits for the hook's waits to be registered on the daemon (`server.info`)
before taking that daemon away, and again on the new daemon before sending: what
wakes the tab is the hook that was waiting before the restart, not a new one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hook_runs import AGENT_A, SESSION_A, start_wake

from coordd_client import Client
from support import DaemonProcess, git_repo, server_info_or_none

#: Only a hang crosses it: the hook or the daemon stuck, never a slow machine.
HANG_S = 60.0


@pytest.fixture
def repo(workdir: Path) -> Path:
    return git_repo(workdir / "repo").resolve()


def wait_until_waiting(socket: Path, waiter: subprocess.Popen[str]) -> int:
    """Block until the hook has its `task.wait` and `message.wait` open on the daemon
    answering on `socket`; that daemon's pid."""
    deadline = time.monotonic() + HANG_S
    while True:
        assert waiter.poll() is None, waiter.communicate()
        info = server_info_or_none(socket)
        if info is not None and info.waiters >= 1 and info.message_waiters >= 1:
            return info.pid
        assert time.monotonic() < deadline, f"the hook did not wait on {socket}: {info}"
        time.sleep(0.05)


def woken(waiter: subprocess.Popen[str]) -> str:
    """The hook's wake-up text, once it has exited 2 (Claude Code's asyncRewake wake)."""
    try:
        _, stderr = waiter.communicate(timeout=HANG_S)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)
    assert waiter.returncode == 2, stderr
    return stderr


@pytest.mark.parametrize("how", ["kill -9", "clean stop"])
def test_a_message_after_a_restart_wakes_the_waiting_hook(
    daemon: DaemonProcess, repo: Path, how: str
) -> None:
    waiter = start_wake(daemon.socket_path, repo, SESSION_A)
    wait_until_waiting(daemon.socket_path, waiter)
    if how == "kill -9":
        daemon.kill()
    else:
        assert daemon.stop() == 0
    daemon.start()  # the same store, on the same socket (the hook may start none here)
    wait_until_waiting(daemon.socket_path, waiter)
    with Client(daemon.socket_path, agent="codex-3", project=str(repo)) as sender:
        sent = sender.send_message("the API moved to v2", to=AGENT_A).message.id
    text = woken(waiter)
    assert f"#{sent} from codex-3: the API moved to v2" in text


def test_an_assignment_after_a_restart_wakes_the_waiting_hook_and_nothing_older_does(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent="planner", project=str(repo)) as planner:
        planner.post("someone else's", assignee="claude-someone-else")
    waiter = start_wake(daemon.socket_path, repo, SESSION_A)
    wait_until_waiting(daemon.socket_path, waiter)
    daemon.kill()
    daemon.start()
    wait_until_waiting(daemon.socket_path, waiter)
    with Client(daemon.socket_path, agent="planner", project=str(repo)) as planner:
        task = planner.post("review the migration", assignee=AGENT_A).task
    text = woken(waiter)
    assert f"#{task.id} 'review the migration' was assigned to you by planner" in text


def test_the_hook_starts_the_daemon_again_where_a_client_may(
    daemon: DaemonProcess, repo: Path
) -> None:
    waiter = start_wake(daemon.socket_path, repo, SESSION_A, COORD_NO_AUTOSTART="0")
    first = wait_until_waiting(daemon.socket_path, waiter)
    daemon.kill()
    started = 0
    try:
        # Nobody else starts one: the hook does, on the store the socket served.
        started = wait_until_waiting(daemon.socket_path, waiter)
        assert started != first
        with Client(daemon.socket_path, agent="codex-3", project=str(repo)) as sender:
            info = sender.server_info()
            assert info.db_path == str(daemon.db_path)
            sent = sender.send_message("back again?", to=AGENT_A).message.id
        text = woken(waiter)
        assert f"#{sent} from codex-3: back again?" in text
    finally:
        if started:
            os.kill(started, signal.SIGTERM)


def test_a_daemon_back_on_another_board_is_not_waited_on(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    waiter = start_wake(daemon.socket_path, repo, SESSION_A)
    wait_until_waiting(daemon.socket_path, waiter)
    daemon.kill()
    other = DaemonProcess(workdir, db_path=workdir / "other.db", socket_path=daemon.socket_path)
    try:
        other.start()
        _, stderr = waiter.communicate(timeout=HANG_S)
    finally:
        other.ensure_dead()
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)
    # Left without waking the tab, saying why: the tab's other hooks refuse that board.
    assert waiter.returncode == 0
    assert "came back serving board" in stderr and "not waiting" in stderr
