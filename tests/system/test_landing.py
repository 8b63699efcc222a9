"""docs/PROTOCOL-1.2.md section 14 with real git repositories, worktrees and `coord land`.

Each test builds a repository whose `main` is checked out in the main worktree,
with one worktree per agent on its own branch, and lands through real `coord`
processes against a real daemon.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordd_client import Client
from coordd_wire.errors import Conflict, InvalidParams, LeaseLost, NotFound
from support import COORD, DaemonProcess, coord, coord_env

pytestmark = pytest.mark.both_backends
#: The tests that watch processes read /proc (Linux).
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
        env={**os.environ, **GIT_ENV}, timeout=60,
    )  # fmt: skip
    return done.stdout.strip()


def make_repo(root: Path, branches: dict[str, dict[str, str]]) -> Path:
    """`root/repo` on main (files a.txt, b.txt, c.txt), and a worktree `root/<branch>` per
    branch, each committing its {path: text}."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text(f"{name}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    for branch, files in branches.items():
        place = root / branch
        git(repo, "worktree", "add", "-q", "-b", branch, str(place))
        for path, text in files.items():
            (place / path).write_text(text)
        git(place, "add", ".")
        git(place, "commit", "-q", "-m", f"{branch}: {', '.join(files)}")
    return repo


def land_args(repo: Path, agent: str, branch: str, *more: str) -> list[str]:
    return ["land", branch, "--onto", "main", "--agent", agent, "--project", str(repo), *more]


def run_land(
    daemon: DaemonProcess, repo: Path, agent: str, branch: str, *more: str
) -> subprocess.CompletedProcess[str]:
    return coord(
        *land_args(repo, agent, branch, *more), socket=daemon.socket_path,
        cwd=repo.parent / branch, env=GIT_ENV,
    )  # fmt: skip


#: `coord land` processes a test started; each test's end kills what is left of them.
STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_lander_left() -> Iterator[None]:
    """A failing test must not leave a lander (or its check) running, blocked on a FIFO."""
    yield
    while STARTED:
        lander = STARTED.pop()
        if lander.poll() is None:
            os.killpg(lander.pid, signal.SIGKILL)
            lander.communicate()


def start_land(
    daemon: DaemonProcess, repo: Path, agent: str, branch: str, *more: str
) -> subprocess.Popen[str]:
    lander = subprocess.Popen(
        [COORD, *land_args(repo, agent, branch, *more)], cwd=repo.parent / branch,
        env={**coord_env(daemon.socket_path), **GIT_ENV}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    STARTED.append(lander)
    return lander


def land_events(daemon: DaemonProcess, repo: Path) -> list[tuple[str, str]]:
    """(type, branch) of every landing event in the project, in seq order."""
    types = ["land.queued", "land.blocked", "land.started", "land.landed", "land.failed"]
    with Client(daemon.socket_path, project=str(repo)) as client:
        found = client.events_since(types=types).events
    return [(e.type, e.landing.branch if e.landing else "") for e in found]


def assert_clean_and_current(repo: Path) -> None:
    """The main worktree has main checked out, nothing changed, nothing left behind."""
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main"
    assert git(repo, "status", "--porcelain") == ""
    assert "coord-land" not in git(repo, "worktree", "list")
    left = repo / ".git" / "coord-land"  # where landings keep their throwaway worktrees
    assert not left.exists() or not list(left.iterdir())


def test_three_agents_land_at_once_in_queue_order_on_a_linear_history(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}, "f2": {"b.txt": "two\n"},
                               "f3": {"c.txt": "three\n"}})  # fmt: skip
    log = workdir / "checks.log"
    git(repo, "config", "coord.landCheck", f"git rev-parse HEAD >> {log}")
    landers = [
        start_land(daemon, repo, f"agent-{b}", b, "--wait", "120") for b in ("f1", "f2", "f3")
    ]
    for lander in landers:
        out, err = lander.communicate(timeout=180)
        assert lander.returncode == 0, (out, err)
    events = land_events(daemon, repo)
    queued = [branch for kind, branch in events if kind == "land.queued"]
    landed = [branch for kind, branch in events if kind == "land.landed"]
    assert sorted(queued) == ["f1", "f2", "f3"] and landed == queued
    # Linear: no merge commit, one parent each; and each check ran on what landed.
    assert git(repo, "rev-list", "--merges", "main") == ""
    history = git(repo, "rev-list", "--reverse", "main").splitlines()
    assert len(history) == 4
    assert log.read_text().split() == history[1:]
    started = [i for i, (kind, _) in enumerate(events) if kind == "land.started"]
    ended = [i for i, (kind, _) in enumerate(events) if kind == "land.landed"]
    assert all(s < e for s, e in zip(started, ended, strict=True))
    assert all(e < s for e, s in zip(ended, started[1:], strict=False))  # one at a time
    assert_clean_and_current(repo)
    assert [(repo / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == [
        "one\n", "two\n", "three\n",
    ]  # fmt: skip
    # Each branch now points at what landed, so git sees it merged.
    merged = git(repo, "branch", "--merged", "main").replace("*", "").replace("+", "")
    assert set(merged.split()) >= {"f1", "f2", "f3"}


def test_a_reserved_path_is_reported_before_anything_is_merged(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {"f1": {"a.txt": "mine\n", "b.txt": "also\n"}})
    before = git(repo, "rev-parse", "main")
    held = coord("reserve", "a.txt", "--agent", "holder", "--project", str(repo),
                 socket=daemon.socket_path)  # fmt: skip
    assert held.returncode == 0, held.stderr
    done = run_land(daemon, repo, "lander", "f1")
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "reserved: a.txt is held exclusively by holder" in done.stdout
    assert "nothing was merged" in done.stderr
    assert git(repo, "rev-parse", "main") == before
    assert git(workdir / "f1", "log", "-1", "--format=%s") == "f1: a.txt, b.txt"
    assert land_events(daemon, repo) == [
        ("land.queued", "f1"), ("land.blocked", "f1"), ("land.failed", "f1"),
    ]  # fmt: skip
    assert_clean_and_current(repo)


def test_a_failing_check_leaves_the_target_untouched_and_the_queue_moving(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {"bad": {"BROKEN": "x\n"}, "good": {"b.txt": "fine\n"}})
    git(repo, "config", "coord.landCheck", "test ! -e BROKEN")
    before = git(repo, "rev-parse", "main")
    bad_before = git(repo, "rev-parse", "bad")
    failed = run_land(daemon, repo, "a", "bad")
    assert failed.returncode == 3 and "check failed (exit 1)" in failed.stderr
    assert git(repo, "rev-parse", "main") == before
    assert git(repo, "rev-parse", "bad") == bad_before  # the branch as it was
    assert_clean_and_current(repo)
    with Client(daemon.socket_path, project=str(repo)) as client:
        assert client.landings().landings == []  # ejected, not retried
    with Client(daemon.socket_path, agent="b", project=str(repo)) as b:
        task = b.post("land the good branch").task
        b.claim(task.id)
    landed = run_land(daemon, repo, "b", "good", "--task", str(task.id))
    assert landed.returncode == 0, landed.stderr
    with Client(daemon.socket_path) as client:
        done = client.get(task.id).task
    assert done.state == "done" and done.result is not None and "landed good on main" in done.result
    assert (repo / "b.txt").read_text() == "fine\n" and not (repo / "BROKEN").exists()
    assert [k for k, _ in land_events(daemon, repo) if k in ("land.failed", "land.landed")] == [
        "land.failed", "land.landed",
    ]  # fmt: skip


def test_a_dirty_target_or_nothing_to_land_is_refused_before_the_check_runs(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """A check can take minutes (`make test`): what would refuse the landing after it
    (a target checkout with uncommitted changes, a branch already in the target) is
    found first, and the check never runs."""
    repo = make_repo(workdir, {"feat": {"d.txt": "new\n"}})
    ran = workdir / "check-ran"
    git(repo, "config", "coord.landCheck", f"touch {ran}")
    (repo / "a.txt").write_text("edited, not committed\n")
    dirty = run_land(daemon, repo, "a", "feat")
    assert dirty.returncode == 3 and "with uncommitted changes" in dirty.stderr, dirty.stderr
    assert not ran.exists()
    git(repo, "checkout", "-q", "--", "a.txt")
    assert run_land(daemon, repo, "a", "feat").returncode == 0 and ran.exists()
    ran.unlink()
    again = run_land(daemon, repo, "a", "feat")
    assert again.returncode != 0 and "nothing to land: feat is already in main" in again.stderr
    assert not ran.exists()
    assert_clean_and_current(repo)


def test_a_lander_killed_mid_landing_lapses_and_the_next_lands(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {"f1": {"BLOCK": "x\n", "a.txt": "one\n"},
                               "f2": {"b.txt": "two\n"}})  # fmt: skip
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    git(repo, "config", "coord.landCheck",
        f"if [ -e BLOCK ]; then echo go > {started}; cat {hold}; fi")  # fmt: skip
    before = git(repo, "rev-parse", "main")
    first = start_land(daemon, repo, "doomed", "f1", "--ttl", "1")
    fd = os.open(started, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], 120)  # its check is running now
        assert ready, "the first lander's check never started"
    finally:
        os.close(fd)
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate(timeout=60)  # reaps it and closes its pipes
    second = run_land(daemon, repo, "next", "f2", "--wait", "120")
    assert second.returncode == 0, second.stderr
    assert "left by a lander that did not finish" in second.stdout
    # Consistent: main moved once, to f2's change only; nothing of f1 is on it.
    assert git(repo, "rev-list", "--count", f"{before}..main") == "1"
    assert not (repo / "BLOCK").exists() and (repo / "b.txt").read_text() == "two\n"
    assert_clean_and_current(repo)
    events = land_events(daemon, repo)
    assert events[:2] == [("land.queued", "f1"), ("land.started", "f1")]
    # f1 lapsed (the reaper, or f2's start, said so) before f2 started; f2 landed last.
    lapsed, began = events.index(("land.failed", "f1")), events.index(("land.started", "f2"))
    assert lapsed < began and events[-1] == ("land.landed", "f2") and len(events) == 6
    git(repo, "fsck", "--no-progress")


def test_the_queue_over_the_wire_orders_reports_and_refuses_clearly(
    daemon: DaemonProcess,
) -> None:
    project = "/queue"
    with (
        Client(daemon.socket_path, agent="a", project=project) as a,
        Client(daemon.socket_path, agent="b", project=project) as b,
    ):
        a.reserve(["src/held.py"])
        first = a.enqueue_landing("f1", "main", ["src/x.py", "docs/y.md"])
        assert (first.ahead, first.reserved, first.overlaps) == ([], [], [])
        second = b.enqueue_landing("f2", "main", ["src/x.py", "src/held.py"])
        assert [x.id for x in second.ahead] == [first.landing.id]
        assert [(o.landing, o.paths) for o in second.overlaps] == [(first.landing.id, ["src/x.py"])]
        assert [r.path for r in second.reserved] == ["src/held.py"]
        with pytest.raises(Conflict) as behind:
            b.start_landing(second.landing.id)
        assert "queued behind" in behind.value.message
        with pytest.raises(LeaseLost):
            b.start_landing(first.landing.id)  # not b's
        with pytest.raises(NotFound):
            b.start_landing(999_999)
        with pytest.raises(Conflict):
            a.finish_landing(first.landing.id, "landed")  # not started
        started = a.start_landing(first.landing.id)
        assert started.lease.name == "land:main" and started.landing.lease_id == started.lease.id
        assert a.start_landing(first.landing.id).lease.fence == started.lease.fence  # again
        done = a.finish_landing(first.landing.id, "landed", commit="a" * 40)
        assert a.finish_landing(first.landing.id, "landed").landing == done.landing  # a retry
        assert b.start_landing(second.landing.id, wait_s=30).landing.state == "landing"
        with pytest.raises(InvalidParams):
            b.enqueue_landing("has space", "main", [])
        with pytest.raises(InvalidParams):
            b.enqueue_landing("f3", "main", ["../outside"])
        with pytest.raises(InvalidParams):
            b.finish_landing(second.landing.id, "landed", commit="not-a-sha")


def test_a_landing_whose_slot_lease_ended_is_fenced_out_not_granted_a_new_fence(
    daemon: DaemonProcess,
) -> None:
    """`land.start` of an entry already `landing` is how a lander asks, just before it
    moves the target, whether its fence is still current: once the slot lease it holds
    has ended (released by hand, or by a session's end), the answer is -32003, not a
    fresh lease with another fence, and nothing is granted."""
    with Client(daemon.socket_path, agent="a", project="/fence") as a:
        entry = a.enqueue_landing("f1", "main", ["x.py"]).landing
        fence = a.start_landing(entry.id).lease.fence
        assert a.start_landing(entry.id).lease.fence == fence  # still current: renewed
        assert a.release_slots(["land:main"]).released == 1
        with pytest.raises(LeaseLost) as lost:
            a.start_landing(entry.id)
        assert "fenced out" in lost.value.message
        assert a.slots(name="land:main").leases == []  # the refused call took nothing


def wait_for_fifo(path: Path, what: str, timeout_s: float = 120) -> None:
    """Block until a check writes a line to the FIFO at `path` (it runs then)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        assert ready, what
    finally:
        os.close(fd)


def release_fifo(path: Path) -> None:
    with open(path, "w") as fifo:  # blocks until the check opens it to read
        fifo.write("go\n")


def test_a_lander_stopped_past_its_ttl_is_fenced_out_and_never_moves_the_target(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Issue 44 item 1: lander A is stopped (SIGSTOP: a laptop asleep) during its check
    until its lease lapses; B lands meanwhile. Resumed while B's check runs, A must not
    move main (it was fenced out), and B then lands: main has B's change only."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}, "f2": {"b.txt": "two\n"}})
    a_started, b_started, b_hold = workdir / "a-started", workdir / "b-started", workdir / "b-hold"
    for fifo in (a_started, b_started, b_hold):
        os.mkfifo(fifo)
    before = git(repo, "rev-parse", "main")
    first = start_land(daemon, repo, "agent-a", "f1", "--ttl", "3",
                       "--check", f"echo go > {a_started}; sleep 4")  # fmt: skip
    wait_for_fifo(a_started, "A's check never started")
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        second = start_land(daemon, repo, "agent-b", "f2", "--wait", "120",
                            "--check", f"echo go > {b_started}; cat {b_hold}")  # fmt: skip
        wait_for_fifo(b_started, "B never started its check")  # A lapsed: B holds the slot
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    a_out, a_err = first.communicate(timeout=120)
    assert first.returncode == 3, (a_out, a_err)
    assert "fenced out" in a_err and "main was not moved" in a_err, a_err
    assert git(repo, "rev-parse", "main") == before
    release_fifo(b_hold)
    b_out, b_err = second.communicate(timeout=120)
    assert second.returncode == 0, (b_out, b_err)
    assert "kept 1: its lander still runs" in b_out  # B's sweep left A's worktree to A
    assert git(repo, "rev-list", "--count", f"{before}..main") == "1"
    assert (repo / "b.txt").read_text() == "two\n" and (repo / "a.txt").read_text() == "a.txt\n"
    assert_clean_and_current(repo)
    events = land_events(daemon, repo)
    assert ("land.failed", "f1") in events and events[-1] == ("land.landed", "f2")
    assert ("land.landed", "f1") not in events


@needs_proc
def test_a_lander_fenced_out_during_its_check_stops_it_and_says_why(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """The landing's slot lease ends while its check runs (here released by hand, as a
    session's end hook would): the next heartbeat hears it, the check is killed, and the
    lander says why without moving main."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}})
    started, pid_file = workdir / "started", workdir / "pid"
    os.mkfifo(started)
    before = git(repo, "rev-parse", "main")
    lander = start_land(daemon, repo, "agent-a", "f1", "--ttl", "3", "--check",
                        f"echo $$ > {pid_file}; echo go > {started}; sleep 600")  # fmt: skip
    wait_for_fifo(started, "the check never started")
    shell = int(pid_file.read_text())
    with Client(daemon.socket_path, agent="agent-a", project=str(repo)) as a:
        assert a.release_slots(["land:main"]).released == 1
    try:
        out, err = lander.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(lander.pid, signal.SIGKILL)
        os.kill(shell, signal.SIGKILL)
        lander.communicate()
        raise AssertionError("the fenced-out lander's check kept running") from None
    assert lander.returncode == 3, (out, err)
    assert "check stopped: landing fenced out" in err and "main was not moved" in err, err
    assert not alive(shell)
    assert git(repo, "rev-parse", "main") == before
    assert_clean_and_current(repo)


@needs_proc
def test_a_stale_lander_cannot_overwrite_a_target_that_moved_after_its_check(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """The move is a compare-and-swap from the commit the check ran on. Here main moves
    (as a rival lander's landing would) between the daemon's fence check and the swap:
    the test takes main's ref lock while the check runs, so the lander's swap waits for
    it, and once the lander is waiting, commits another value through that lock, as git
    itself does. The swap must be refused: what the daemon said no longer matters."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}, "rival": {"c.txt": "rival\n"}})
    git(repo, "config", "core.filesRefLockTimeout", "120000")  # the swap waits for the lock
    rival = git(repo, "rev-parse", "rival")
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lander = start_land(daemon, repo, "agent-a", "f1",
                        "--check", f"echo go > {started}; cat {hold}")  # fmt: skip
    wait_for_fifo(started, "the check never started")
    lock.write_text(rival + "\n")  # main is locked, the rival's commit ready in the lock
    release_fifo(hold)
    mover = wait_for_child(lander.pid, "refs/heads/main")  # the lander's swap, waiting
    lock.rename(lock.with_name("main"))  # main moves to the rival's commit
    out, err = lander.communicate(timeout=120)
    assert lander.returncode == 3, (out, err, mover)
    assert "main moved while" in err and "compare-and-swap" in err, err
    assert git(repo, "rev-parse", "main") == rival
    assert land_events(daemon, repo)[-1] == ("land.failed", "f1")


def wait_for_child(parent: int, marker: str, timeout_s: float = 120) -> str:
    """The command line of a child of `parent` naming `marker`, once one runs."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                line = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, ValueError, IndexError):
                continue
            if ppid == parent and marker in line:
                return line
        time.sleep(0.02)
    raise AssertionError(f"no child of {parent} ran with {marker!r}")


def test_a_daemon_restart_during_the_check_loses_nothing(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Issue 44 item 5: the daemon is killed and restarted while a landing's check runs.
    Every call of the lander reconnects and retries: the landing ends `landed`, main has
    the commit, and the task is completed."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}})
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    with Client(daemon.socket_path, agent="agent-a", project=str(repo)) as a:
        task = a.post("land f1").task
        a.claim(task.id)
    lander = start_land(daemon, repo, "agent-a", "f1", "--task", str(task.id),
                        "--check", f"echo go > {started}; cat {hold}")  # fmt: skip
    wait_for_fifo(started, "the check never started")
    daemon.kill()  # no goodbye: the lander's connections break mid-landing
    daemon.start()
    release_fifo(hold)
    out, err = lander.communicate(timeout=180)
    assert lander.returncode == 0, (out, err)
    assert (repo / "a.txt").read_text() == "one\n"
    assert_clean_and_current(repo)
    with Client(daemon.socket_path) as client:
        assert client.get(task.id).task.state == "done"
    events = land_events(daemon, repo)
    assert events[-1] == ("land.landed", "f1")
    with Client(daemon.socket_path, project=str(repo)) as client:
        landed = client.events_since(types=["land.landed"]).events[-1].landing
    assert landed is not None and landed.commit == git(repo, "rev-parse", "main")


def test_a_daemon_restart_between_the_move_and_the_finish_records_the_landing(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """The daemon is killed after main moved and before `land.finish` (a
    reference-transaction hook holds the lander right after the swap committed): the
    retried finish records `landed`, as the repository has it, and completes the task."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}})
    moved, hold = workdir / "moved", workdir / "hold"
    os.mkfifo(moved)
    os.mkfifo(hold)
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(
        "#!/bin/sh\n"
        '[ "$1" = committed ] || exit 0\n'
        f"if grep -q ' refs/heads/main$'; then echo go > {moved}; cat {hold} >/dev/null; fi\n"
    )
    hook.chmod(0o755)
    with Client(daemon.socket_path, agent="agent-a", project=str(repo)) as a:
        task = a.post("land f1").task
        a.claim(task.id)
    lander = start_land(daemon, repo, "agent-a", "f1", "--task", str(task.id), "--check", "true")
    wait_for_fifo(moved, "main never moved")
    daemon.kill()
    daemon.start()
    hook.unlink()
    release_fifo(hold)
    out, err = lander.communicate(timeout=180)
    assert lander.returncode == 0, (out, err)
    assert (repo / "a.txt").read_text() == "one\n"
    assert_clean_and_current(repo)
    with Client(daemon.socket_path, project=str(repo)) as client:
        assert client.get(task.id).task.state == "done"
        landed = client.events_since(types=["land.landed"]).events
    assert len(landed) == 1 and landed[0].landing is not None
    assert landed[0].landing.commit == git(repo, "rev-parse", "main")


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@needs_proc
def test_a_killed_landers_check_dies_with_it(daemon: DaemonProcess, workdir: Path) -> None:
    """Killing the lander process alone (`kill -9` of its pid) ends its whole check,
    background children too: nothing keeps running in a worktree the next lander removes."""
    repo = make_repo(workdir, {"f1": {"a.txt": "one\n"}})
    started, pid_file = workdir / "started", workdir / "pid"
    os.mkfifo(started)
    check = f"sleep 600 & echo $$ $! > {pid_file}; echo go > {started}; wait"
    lander = start_land(daemon, repo, "agent-a", "f1", "--ttl", "2", "--check", check)
    wait_for_fifo(started, "the check never started")
    shell, child = (int(x) for x in pid_file.read_text().split())
    assert alive(shell) and alive(child)
    os.kill(lander.pid, signal.SIGKILL)  # the lander alone, not its process group
    lander.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while (alive(shell) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not alive(shell) and not alive(child), "the killed lander's check kept running"
    finally:
        for pid in (shell, child):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    landed = run_land(daemon, repo, "agent-b", "f1", "--wait", "120")
    assert landed.returncode == 0, landed.stderr
    assert_clean_and_current(repo)


def test_a_branch_changing_more_paths_than_one_enqueue_carries_lands(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = make_repo(workdir, {})
    place = workdir / "big"
    git(repo, "worktree", "add", "-q", "-b", "big", str(place))
    (place / "many").mkdir()
    for i in range(4200):
        (place / "many" / f"f{i:04}.txt").write_text(f"{i}\n")
    git(place, "add", ".")
    git(place, "commit", "-q", "-m", "big: 4200 files")
    held = coord("reserve", "many/f4199.txt", "--agent", "holder", "--project", str(repo),
                 socket=daemon.socket_path)  # fmt: skip
    assert held.returncode == 0, held.stderr
    blocked = run_land(daemon, repo, "lander", "big")
    assert blocked.returncode == 3, (blocked.stdout, blocked.stderr)
    assert "(4200 paths changed)" in blocked.stdout
    assert "reserved: many/f4199.txt is held exclusively by holder" in blocked.stdout
    landed = run_land(daemon, repo, "lander", "big", "--ignore-reservations")
    assert landed.returncode == 0, (landed.stdout, landed.stderr)
    assert (repo / "many" / "f4199.txt").read_text() == "4199\n"
    assert_clean_and_current(repo)
