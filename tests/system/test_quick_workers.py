"""The quick server's workers (issue 46): warm processes that serve calls in turn.

A worker serves one call after another (no fork per call), gives each caller its
pipes back before the caller hears its status, and makes way for a fresh worker
after a call it cannot vouch for (here: an interrupt in the middle of it)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import COORD, DaemonProcess, coord_env, quick_server_ready


@pytest.fixture
def quick(workdir: Path) -> Iterator[dict[str, str]]:
    """A daemon, a warm quick server beside it, and the environment that requires it."""
    (workdir / "home").mkdir()
    daemon = DaemonProcess(workdir, db_path=workdir / "coord.db", socket_path=workdir / "s.sock")
    daemon.start()
    env = coord_env(
        workdir / "s.sock", COORD_QUICK="1", HOME=str(workdir / "home"), COORD_AGENT="ada"
    )
    try:
        first = subprocess.run(
            [COORD, "whoami"], env=env, capture_output=True, timeout=60, check=False
        )
        assert first.returncode == 0, first
        quick_server_ready(workdir)
        yield {**env, "COORD_QUICK": "require"}
    finally:
        daemon.stop()


def server_pid(workdir: Path) -> int:
    """The quick server beside `workdir`'s socket (its workers, forked from it, share its
    command line: the server is the oldest)."""
    found = subprocess.run(
        ["pgrep", "-o", "-f", f"coordd_apps.quick.server {workdir}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(found.stdout)


def workers(server: int) -> set[int]:
    """The server's children: its workers."""
    children = Path(f"/proc/{server}/task/{server}/children").read_text().split()
    return {int(pid) for pid in children}


def call(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [COORD, *argv], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done
    return done


def test_calls_in_turn_are_served_by_the_same_warm_workers(
    workdir: Path, quick: dict[str, str]
) -> None:
    call(quick, "post", "warm-up")  # the first call: the server forks a spare beside it
    server = server_pid(workdir)
    before = workers(server)
    assert 1 <= len(before) <= 2, before
    for n in range(6):
        said = call(quick, "post", f"task {n}", "--json")
        assert json.loads(said.stdout)["task"]["title"] == f"task {n}"
    # A child forked per call would be six new pids; workers that serve calls in turn
    # are the same ones (a spare is forked only while every worker is busy).
    assert workers(server) == before


def test_concurrent_calls_are_each_answered(workdir: Path, quick: dict[str, str]) -> None:
    running = [
        subprocess.Popen([COORD, "post", f"racing {n}"], env=quick, stdout=subprocess.PIPE)
        for n in range(12)
    ]
    statuses = [process.wait(timeout=120) for process in running]
    for process in running:
        assert process.stdout is not None
        process.stdout.close()
    assert statuses == [0] * 12
    listed = call(quick, "ls", "--json").stdout
    assert all(f"racing {n}" in listed for n in range(12))


def test_a_callers_pipes_are_closed_when_it_hears_its_status(quick: dict[str, str]) -> None:
    process = subprocess.Popen(
        [COORD, "whoami"], env=quick, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.wait(timeout=60) == 0
    for stream in (process.stdout, process.stderr):
        assert stream is not None
        # End of file now, not when a worker serving on happens to let go of the pipe.
        ready, _, _ = select.select([stream], [], [], 30)
        assert ready, "the caller's pipe is still held open after it exited"
        stream.read()
        stream.close()


def test_an_interrupted_call_gets_a_fresh_worker_after_it(
    workdir: Path, quick: dict[str, str]
) -> None:
    call(quick, "whoami")
    server = server_pid(workdir)
    reader, writer = os.pipe()  # the body on stdin, never written: the call waits on it
    process = subprocess.Popen(
        [COORD, "post", "interrupted", "--body", "-"], env=quick, stdin=reader,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(reader)
    pipe = os.readlink(f"/proc/self/fd/{writer}")
    serving = None
    deadline = time.monotonic() + 60
    while serving is None and time.monotonic() < deadline:
        # The worker serving it holds the caller's stdin: the event to wait on.
        for pid in workers(server):
            try:
                if os.readlink(f"/proc/{pid}/fd/0") == pipe:
                    serving = pid
            except OSError:
                continue
        time.sleep(0.02)
    assert serving is not None, "no worker took the caller's stdin"
    process.send_signal(signal.SIGINT)  # forwarded by the caller to the worker
    _, stderr = process.communicate(timeout=60)
    os.close(writer)
    assert process.returncode == 1, stderr  # the CLI's status for an interrupt
    while serving in workers(server) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert serving not in workers(server), "the interrupted worker serves on"
    said = call(quick, "ls", "--json")
    assert "interrupted" not in said.stdout


def test_a_closed_stdout_is_answered_as_in_its_own_process(quick: dict[str, str]) -> None:
    """A reader gone before the answer (`coord ls | head -0`): the CLI's own handling of a
    broken pipe, not a worker killed by SIGPIPE (Python ignores it in its own process)."""
    call(quick, "post", "one to list")
    statuses = {}
    for way, env in (("quick", quick), ("own process", {**quick, "COORD_QUICK": "0"})):
        reader, writer = os.pipe()
        os.close(reader)  # nobody will read: the answer's write meets EPIPE
        done = subprocess.run(
            [COORD, "ls"], env=env, stdout=writer, stderr=subprocess.PIPE, text=True,
            timeout=60, check=False,
        )  # fmt: skip
        os.close(writer)
        statuses[way] = (done.returncode, done.stderr)
    assert statuses["quick"] == statuses["own process"]
    assert statuses["quick"][0] == 0, statuses


@pytest.fixture
def unstarted(workdir: Path) -> Iterator[dict[str, str]]:
    """A daemon and no quick server yet: the test's first call starts one, from where it
    stands."""
    (workdir / "home").mkdir()
    daemon = DaemonProcess(workdir, db_path=workdir / "coord.db", socket_path=workdir / "s.sock")
    daemon.start()
    try:
        yield coord_env(
            workdir / "s.sock", COORD_QUICK="1", HOME=str(workdir / "home"), COORD_AGENT="ada"
        )
    finally:
        daemon.stop()


def test_a_server_started_in_a_directory_removed_since_serves_on(
    workdir: Path, unstarted: dict[str, str]
) -> None:
    """A first call from a worktree that is removed later (a finished agent's): the server
    and its workers do not live in the caller's directory."""
    worktree = workdir / "worktree"
    worktree.mkdir()
    first = subprocess.run(
        [COORD, "whoami"], env=unstarted, cwd=worktree, capture_output=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert first.returncode == 0, first
    quick_server_ready(workdir)
    worktree.rmdir()
    required = {**unstarted, "COORD_QUICK": "require"}
    for _ in range(3):  # the worker that served it, and the ones after it
        call(required, "post", "after the worktree went")
    assert len(json.loads(call(required, "ls", "--json").stdout)["tasks"]) == 3


def test_a_projects_module_is_not_run_by_the_server(
    workdir: Path, unstarted: dict[str, str]
) -> None:
    """A first call from a project whose top level has a module named as one the server
    imports (`random.py`): the server imports its own, never the project's."""
    project = workdir / "project"
    project.mkdir()
    ran = workdir / "the project's random.py ran"
    (project / "random.py").write_text(
        f"open({str(ran)!r}, 'w').close()\nraise SystemExit('not the real random')\n"
    )
    first = subprocess.run(
        [COORD, "whoami"], env=unstarted, cwd=project, capture_output=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert first.returncode == 0, first
    deadline = time.monotonic() + 60
    while not ran.exists() and not list(workdir.glob("quick-*.sock")):
        assert time.monotonic() < deadline, "no quick server started, and no module ran"
        time.sleep(0.02)  # the event: the server's socket, or the project's module ran
    assert not ran.exists()
    quick_server_ready(workdir)
    call({**unstarted, "COORD_QUICK": "require"}, "whoami")


def test_a_callers_own_stdio_encoding_is_kept(quick: dict[str, str]) -> None:
    """`PYTHONIOENCODING` set by a caller: a worker's streams were made with the server's
    encoding, so the call runs in its own process and says what it says there."""
    call(quick, "post", "tea \u2615")
    said = {}
    chosen = {**quick, "PYTHONIOENCODING": "ascii:backslashreplace"}
    for way, env in (("quick", chosen), ("own process", {**chosen, "COORD_QUICK": "0"})):
        done = subprocess.run([COORD, "ls"], env=env, capture_output=True, timeout=60, check=False)
        said[way] = (done.returncode, done.stdout, done.stderr)
    assert said["quick"] == said["own process"]
    assert b"tea \\u2615" in said["quick"][1], said


def test_a_stdout_closed_from_the_start_is_answered_as_in_its_own_process(
    quick: dict[str, str],
) -> None:
    """`coord ls >&-`: no stdout at all (Python's `sys.stdout` is None in its own
    process); both ways end alike, without a traceback."""
    call(quick, "post", "one to list")
    outcomes = {}
    for way, env in (("quick", quick), ("own process", {**quick, "COORD_QUICK": "0"})):
        done = subprocess.run(
            ["sh", "-c", f'"{COORD}" ls >&-'], env=env, stderr=subprocess.PIPE, text=True,
            timeout=60, check=False,
        )  # fmt: skip
        outcomes[way] = (done.returncode, done.stderr)
    assert outcomes["own process"] == (0, ""), outcomes
    assert outcomes["quick"] == outcomes["own process"]


def test_a_terminated_call_ends_as_in_its_own_process(workdir: Path, quick: dict[str, str]) -> None:
    """SIGTERM to a `coord` waiting on its stdin: the caller dies by SIGTERM both ways
    (the quick relay forwards it, the worker dies of it, the relay then of it too)."""
    call(quick, "whoami")
    server = server_pid(workdir)
    statuses = {}
    for way, env in (("quick", quick), ("own process", {**quick, "COORD_QUICK": "0"})):
        reader, writer = os.pipe()
        process = subprocess.Popen(
            [COORD, "post", "terminated", "--body", "-"], env=env, stdin=reader,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        os.close(reader)
        pipe = os.readlink(f"/proc/self/fd/{writer}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the one doing the work holds the pipe
            doers = workers(server) if way == "quick" else {process.pid}
            if any(_holds(pid, pipe) for pid in doers):
                break
            time.sleep(0.02)
        process.terminate()
        _, stderr = process.communicate(timeout=60)
        os.close(writer)
        statuses[way] = (process.returncode, stderr)
    assert statuses["own process"][0] == -signal.SIGTERM, statuses
    assert statuses["quick"] == statuses["own process"]


def _holds(pid: int, pipe: str) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/fd/0") == pipe
    except OSError:
        return False
