"""`coord land` run again for a landing whose lander still runs (an agent retrying a call
its host timed out) refuses and leaves the landing alone; the first run lands.

Real `coord land` processes against a real daemon; the first lander's check blocks on
a FIFO, so nothing depends on timing.
"""

from __future__ import annotations

import os
from pathlib import Path

from test_landing import (  # _no_lander_left: imported, it cleans up here too
    _no_lander_left,  # noqa: F401
    make_repo,
    release_fifo,
    run_land,
    start_land,
    wait_for_fifo,
)

from coordd_client import Client
from support import DaemonProcess


def test_a_second_run_of_a_running_landing_is_refused_and_the_first_lands(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}})
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    first = start_land(daemon, repo, "dup", "f1", "--check", f"echo go > {started}; cat {hold}")
    wait_for_fifo(started, "the first run's check never started")

    again = run_land(daemon, repo, "dup", "f1", "--check", "true")
    assert again.returncode == 3, (again.stdout, again.stderr)
    assert f"is already being landed by pid {first.pid}" in again.stderr, again.stderr
    assert "coord land --queue" in again.stderr, again.stderr
    with Client(daemon.socket_path, project=str(repo)) as client:
        (entry,) = client.landings(onto="main").landings
    assert entry.state == "landing" and entry.reason is None

    release_fifo(hold)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, (out, err)
    assert f"landed #{entry.id}" in out
    assert (repo / "a.txt").read_text() == "one\n"


def test_a_second_run_of_a_queued_landing_is_refused_and_the_first_lands(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """The same while the first run still waits its turn (no worktree yet): the second
    run finds the first holding the landing, refuses, and the first lands in turn."""
    repo = make_repo(workdir, {"f0": {"b.txt": "zero\n"}, "f1": {"a.txt": "one\n"}})
    fifos = [workdir / name for name in ("a-started", "a-hold", "d-started", "d-hold")]
    for fifo in fifos:
        os.mkfifo(fifo)
    a_started, a_hold, d_started, d_hold = fifos
    ahead = start_land(daemon, repo, "agent-a", "f0", "--check",
                       f"echo go > {a_started}; cat {a_hold}")  # fmt: skip
    wait_for_fifo(a_started, "the first landing's check never started")
    first = start_land(daemon, repo, "dup", "f1", "--wait", "120", "--check",
                       f"echo go > {d_started}; cat {d_hold}")  # fmt: skip
    assert first.stdout is not None
    assert first.stdout.readline().startswith("queued #"), "the first run never queued"

    again = run_land(daemon, repo, "dup", "f1", "--wait", "120", "--check", "true")
    assert again.returncode == 3, (again.stdout, again.stderr)
    assert f"is already being landed by pid {first.pid}" in again.stderr, again.stderr
    with Client(daemon.socket_path, project=str(repo)) as client:
        queue = client.landings(onto="main").landings
    assert [(x.branch, x.state) for x in queue] == [("f0", "landing"), ("f1", "queued")]

    release_fifo(a_hold)
    assert ahead.communicate(timeout=120) and ahead.returncode == 0
    wait_for_fifo(d_started, "the first run's check never started")
    release_fifo(d_hold)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, (out, err)
    assert (repo / "a.txt").read_text() == "one\n" and (repo / "b.txt").read_text() == "zero\n"
