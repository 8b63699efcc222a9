"""The `coord` CLI against a real daemon: every command, human and --json, every exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from support import COORD, DaemonProcess, coord, coord_env


def doc(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON document, got {result.stdout!r} ({result.stderr})"
    parsed: dict[str, Any] = json.loads(lines[0])
    return parsed


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = workdir / "repo"
    (path / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_post_defaults_to_the_git_top_level_and_sends_the_agent(
    daemon: DaemonProcess, repo: Path
) -> None:
    args = ("post", "fix it", "-k", "bug", "-p", "5", "-t", "a", "-t", "b", "--json")
    result = coord(*args, socket=daemon.socket_path, cwd=repo / "sub", env={"COORD_AGENT": "tab-1"})
    assert result.returncode == 0
    task = doc(result)["task"]
    assert task["project"] == str(repo) and task["created_by"] == "tab-1"
    assert task["kind"] == "bug" and task["priority"] == 5 and task["tags"] == ["a", "b"]
    human = coord(
        "post", "second", socket=daemon.socket_path, cwd=repo, env={"COORD_AGENT": "tab-1"}
    )
    assert human.returncode == 0 and human.stdout.startswith("posted #2 [task, pending] second")
    outside = coord("post", "elsewhere", "--json", socket=daemon.socket_path, cwd=Path("/"))
    assert doc(outside)["task"]["project"] == "/"  # outside a repository: the directory
    explicit = coord(
        "--project",
        "/x",
        "post",
        "p",
        "--json",
        socket=daemon.socket_path,
        env={"COORD_PROJECT": "/y"},
    )
    assert doc(explicit)["task"]["project"] == "/x"
    from_env = coord("post", "p", "--json", socket=daemon.socket_path, env={"COORD_PROJECT": "/y"})
    assert doc(from_env)["task"]["project"] == "/y"


def test_post_body_from_stdin_done_and_idempotency_key(daemon: DaemonProcess) -> None:
    first = coord(
        "post",
        "ack",
        "-b",
        "-",
        "--done",
        "--key",
        "k",
        "--json",
        socket=daemon.socket_path,
        stdin="long\nbody",
    )
    task = doc(first)["task"]
    assert (
        task["body"] == "long\nbody" and task["state"] == "done" and doc(first)["created"] is True
    )
    again = coord("post", "ack", "--key", "k", socket=daemon.socket_path)
    assert again.returncode == 0 and "already posted" in again.stdout


def test_claim_won_lost_and_exit_codes(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "contested", socket=s)
    won = coord("claim", "1", "--agent", "a", "--lease", "60", "--json", socket=s)
    assert won.returncode == 0 and doc(won)["won"] is True
    lost = coord("claim", "1", "--agent", "b", "--json", socket=s)
    assert lost.returncode == 3
    assert doc(lost)["won"] is False and doc(lost)["task"]["claimed_by"] == "a"
    human = coord("claim", "1", "--agent", "b", socket=s)
    assert human.returncode == 3 and "held by a" in human.stdout
    not_holder = coord("done", "1", "--agent", "b", "--json", socket=s)
    assert not_holder.returncode == 3 and doc(not_holder)["error"]["data"]["kind"] == "lease_lost"
    missing = coord("show", "99", "--json", socket=s)
    assert missing.returncode == 1 and doc(missing)["error"]["code"] == -32001


def test_next_and_nothing_to_claim(daemon: DaemonProcess, repo: Path) -> None:
    s = daemon.socket_path
    coord("post", "low", "-p", "-1", socket=s, cwd=repo)
    coord("post", "high", "-p", "9", "-t", "x", socket=s, cwd=repo)
    got = coord("next", "-t", "x", "--agent", "w", "--json", socket=s, cwd=repo)
    assert got.returncode == 0 and doc(got)["task"]["title"] == "high"
    got = coord("next", "--agent", "w", socket=s, cwd=repo)
    assert got.returncode == 0 and "low" in got.stdout
    empty = coord("next", "--agent", "w", "--json", socket=s, cwd=repo)
    assert empty.returncode == 4 and doc(empty) == {"task": None}
    human_empty = coord("next", "--agent", "w", socket=s, cwd=repo)
    assert human_empty.returncode == 4 and "nothing to claim" in human_empty.stdout


def test_holder_commands_and_done_with_ack(daemon: DaemonProcess, repo: Path) -> None:
    s = daemon.socket_path
    env = {"COORD_AGENT": "me"}
    coord("post", "work", socket=s, cwd=repo)
    coord("claim", "1", socket=s, cwd=repo, env=env)
    assert (
        doc(coord("renew", "1", "--lease", "900", "--json", socket=s, env=env))["task"]["state"]
        == "claimed"
    )
    assert doc(coord("release", "1", "--json", socket=s, env=env))["task"]["state"] == "pending"
    coord("claim", "1", socket=s, env=env)
    done = coord(
        "done", "1", "-r", "fixed in abc", "--ack", "work landed", "--json", socket=s, env=env
    )
    assert done.returncode == 0
    result = doc(done)
    assert result["task"]["state"] == "done" and result["task"]["result"] == "fixed in abc"
    ack = result["posted"]
    assert ack["kind"] == "ack" and ack["state"] == "done" and ack["project"] == str(repo)
    assert ack["created_by"] == "me"
    again = coord("done", "1", "--json", socket=s, env=env)  # a repeat returns the first outcome
    assert again.returncode == 0 and doc(again)["posted"]["id"] == ack["id"]
    # Found by a new user: a repeat asking for another result said "done" and "posted
    # ack #2", though neither was recorded by it.
    other = coord("done", "1", "-r", "something else", "--ack", "again", socket=s, env=env)
    assert other.returncode == 0
    assert other.stdout.splitlines() == [
        "#1 was done already: work",
        "its result stays: fixed in abc",
        f"its ack, posted then: #{ack['id']}: work landed",
        "nothing of this call was recorded (`coord reopen ID` to redo it)",
    ], other.stdout
    reopened = coord("reopen", "1", "--json", socket=s, env=env)
    assert doc(reopened)["task"]["state"] == "pending"
    coord("claim", "1", socket=s, env=env)
    retried = coord("fail", "1", "--reason", "flaky", "--retry", "--json", socket=s, env=env)
    assert doc(retried)["task"]["state"] == "pending"
    coord("claim", "1", socket=s, env=env)
    failed = coord("fail", "1", "--reason", "no", socket=s, env=env)
    assert failed.returncode == 0 and "failed #1: now failed" in failed.stdout
    conflict = coord("cancel", "1", "--json", socket=s, env=env)
    assert conflict.returncode == 1 and doc(conflict)["error"]["code"] == -32002
    coord("reopen", "1", socket=s, env=env)
    assert (
        doc(coord("cancel", "1", "--reason", "dup", "--json", socket=s, env=env))["task"]["state"]
        == "cancelled"
    )


def test_ls_filters_and_paging(daemon: DaemonProcess, repo: Path) -> None:
    s = daemon.socket_path
    for n in range(3):
        coord("post", f"t{n}", "-k", "bug" if n else "note", socket=s, cwd=repo)
    coord("post", "other project", "--project", "/other", socket=s)
    coord("claim", "2", "--agent", "me", socket=s)
    assert len(doc(coord("ls", "--json", socket=s, cwd=repo))["tasks"]) == 3
    assert len(doc(coord("ls", "--all-projects", "--json", socket=s, cwd=repo))["tasks"]) == 4
    mine = doc(coord("ls", "--mine", "--agent", "me", "--json", socket=s, cwd=repo))["tasks"]
    assert [t["id"] for t in mine] == [2]
    states = doc(
        coord(
            "ls",
            "--state",
            "pending",
            "--state",
            "claimed",
            "--kind",
            "bug",
            "--json",
            socket=s,
            cwd=repo,
        )
    )
    assert [t["id"] for t in states["tasks"]] == [2, 3]
    # Every state, in id order, pages with --after.
    page = doc(coord("ls", "--all", "--limit", "2", "--json", socket=s, cwd=repo))
    assert page["next_after_id"] == 2
    human = coord("ls", "--all", "--limit", "2", socket=s, cwd=repo)
    assert (
        "STATE" in human.stdout
        and "coord ls --all --after 2" in human.stdout
        and "\x1b[" not in human.stdout
    )
    # Open work, most urgent first: what was cut is counted.
    urgent = coord("post", "urgent", "-p", "9", "--json", socket=s, cwd=repo)
    top = doc(coord("ls", "--limit", "2", "--json", socket=s, cwd=repo))["tasks"]
    assert [t["id"] for t in top] == [doc(urgent)["task"]["id"], 1]
    assert "(2 more: raise --limit)" in coord("ls", "--limit", "2", socket=s, cwd=repo).stdout


def test_wait_match_timeout_and_since_now(daemon: DaemonProcess, repo: Path) -> None:
    s = daemon.socket_path
    coord("post", "parser fix landed", "-k", "ack", "--done", socket=s, cwd=repo)
    hit = coord("wait", "-k", "ack", "--title-contains", "PARSER", "--json", socket=s, cwd=repo)
    assert hit.returncode == 0 and doc(hit)["task"]["title"] == "parser fix landed"
    stale = coord(
        "wait", "-k", "ack", "--since-now", "--timeout", "0.3", "--json", socket=s, cwd=repo
    )
    assert stale.returncode == 2 and doc(stale) == {"task": None, "seq": 1}
    human = coord("wait", "-k", "bug", "--timeout", "0.2", socket=s, cwd=repo)
    assert human.returncode == 2 and "timed out" in human.stdout
    with subprocess.Popen(
        [COORD, "wait", "-k", "bug", "--json"],
        cwd=repo,
        env=coord_env(s),
        stdout=subprocess.PIPE,
        text=True,
    ) as waiting:
        time.sleep(0.5)
        assert waiting.poll() is None  # no --timeout: it blocks until a match
        coord("post", "a bug", "-k", "bug", socket=s, cwd=repo)
        out, _ = waiting.communicate(timeout=20)
    assert waiting.returncode == 0 and json.loads(out)["task"]["title"] == "a bug"


def test_watch_streams_json_lines_until_interrupted(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "before", socket=s)
    # A process started with SIGINT ignored keeps ignoring it (Python installs its
    # KeyboardInterrupt handler only over the default), and in the full suite the runner's
    # SIGINT was seen ignored: start the watch with a handler set here, which exec resets
    # to the default, as a terminal's shell would.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    with subprocess.Popen(
        [COORD, "watch", "--since", "0", "--json"],
        env=coord_env(s),
        stdout=subprocess.PIPE,
        text=True,
    ) as watch:
        signal.signal(signal.SIGINT, previous)
        assert watch.stdout is not None
        first = json.loads(watch.stdout.readline())
        coord("post", "after", socket=s)
        second = json.loads(watch.stdout.readline())
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(60)
        finally:
            if watch.poll() is None:  # failed: leave no process for the next test to trip on
                watch.kill()
    assert (first["seq"], first["task"]["title"]) == (1, "before")
    assert (second["seq"], second["type"]) == (2, "task.posted")
    assert watch.returncode == 0


def test_agents_heartbeat_status(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "x", socket=s)
    coord("claim", "1", "--agent", "holder", socket=s)
    beat = coord("heartbeat", "--agent", "holder", "--json", socket=s)
    assert doc(beat) == {"renewed": 1, "lost": []}
    agents = doc(coord("agents", "--json", socket=s))["agents"]
    assert {k: agents[0][k] for k in ("agent", "holding")} == {"agent": "holder", "holding": 1}
    # Said whole for a person: a reservation or a lock is holding something too.
    coord("reserve", "src/**", "--agent", "holder", socket=s)
    coord("reserve", "docs/**", "--agent", "locksmith", socket=s)
    coord("slot", "acquire", "migrations", "--agent", "locksmith", socket=s)
    listed = coord("agents", socket=s).stdout
    assert "holding 1 task, 1 reservation\n" in listed + "\n"
    assert "holding 1 reservation, 1 slot" in listed
    status = doc(coord("status", "--json", socket=s))
    assert status["running"] is True and status["pid"] == daemon.pid and status["socket"] == str(s)
    human = coord("status", socket=s)
    assert (
        human.returncode == 0 and "running" in human.stdout and str(daemon.db_path) in human.stdout
    )


def test_status_without_a_daemon_never_starts_one(workdir: Path) -> None:
    s = workdir / "none.sock"
    result = coord("status", "--json", socket=s, autostart=True)
    assert result.returncode == 1 and doc(result) == {"running": False, "socket": str(s)}
    assert not s.exists()


def test_usage_errors_exit_1_with_a_json_error(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    for args in (
        ["bogus", "--json"],
        ["claim", "notanumber", "--json"],
        ["--json", "post"],
        ["ls", "--nope", "--json"],
    ):
        result = coord(*args, socket=s)
        assert result.returncode == 1, args
        assert doc(result)["error"]["data"]["kind"] == "usage"
    plain = coord("claim", socket=s)
    assert plain.returncode == 1 and plain.stdout == ""
    assert plain.stderr.startswith("coord: claim: ") and "coord: coord" not in plain.stderr
    # Global options after the command work too.
    after = coord("post", "late options", "--json", "--agent", "z", socket=s)
    assert doc(after)["task"]["created_by"] == "z"


def test_help_teaches_the_workflow() -> None:
    result = subprocess.run(
        [COORD, "--help"], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0
    for needle in (
        "coord post",
        "coord next",
        "coord done",
        "--ack",
        "coord wait",
        "Exit codes",
        "COORD_AGENT",
    ):
        assert needle in result.stdout
    sub = subprocess.run(
        [COORD, "claim", "--help"], capture_output=True, text=True, timeout=30, check=False
    )
    assert sub.returncode == 0 and "example:" in sub.stdout


def test_no_daemon_and_no_start_is_a_clear_error(workdir: Path) -> None:
    s = workdir / "absent.sock"
    flag = coord("ls", "--no-start", "--json", socket=s, autostart=True)
    assert flag.returncode == 1 and doc(flag)["error"]["data"]["kind"] == "daemon_unavailable"
    env = coord("ls", "--json", socket=s, autostart=True, env={"COORD_NO_AUTOSTART": "yes"})
    assert env.returncode == 1 and "no coordd answers" in doc(env)["error"]["message"]


def _stop_daemon_on(socket: Path) -> None:
    status = coord("status", "--json", socket=socket)
    if status.returncode == 0:
        os.kill(doc(status)["pid"], signal.SIGTERM)


def test_autostart_is_detached_and_two_racing_starters_make_one_daemon(workdir: Path) -> None:
    s = workdir / "auto.sock"
    env = coord_env(
        s,
        autostart=True,
        COORDD_DB=str(workdir / "auto.db"),
        XDG_STATE_HOME=str(workdir / "state"),
        COORD_NO_AUTOSTART="0",
    )
    try:
        racers = [
            subprocess.Popen(
                [COORD, "post", f"racer {n}", "--json"], env=env, stdout=subprocess.PIPE, text=True
            )
            for n in range(2)
        ]
        # communicate() returns only when stdout closes: a daemon that kept the
        # pipe would hang it, as it would hang `$(coord ...)`.
        outputs = [racer.communicate(timeout=30)[0] for racer in racers]
        assert [racer.returncode for racer in racers] == [0, 0]
        assert sorted(json.loads(out)["task"]["id"] for out in outputs) == [1, 2]
        time.sleep(0.5)  # let a losing daemon finish exiting
        daemons = subprocess.run(
            ["pgrep", "-f", f"serve --socket {s}"], capture_output=True, text=True, check=False
        )
        assert len(daemons.stdout.split()) == 1, daemons.stdout
        assert (workdir / "state" / "coordd" / "coordd.log").exists()
    finally:
        _stop_daemon_on(s)
