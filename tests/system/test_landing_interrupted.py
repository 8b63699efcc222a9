"""Issue 44 item 2: a `coord land` killed at any point of a 4,000-file landing leaves a
repository the next `coord land` (or `coord land --recover`) makes whole by itself.

Each test lands a branch that changes 4,000 files onto `main`, checked out in the
main worktree, and kills the lander at one deterministic point: git itself stops
there and says so, through a hook or a filter that blocks on a FIFO (no timing):

- `prepared`: the compare-and-swap of `main` is under way, not committed (the
  `reference-transaction` hook's `prepared` phase);
- `committed`: `main` moved, its checkout not yet touched (`committed` phase);
- `file:N`: `git read-tree -u` is writing the checkout, stopped at the N-th
  file of 4,000 (a smudge filter on that one file: git has unlinked it and
  written the N-1 before it);
- `index`: the checkout and its index are written, the journal not yet removed
  (the `post-index-change` hook).

Each is killed one of three ways: `kill -9` of the lander alone (git and the hook
it runs go on, then finish), `kill -9` of its process group (git dies too, leaving
its lock files: `index.lock`, `refs/heads/main.lock`, `HEAD.lock`), and SIGINT to
the group (Ctrl-C). After a kill, either the next `coord land` (of another branch)
must finish the move and land, or `coord land --recover` (after `coord doctor`'s
check names the journal) must finish it. A Ctrl-C kills only the git commands: the
lander defers it from the swap on (`landing/interrupts.py`) and finishes the move
and the landing itself. Either way the repository ends whole: `main` checked out at
its tip, `git status` clean, the index the tip's, no `index.lock`, no journal.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_landing import (  # _no_lander_left: imported, it cleans up here too
    STARTED,
    _no_lander_left,  # noqa: F401
)

from coordd_client import Client
from support import COORD, DaemonProcess, coord, coord_env

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip
FILES = 4000
#: Generous: every wait is on something git or the lander does, never on a clock.
WAIT_S = 120


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
        env={**os.environ, **GIT_ENV}, timeout=WAIT_S,
    )  # fmt: skip
    return done.stdout.strip()


def make_repo(repo: Path) -> None:
    """`main` with 4,000 files, checked out; `big` changing every one of them, and
    `small` adding one file, both on `main` and checked out nowhere. The commits are
    made by `git fast-import`, not in worktrees: a loaded machine writes 4,000 files
    slowly enough, the checkout of `main` and the landings do it."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    stream = [
        _commit("main", None, "start", {f"many/f{i:04}.txt": f"start {i}" for i in range(FILES)})
    ]
    stream.append(
        _commit("big", "main", "big", {f"many/f{i:04}.txt": f"big {i}" for i in range(FILES)})
    )
    stream.append(_commit("small", "main", "small", {"small.txt": "small"}))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input="".join(stream).encode(),
                   check=True, timeout=WAIT_S)  # fmt: skip
    git(repo, "reset", "-q", "--hard", "main")


MARKS = {"main": 1, "big": 2, "small": 3}


def _commit(branch: str, parent: str | None, message: str, files: dict[str, str]) -> str:
    lines = [f"commit refs/heads/{branch}", f"mark :{MARKS[branch]}",
             "committer t <t@example.com> 1700000000 +0000",
             f"data {len(message)}", message]  # fmt: skip
    if parent:
        lines.append(f"from :{MARKS[parent]}")
    for path, text in files.items():
        body = f"{text}\n"
        lines += [f"M 100644 inline {path}", f"data {len(body.encode())}", body]
    return "\n".join(lines) + "\n\n"


class Gate:
    """Points where git blocks once armed: it writes `started`, then waits to read `hold`."""

    def __init__(self, workdir: Path, repo: Path) -> None:
        self.workdir, self.repo = workdir, repo
        self.started, self.hold = workdir / "started", workdir / "hold"
        os.mkfifo(self.started)
        os.mkfifo(self.hold)
        # The gate is Python, not sh: a script's sh defers Ctrl-C until its child exits,
        # and a child forked as the signal arrives can miss it and block for ever.
        script = workdir / "gate.py"
        script.write_text(
            "import os, sys\n"
            "# gate.py POINT [DIR]: the first run after POINT is armed (in DIR) blocks\n"
            "if len(sys.argv) > 2 and os.path.realpath(os.getcwd()) != sys.argv[2]:\n"
            "    sys.exit(0)\n"
            "try:\n"
            f"    os.rmdir({str(workdir)!r} + '/armed-' + sys.argv[1])\n"
            "except OSError:\n"
            "    sys.exit(0)\n"
            f"with open({str(self.started)!r}, 'w') as started:\n"
            "    started.write('go\\n')\n"
            f"with open({str(self.hold)!r}) as hold:\n"
            "    hold.read()\n"
        )
        gate = f"{sys.executable} {script}"
        top = repo.resolve()
        hooks = repo / ".git" / "hooks"
        self._hook(hooks / "reference-transaction",
                   f"grep -q ' refs/heads/main$' && exec {gate} \"$1\"\nexit 0\n")  # fmt: skip
        self._hook(hooks / "post-index-change",
                   f'[ "$1" = 1 ] && exec {gate} index {top}\nexit 0\n')  # fmt: skip
        git(repo, "config", "filter.gate.smudge", f"{gate} file {top}; cat")
        git(repo, "config", "filter.gate.clean", "cat")

    @staticmethod
    def _hook(path: Path, body: str) -> None:
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)

    def arm(self, point: str) -> None:
        """Arm `point`: `prepared`, `committed`, `index` or `file:N`."""
        if point.startswith("file:"):
            gated = f"many/f{int(point[5:]) - 1:04}.txt"
            (self.repo / ".git" / "info" / "attributes").write_text(f"{gated} filter=gate\n")
            point = "file"
        (self.workdir / f"armed-{point}").mkdir()

    def wait(self) -> None:
        fd = os.open(self.started, os.O_RDONLY | os.O_NONBLOCK)
        try:
            ready, _, _ = select.select([fd], [], [], WAIT_S)
            assert ready, "the lander never reached the armed point"
        finally:
            os.close(fd)

    def release(self) -> None:
        with open(self.hold, "w") as fifo:  # blocks until the gate opens it to read
            fifo.write("go\n")


def land(repo: Path, branch: str, *more: str) -> list[str]:
    return [COORD, "land", branch, "--onto", "main", "--agent", f"agent-{branch}",
            "--project", str(repo), *more]  # fmt: skip


def start_lander(daemon: DaemonProcess, repo: Path, *more: str) -> subprocess.Popen[str]:
    """`coord land big` in a process group of its own (so the test can kill the group),
    remembered in STARTED for the end of the module."""
    lander = subprocess.Popen(
        land(repo, "big", *more), cwd=repo,
        env={**coord_env(daemon.socket_path), **GIT_ENV}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    STARTED.append(lander)
    return lander


def wait_until_gone(group: int) -> None:
    """Until every process of the killed lander's group has exited (and so closed what it
    held): a signal is delivered at once, but dying takes a moment on a loaded machine."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process group {group} outlived its kill"
        time.sleep(0.02)  # a poll with a deadline, not a wait for time to pass


def journals(repo: Path) -> list[Path]:
    return list((repo / ".git" / "coord-land-journals").glob("*.json"))


def assert_whole(repo: Path, tip: str) -> None:
    """`main` checked out at `tip`, every file as `tip` has it, nothing left over."""
    assert git(repo, "rev-parse", "main") == tip
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "diff", "--cached", "--quiet", tip) == ""  # the index is the tip's
    assert not (repo / ".git" / "index.lock").exists()
    assert journals(repo) == []
    expected = git(repo, "show", f"{tip}:many/f0000.txt")
    assert (repo / "many" / "f0000.txt").read_text().strip() == expected
    expected = git(repo, "show", f"{tip}:many/f{FILES - 1}.txt")
    assert (repo / "many" / f"f{FILES - 1}.txt").read_text().strip() == expected


@dataclass(frozen=True)
class Case:
    point: str  # where git stops (the module's docstring)
    kill: str  # "pid": kill -9 of the lander; "group": of its group; "int": Ctrl-C
    finish: str  # "land": the next `coord land` finishes it; "recover": `--recover`
    moved: bool  # whether main has moved once the killed landing's git is gone

    def __str__(self) -> str:
        return f"{self.point}-{self.kill}-{self.finish}"


CASES = [
    Case("file:2000", "group", "land", moved=True),
    Case("file:1", "group", "recover", moved=True),
    Case("file:2000", "pid", "recover", moved=True),
    Case("file:4000", "int", "land", moved=True),
    Case("prepared", "group", "recover", moved=False),
    Case("prepared", "pid", "land", moved=True),
    Case("committed", "int", "recover", moved=True),
    Case("index", "group", "land", moved=True),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_lander_killed_anywhere_in_a_big_landing_leaves_what_the_next_makes_whole(
    daemon: DaemonProcess, workdir: Path, case: Case
) -> None:
    repo = workdir / "repo"
    make_repo(repo)
    old, new = git(repo, "rev-parse", "main"), git(repo, "rev-parse", "big")
    gate = Gate(workdir, repo)
    gate.arm(case.point)

    lander = start_lander(daemon, repo)
    gate.wait()
    if case.kill == "pid":  # the lander alone: the git command it ran goes on, and ends
        os.kill(lander.pid, signal.SIGKILL)
        gate.release()
    else:
        os.killpg(lander.pid, signal.SIGKILL if case.kill == "group" else signal.SIGINT)
    out, err = lander.communicate(timeout=WAIT_S)
    if case.kill != "pid":
        wait_until_gone(lander.pid)
    if case.kill == "int":  # git died of it, the lander did not: it finished the landing
        assert lander.returncode == 0, (out, err)
        assert "SIGINT came after main moved: the landing was finished first" in out, out
        assert_whole(repo, new)
        with Client(daemon.socket_path, project=str(repo)) as client:
            (event,) = client.events_since(types=["land.landed"]).events
        assert event.landing is not None and event.landing.commit == new
        return
    assert lander.returncode != 0, (out, err)
    assert journals(repo), "the interrupted lander left no journal"
    _fail_dead_landing(daemon, repo)

    if case.finish == "recover":
        if case.kill != "pid":  # else git may still run: doctor rightly says "moving it now"
            _doctor_names_the_journal(repo)
        done = coord("land", "--recover", socket=daemon.socket_path, cwd=repo)
        assert done.returncode == 0, (done.stdout, done.stderr)
        if case.moved:
            assert "finished the checkout of main" in done.stdout, done.stdout
        assert_whole(repo, new if case.moved else old)
        return  # whole: the next landing lands (the "land" cases show it)
    landed = subprocess.run(
        land(repo, "small", "--wait", str(WAIT_S)), cwd=repo,
        env={**coord_env(daemon.socket_path), **GIT_ENV}, capture_output=True, text=True,
        timeout=2 * WAIT_S, check=False,
    )  # fmt: skip
    assert landed.returncode == 0, (landed.stdout, landed.stderr)
    if case.moved:
        assert "finished the checkout of main" in landed.stdout, landed.stdout
    tip = git(repo, "rev-parse", "main")
    assert git(repo, "rev-parse", f"{tip}~1") == (new if case.moved else old)
    assert_whole(repo, tip)
    assert (repo / "small.txt").read_text() == "small\n"


def _fail_dead_landing(daemon: DaemonProcess, repo: Path) -> None:
    """Free the landing slot the killed lander held, as its lease lapsing would one ttl
    later (test_landing.py waits for that; here the checkout is what is tested)."""
    with Client(daemon.socket_path, agent="agent-big", project=str(repo)) as client:
        for entry in client.landings(project=str(repo), onto="main").landings:
            if entry.branch == "big":
                client.finish_landing(entry.id, "failed", reason="killed by the test")


def _doctor_names_the_journal(repo: Path) -> None:
    """`coord doctor`'s landing check (run here, not as `coord doctor`, whose other
    checks take seconds): one problem with the journal, and the command that fixes it
    (beside it, the dead lander's own finding, `lander-<id>`)."""
    from coordd_apps.doctor.landings import check_landings

    (found,) = [f for f in check_landings(repo) if not f.what.startswith("lander-")]
    assert not found.ok and found.fix == "coord land --recover", found
    assert "main: landing #" in found.detail and "died moving it" in found.detail


@pytest.mark.parametrize("finish", ["recover", "land"])
def test_a_move_finished_for_a_killed_lander_records_its_landing_and_completes_its_task(
    daemon: DaemonProcess, workdir: Path, finish: str
) -> None:
    """A lander with `--task`, killed (its whole group) once `main` moved but before its
    checkout did: whoever finishes the move, `--recover` or the next `coord land`,
    records that landing `landed` with the commit and completes its task, at once,
    rather than leave it to lapse as failed one lease later."""
    repo = workdir / "repo"
    make_repo(repo)
    new = git(repo, "rev-parse", "big")
    with Client(daemon.socket_path, agent="agent-big", project=str(repo)) as owner:
        task = owner.post("land big").task
        owner.claim(task.id)
    gate = Gate(workdir, repo)
    gate.arm("committed")
    lander = start_lander(daemon, repo, "--task", str(task.id))
    gate.wait()
    os.killpg(lander.pid, signal.SIGKILL)
    lander.communicate(timeout=WAIT_S)
    wait_until_gone(lander.pid)
    assert git(repo, "rev-parse", "main") == new and journals(repo)

    if finish == "recover":
        done = coord("land", "--recover", socket=daemon.socket_path, cwd=repo)
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert_whole(repo, new)
    else:
        done = subprocess.run(
            land(repo, "small", "--wait", str(WAIT_S)), cwd=repo,
            env={**coord_env(daemon.socket_path), **GIT_ENV}, capture_output=True, text=True,
            timeout=2 * WAIT_S, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"task #{task.id} completed" in done.stdout, done.stdout
    with Client(daemon.socket_path, project=str(repo)) as client:
        (event,) = client.events_since(types=["land.landed", "land.failed"]).events[:1]
        done_task = client.get(task.id).task
    assert event.type == "land.landed", event
    assert event.landing is not None and event.landing.branch == "big"
    assert event.landing.commit == new
    assert done_task.state == "done" and done_task.result == f"landed big on main: {new}"


def test_ctrl_c_that_stops_the_swap_says_the_target_did_not_move(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Ctrl-C (SIGINT to the lander's group) while git's compare-and-swap of `main` is
    prepared, not committed: git dies of it and `main` stays. The lander says so, and
    not that `main` moved under it."""
    repo = workdir / "repo"
    make_repo(repo)
    old = git(repo, "rev-parse", "main")
    gate = Gate(workdir, repo)
    gate.arm("prepared")
    lander = start_lander(daemon, repo)
    gate.wait()
    os.killpg(lander.pid, signal.SIGINT)
    out, err = lander.communicate(timeout=WAIT_S)
    wait_until_gone(lander.pid)
    assert git(repo, "rev-parse", "main") == old
    assert lander.returncode == 130, (out, err)
    assert "interrupted (SIGINT) before main moved" in err, err
    assert "main was not moved" in err and "moved while" not in err, err
    assert_whole(repo, old)
