"""`coord land` run again for a landing whose lander still runs (an agent retrying a call
its host timed out) refuses and leaves the landing alone; the first run lands.

Real `coord land` processes against a real daemon; the first lander's check blocks on
a FIFO, so nothing depends on timing.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_landing import STARTED, make_repo, release_fifo, run_land, start_land, wait_for_fifo

from coordd_client import Client
from support import DaemonProcess


@pytest.fixture(autouse=True)
def _no_lander_left() -> Iterator[None]:
    """A failing test must not leave a lander (or its check) running, blocked on a FIFO."""
    yield
    while STARTED:
        lander = STARTED.pop()
        if lander.poll() is None:
            os.killpg(lander.pid, signal.SIGKILL)
            lander.communicate()


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
