"""`coord land` stopped by a signal (Ctrl-C, `kill`, a closed terminal) tells the daemon,
so the target is not blocked for the lease's ttl: the landing it holds, or its entry
waiting in the queue, ends `failed` at once, and the next `coord land` goes.

Real `coord land` processes against a real daemon; every wait is on a FIFO or a
line the lander prints, never on a clock.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from test_landing import (  # _no_lander_left: imported, it cleans up here too
    _no_lander_left,  # noqa: F401
    alive,
    git,
    make_repo,
    needs_proc,
    run_land,
    start_land,
    wait_for_fifo,
)

from coordd_client import Client
from support import DaemonProcess


def failed_reasons(daemon: DaemonProcess, repo: Path) -> dict[str, str]:
    """{branch: reason} of every `land.failed` in the project."""
    with Client(daemon.socket_path, project=str(repo)) as client:
        found = client.events_since(types=["land.failed"]).events
    return {e.landing.branch: e.landing.reason or "" for e in found if e.landing}


@needs_proc
def test_an_interrupted_lander_fails_its_landing_at_once_and_frees_the_target(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """A holds the slot, its check blocked on a FIFO; B waits behind it. SIGTERM to B
    withdraws its entry, Ctrl-C (SIGINT to A's group) stops A's check and fails its
    landing: C, started after, lands within 15 s, far short of the 600 s ttl."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}, "f2": {"b.txt": "two\n"},
                               "f3": {"c.txt": "three\n"}})  # fmt: skip
    started, hold, pid_file = workdir / "started", workdir / "hold", workdir / "pid"
    os.mkfifo(started)
    os.mkfifo(hold)
    before = git(repo, "rev-parse", "main")
    first = start_land(daemon, repo, "agent-a", "f1", "--check",
                       f"echo $$ > {pid_file}; echo go > {started}; cat {hold}")  # fmt: skip
    wait_for_fifo(started, "A's check never started")
    check = int(pid_file.read_text())
    second = start_land(daemon, repo, "agent-b", "f2", "--wait", "120")
    assert second.stdout is not None
    assert second.stdout.readline().startswith("queued #"), "B never joined the queue"

    os.kill(second.pid, signal.SIGTERM)
    b_out, b_err = second.communicate(timeout=60)
    assert second.returncode == 128 + signal.SIGTERM, (b_out, b_err)
    assert "interrupted (SIGTERM) while queued" in b_err and "marked failed" in b_err, b_err
    assert len(b_err.strip().splitlines()) == 1, b_err

    os.killpg(first.pid, signal.SIGINT)  # Ctrl-C: the lander's whole group
    a_out, a_err = first.communicate(timeout=60)
    assert first.returncode == 130, (a_out, a_err)
    assert "interrupted (SIGINT) while landing, before main moved" in a_err, a_err
    assert not alive(check)
    assert git(repo, "rev-parse", "main") == before

    reasons = failed_reasons(daemon, repo)
    assert reasons["f1"].startswith("interrupted (SIGINT)"), reasons
    assert reasons["f2"].startswith("interrupted (SIGTERM)"), reasons
    third = run_land(daemon, repo, "agent-c", "f3", "--wait", "15")
    assert third.returncode == 0, (third.stdout, third.stderr)
    assert git(repo, "rev-list", "--count", f"{before}..main") == "1"
    assert (repo / "c.txt").read_text() == "three\n" and (repo / "a.txt").read_text() == "a.txt\n"


def test_withdrawing_a_queued_entry_leaves_the_slot_to_its_holder(
    daemon: DaemonProcess,
) -> None:
    """An interrupted lander fails its queued entry; when the same agent holds the slot
    for another branch (two landers of one agent), that landing keeps its fence."""
    with Client(daemon.socket_path, agent="a", project="/withdraw") as a:
        first = a.enqueue_landing("f1", "main", ["x.py"]).landing
        fence = a.start_landing(first.id).lease.fence
        second = a.enqueue_landing("f2", "main", ["y.py"]).landing
        withdrawn = a.finish_landing(second.id, "failed", reason="interrupted (SIGTERM)")
        assert withdrawn.landing.state == "failed"
        assert a.start_landing(first.id).lease.fence == fence  # still its slot


@needs_proc
def test_a_lander_killed_here_is_named_by_doctor_and_taken_over_by_the_next_at_once(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """A holds the slot, its check blocked on a FIFO, and is killed (`kill -9`, the lander
    alone: its check dies with it). `coord doctor`'s landing check names the dead lander;
    B, landing after, says whose landing it waits for, sees that lander's pid gone on
    this machine, takes the landing over (marked failed, with why) and lands, long
    before A's 600 s lease would lapse (`--wait 120` only catches a hang)."""
    from coordd_apps.doctor.landings import check_landings

    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}, "f2": {"b.txt": "two\n"}})
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    first = start_land(daemon, repo, "agent-a", "f1", "--check",
                       f"echo go > {started}; cat {hold}")  # fmt: skip
    wait_for_fifo(started, "A's check never started")
    os.kill(first.pid, signal.SIGKILL)
    first.communicate(timeout=60)

    dead = [f for f in check_landings(repo) if f.what.startswith("lander-")]
    assert len(dead) == 1 and not dead[0].ok, dead
    assert f"pid {first.pid} on this machine" in dead[0].detail, dead[0].detail

    second = run_land(daemon, repo, "agent-b", "f2", "--wait", "120")
    assert second.returncode == 0, (second.stdout, second.stderr)
    assert (
        f"behind #1 (branch f1, lander agent-a, pid {first.pid}, landing since" in second.stdout
    ), second.stdout
    assert "its lease runs until" in second.stdout, second.stdout
    assert f"#1's lander (pid {first.pid}) is gone: taking its landing over" in second.stdout
    reasons = failed_reasons(daemon, repo)
    assert reasons["f1"].startswith("taken over by agent-b: its lander, pid "), reasons
    assert (repo / "b.txt").read_text() == "two\n"
    assert [f for f in check_landings(repo) if f.what.startswith("lander-")] == []
