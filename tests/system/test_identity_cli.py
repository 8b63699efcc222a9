"""Issue 14 over a real daemon: an identity that never drifts, one board per repository,
and the commands an agent trips over (whoami, prime, hold, wait ID, show --history)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import COORD, DaemonProcess, RawConnection, coord, coord_env, git_repo


def doc(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON document: {result.stdout!r} {result.stderr!r}"
    parsed: dict[str, Any] = json.loads(lines[0])
    return parsed


def shell(script: str, socket: Path, cwd: Path | None = None, **env: str) -> str:
    """Run `script` in bash the way an agent's harness would; return its stdout."""
    environ = coord_env(socket, autostart=False, COORD=COORD, **env)
    result = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=environ,
        check=False,
    )
    assert result.returncode == 0, result
    return result.stdout.strip()


#: Prints `export COORD_AGENT=<name>`: the agent name, with no quoting to get wrong.
WHOAMI = '"$COORD" whoami --export'


@pytest.fixture
def repo(workdir: Path) -> Path:
    return git_repo(workdir / "repo")


# --- identity ------------------------------------------------------------------------


def test_one_terminal_session_is_one_agent_whatever_the_shape(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Before: `$(...)`, `make` and `subprocess` each became another agent."""
    s = daemon.socket_path
    plain = shell(WHOAMI, s)
    assert plain.startswith("export COORD_AGENT=")
    (workdir / "Makefile").write_text(f"who:\n\t@{COORD} whoami --export\n")
    (workdir / "child.py").write_text(
        f"import subprocess\nsubprocess.run([{COORD!r}, 'whoami', '--export'], check=True)\n"
    )
    shapes = {
        "subshell": f"echo $({WHOAMI})",
        "pipeline": f"{WHOAMI} | cat",
        "bash -c": f"bash -c '{WHOAMI}'",
        "make": f"make -s -C {workdir} who",
        "python subprocess": f"{sys.executable} {workdir / 'child.py'}",
    }
    for shape, script in shapes.items():
        assert shell(script, s) == plain, shape
    # A new terminal is a new session: another agent.
    assert shell(f"setsid --wait bash -c '{WHOAMI}'", s) != plain


def test_the_claim_of_a_subshell_is_finished_by_its_parent(daemon: DaemonProcess) -> None:
    """The issue's own reproduction: `ID=$(coord next ...); coord done $ID` exits 0."""
    s = daemon.socket_path
    coord("post", "fix it", socket=s)
    out = shell('ID=$("$COORD" next | cut -d" " -f2); "$COORD" done "$ID" && echo finished', s)
    assert out.endswith("finished")


def test_host_variables_name_the_agent(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    session = "3cda0b49-4380-4c2e-9f5e-0a1b2c3d4e5f"
    pin = "export COORD_AGENT="
    assert shell(WHOAMI, s, CLAUDE_CODE_SESSION_ID=session) == pin + "claude-3cda0b494380"
    assert shell(WHOAMI, s, CODEX_THREAD_ID="019d1afb-b2c7-72d3") == pin + "codex-019d1afbb2c7"
    assert shell(WHOAMI, s, CODEX_THREAD_ID="x", COORD_AGENT="pinned") == pin + "pinned"
    report = json.loads(shell('"$COORD" whoami --json', s, CLAUDE_CODE_SESSION_ID=session))
    assert report["agent_source"] == "$CLAUDE_CODE_SESSION_ID"
    exported = shell('"$COORD" whoami --export', s, CLAUDE_CODE_SESSION_ID=session)
    assert exported == "export COORD_AGENT=claude-3cda0b494380"


def test_refusals_that_involve_identity_say_what_to_do(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "one", socket=s)
    coord("claim", "1", "--agent", "tab-a", socket=s)
    theirs = coord("done", "1", "--agent", "tab-b", socket=s)
    assert theirs.returncode == 3
    assert (
        "task 1 is held by tab-a, not by you (tab-b): if tab-a is you, pin your name with"
        " `export COORD_AGENT=tab-a`; otherwise pick other work" in theirs.stderr
    )
    coord("post", "two", socket=s)
    nobody = coord("done", "#2", "--agent", "tab-b", socket=s)
    assert nobody.returncode == 3 and "task 2 is pending: nobody holds it; claim it first" in (
        nobody.stderr
    )


# --- one board per repository ------------------------------------------------------------


def test_every_worktree_of_a_repository_shares_one_board(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    s = daemon.socket_path
    linked = workdir / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    coord("post", "from the main worktree", socket=s, cwd=repo)
    listed = doc(coord("ls", "--json", socket=s, cwd=linked))["tasks"]
    assert [t["title"] for t in listed] == ["from the main worktree"]
    assert listed[0]["project"] == str(repo.resolve())
    empty = coord("ls", socket=s, cwd=workdir)
    # Outside any repository, the directory is its own board.
    assert f"no open tasks in project {workdir.resolve()}" in empty.stdout
    every = coord("ls", "--all-projects", socket=s, cwd=workdir).stdout
    assert "PROJECT" in every and str(repo.resolve()) in every


def test_the_python_client_applies_its_defaults(daemon: DaemonProcess) -> None:
    from coordd_client import Client

    with Client(daemon.socket_path, agent="py-agent", project="/board") as client:
        task = client.post("defaults").task
        assert (task.created_by, task.project) == ("py-agent", "/board")
        assert client.claim(task.id).won
        assert client.complete(task.id).task.state == "done"
        assert [t.id for t in client.list_tasks().tasks] == [task.id]


# --- what an agent trips over ------------------------------------------------------------


def test_prime_is_bounded_on_a_large_board(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    conn = RawConnection(s, timeout_s=120)
    for start in range(0, 10_000, 256):
        conn.send(
            [
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "task.post",
                    "params": {"title": f"task {n} " + "x" * 200, "priority": n % 7},
                }
                for n in range(start, min(10_000, start + 256))
            ]
        )
        conn.recv()
    conn.close()
    coord("claim", "5", "--agent", "me", "--project", "default", socket=s)
    coord("claim", "6", "--agent", "other", "--project", "default", socket=s)
    coord("reserve", "src/**", "--agent", "other", "--project", "default", socket=s)
    coord("reserve", "docs/a.md", "--agent", "third", "--project", "default", socket=s)
    text = coord("prime", "--agent", "me", "--project", "default", socket=s).stdout
    assert len(text.splitlines()) < 40 and len(text) < 4000, text
    assert "Your claims (1):" in text and "#5 " in text
    assert "Ready to claim (9998, most urgent first):" in text
    assert "other: holds #6; 1 reservation" in text
    assert "third: holds 1 reservation" in text  # not "nothing": its reservation counts
    assert all(len(line) < 140 for line in text.splitlines())


def test_hold_keeps_a_short_lease_alive_and_reports_a_lost_one(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "long job", socket=s)
    # A long first lease, so a slow start of `hold` on a busy machine cannot lose it;
    # hold's first renewal shortens it to 5 s, which it must then keep alive for 15 s
    # (a renewal every 5/3 s: two may come late before the lease can lapse).
    coord("claim", "1", "--agent", "worker", "--lease", "120", socket=s)
    held = coord("hold", "1", "--agent", "worker", "--lease", "5", "--", "sleep", "15", socket=s)
    assert held.returncode == 0, held
    task = doc(coord("show", "1", "--json", socket=s))["task"]
    assert task["state"] == "claimed" and task["claimed_by"] == "worker"  # 15 s on a 5 s lease
    status = coord("hold", "1", "--agent", "worker", "--", "sh", "-c", "exit 7", socket=s)
    assert status.returncode == 7  # the command's own status
    # The lease lost by force while the command runs: exit 3 once it ends.
    marker = daemon.workdir / "running"
    lost = subprocess.Popen(
        [COORD, "hold", "1", "--agent", "worker", "--lease", "5", "--", "sh", "-c",
         f"touch {marker}; sleep 4"],
        env=coord_env(s),
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not marker.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    coord("cancel", "1", "--reason", "taken away", socket=s)
    _, stderr = lost.communicate(timeout=30)
    assert lost.returncode == 3 and "lost the lease on #1" in stderr, stderr


def test_heartbeat_reports_claims_that_were_lost(daemon: DaemonProcess, workdir: Path) -> None:
    s = daemon.socket_path
    env = {"XDG_STATE_HOME": str(workdir / "state")}
    coord("post", "a", socket=s)
    coord("post", "b", socket=s)
    coord("claim", "1", "--agent", "beat", socket=s, env=env)
    coord("claim", "2", "--agent", "beat", socket=s, env=env)
    coord("cancel", "2", socket=s)
    beat = coord("heartbeat", "--agent", "beat", "--json", socket=s, env=env)
    assert beat.returncode == 3
    assert doc(beat) == {"renewed": 1, "lost": [{"id": 2, "now": "it is cancelled"}]}
    again = coord("heartbeat", "--agent", "beat", socket=s, env=env)
    assert again.returncode == 0  # reported once, then forgotten


def test_wait_for_one_task_and_its_ack(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "ship it", "-t", "release", socket=s)
    coord("post", "ship it too", socket=s)  # same title prefix, another task
    waiter = subprocess.Popen(
        [COORD, "wait", "#1", "--state", "done", "--timeout", "30", "--json"],
        env=coord_env(s),
        stdout=subprocess.PIPE,
        text=True,
    )
    coord("claim", "2", "--agent", "x", socket=s)
    coord("done", "2", "--agent", "x", socket=s)  # another task done first: not it
    coord("claim", "1", "--agent", "x", socket=s)
    coord("done", "1", "--agent", "x", "--ack", "shipped", socket=s)
    out, _ = waiter.communicate(timeout=60)
    assert waiter.returncode == 0 and json.loads(out)["task"]["id"] == 1
    ack = doc(coord("wait", "-k", "ack", "-t", "re:1", "--timeout", "5", "--json", socket=s))
    assert ack["task"]["tags"] == ["re:1", "release"]
    timed_out = coord("wait", "2", "--state", "failed", "--timeout", "0.5", socket=s)
    assert timed_out.returncode == 2


def test_show_history_tells_who_did_what(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "flaky", "--agent", "poster", socket=s)
    coord("claim", "1", "--agent", "first", socket=s)
    coord("fail", "1", "--agent", "first", "--reason", "cannot reproduce", "--retry", socket=s)
    coord("claim", "1", "--agent", "second", socket=s)
    coord("done", "1", "--agent", "second", "-r", "fixed", socket=s)
    shown = coord("show", "1", "--history", socket=s).stdout
    steps = [line.split()[-3:] for line in shown.split("history:\n")[1].splitlines()]
    assert [line for line in shown.splitlines() if "failed" in line and "by first" in line]
    assert "cannot reproduce" in shown and "by second" in shown
    assert len(steps) == 5
    history = doc(coord("show", "1", "--history", "--json", socket=s))["history"]
    assert [e["type"] for e in history] == [
        "task.posted",
        "task.claimed",
        "task.failed",
        "task.claimed",
        "task.completed",
    ]


def test_small_things_an_agent_trips_over(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    version = coord("--version", socket=s)
    assert version.returncode == 0 and version.stdout.startswith("coord ")
    coord("post", "x", socket=s)
    nxt = coord("next", "--agent", "a", socket=s)
    assert "lease ends in" in nxt.stdout
    bad = coord("post", "y", "-p", "5000", socket=s)
    assert bad.returncode == 1 and "coord: --priority must be at most 1000" in bad.stderr
    kind = coord("post", "y", "-k", "Bug!", socket=s)
    assert "--kind has characters that are not allowed" in kind.stderr
    # `coord watch | head -n 1`: the next event after head is gone ends watch quietly.
    piped = subprocess.Popen(
        ["bash", "-c", f"{COORD} watch --since 0 --all-projects | head -n 1"],
        env=coord_env(s),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    for n in range(3):
        coord("post", f"after head {n}", socket=s)
    out, err = piped.communicate(timeout=30)
    assert piped.returncode == 0 and out.count("\n") == 1 and "task.posted" in out
    assert err == "", err


def test_agents_hides_the_long_gone_unless_asked(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("heartbeat", "--agent", "recent", socket=s)
    conn = sqlite3.connect(daemon.db_path, timeout=10)
    conn.execute(
        "INSERT INTO agents (agent, last_seen) VALUES ('long-gone', '2020-01-01T00:00:00.000000Z')"
    )
    conn.commit()
    conn.close()
    shown = coord("agents", socket=s).stdout
    assert "recent" in shown and "long-gone" not in shown and "1 not seen for a day" in shown
    assert "long-gone" in coord("agents", "--all", socket=s).stdout
