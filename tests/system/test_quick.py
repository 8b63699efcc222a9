"""The quick path (issue 46) says exactly what the full `coord` says: every quick command
and hook, run through a warm quick server and run in its own process, on two boards that
go through the same steps, gives the same stdout, stderr and exit status (once what
must differ between two boards is set aside: their ids, paths and the clock)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hook_runs import SESSION_A, payload

from coordd_client.identity import host_agent
from support import COORD, DaemonProcess, coord_env, git_repo, quick_server_ready

#: The tab the session-start payload makes of the process running the steps (the later
#: hooks of that process are its hooks, whatever session their payload names).
TAB = host_agent("claude", json.loads(payload("claude-session-start"))["session_id"])
#: Each step: argv, and the stdin a host would send (hooks).
STEPS: list[tuple[list[str], str | None]] = [
    (["whoami"], None),
    (["whoami", "--json"], None),
    (["post", "Parser crashes on empty input", "-k", "bug", "-t", "parser", "-p", "5"], None),
    (["post", "second", "--json"], None),
    (["ls"], None),
    (["ls", "--json"], None),
    (["show", "1"], None),
    (["claim", "1"], None),
    (["--agent", "other", "claim", "1"], None),
    (["next"], None),
    (["renew", "1"], None),
    (["heartbeat"], None),
    (["reserve", "src/a.py"], None),
    (["--agent", "other", "reserve", "src/b.py"], None),
    (["--agent", "other", "check", "src/a.py"], None),
    (["reservations"], None),
    (["msg", "--to", "other", "hello there"], None),
    (["prime"], None),
    (["agents"], None),
    (["done", "1", "-r", "fixed in abc123", "--ack", "parser fix landed"], None),
    (["fail", "2", "-r", "cannot"], None),  # an unknown option: the parser's words
    (["fail", "2", "--reason", "cannot"], None),
    (["reopen", "2"], None),
    (["cancel", "2"], None),
    (["unreserve", "src/a.py"], None),
    (["claim"], None),  # a usage error: argparse's words and status
    (["show", "999"], None),  # not found
    (["ls", "--state", "bogus"], None),
    (["hook", "session-start", "--host", "claude"], "claude-session-start"),
    (["--agent", "other", "msg", "--to", TAB, "the parser is yours now"], None),
    (["hook", "deliver", "--host", "claude"], "claude-user-prompt"),  # the message, once
    (["hook", "deliver", "--host", "claude"], "claude-user-prompt"),  # nothing new
    (["hook", "pre-edit", "--host", "claude"], "claude-pre-edit:src/a.py"),
    (["hook", "pre-edit", "--host", "claude"], "claude-pre-edit:src/b.py"),  # denied
    (["hook", "post-tool", "--host", "claude"], "claude-pre-edit:src/a.py"),
    (["hook", "pre-commit"], None),
    (["hook", "turn-end", "--host", "codex"], "codex-stop"),
    (["hook", "session-end", "--host", "claude"], "claude-session-end"),
]


def normalized(text: str, side: Path) -> str:
    """Set aside what must differ between two boards: their directory, id and the clock."""
    text = text.replace(str(side), "SIDE")
    text = re.sub(r"\b[0-9a-f]{16}\b", "BOARD", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)", "ISO", text)
    text = re.sub(r"\d\d:\d\d(:\d\d)?Z", "HH:MMZ", text)
    text = re.sub(r"\b\d+ min\b", "N min", text)  # a lease's minutes left, as it is read
    return re.sub(r"\b\d+(\.\d+)?(ms|s|m|h)\b", "N", text)


def sorted_lines(outcome: tuple[str, str, int]) -> tuple[str, str, int]:
    stdout, stderr, status = outcome
    return "\n".join(sorted(stdout.splitlines())), stderr, status


def stdin_for(spec: str | None, repo: Path) -> str | None:
    if spec is None:
        return None
    name, _, file = spec.partition(":")
    return payload(name, CWD=str(repo), SESSION=SESSION_A, FILE=str(repo / file))


def run_steps(side: Path, repo: Path, quick: str) -> list[tuple[str, str, int]]:
    env = coord_env(
        side / "s.sock", COORD_QUICK=quick, HOME=str(side / "home"),
        XDG_STATE_HOME=str(side / "state"),
    )  # fmt: skip
    outcomes = []
    for argv, spec in STEPS:
        done = subprocess.run(
            [COORD, *argv], input=stdin_for(spec, repo), capture_output=True, text=True,
            env=env, cwd=repo, timeout=120, check=False,
        )  # fmt: skip
        outcomes.append(
            (normalized(done.stdout, side), normalized(done.stderr, side), done.returncode)
        )
    return outcomes


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = git_repo(workdir / "repo")
    (path / "src").mkdir()
    for name in ("a.py", "b.py"):
        (path / "src" / name).write_text("a = 1\n")
    subprocess.run(["git", "-C", str(path), "add", "src"], check=True)
    return path


@pytest.mark.timeout(900)
def test_every_quick_command_says_what_the_full_one_says(workdir: Path, repo: Path) -> None:
    sides = {name: workdir / name for name in ("quick", "full")}
    daemons = []
    for side in sides.values():
        (side / "home").mkdir(parents=True)
        daemons.append(
            DaemonProcess(side, db_path=side / "coord.db", socket_path=side / "s.sock").start()
        )
    try:
        quick = sides["quick"]
        starter = coord_env(quick / "s.sock", COORD_QUICK="1", HOME=str(quick / "home"))
        first = subprocess.run(
            [COORD, "whoami"], env={**starter, "XDG_STATE_HOME": str(quick / "state0")},
            cwd=repo, capture_output=True, check=False, timeout=60,
        )  # fmt: skip
        assert first.returncode == 0, first
        quick_server_ready(quick)
        through_server = run_steps(quick, repo, "require")
        in_process = run_steps(sides["full"], repo, "0")
    finally:
        for daemon in daemons:
            daemon.stop()
    for (argv, _), quick_said, full_said in zip(STEPS, through_server, in_process, strict=True):
        a, b = quick_said, full_said
        if argv == ["agents"]:
            # Most recently seen first, and a last-seen is written at most once a
            # `Limits.agent_seen_resolution_s`: which of two agents seen within one comes
            # first is the machine's timing, not the path the call took.
            a, b = sorted_lines(a), sorted_lines(b)
        assert a == b, f"coord {' '.join(argv)}:\nquick: {a}\nfull:  {b}"
    statuses = [status for _, _, status in in_process]
    assert {0, 1, 3} <= set(statuses), statuses  # wins, refusals and usage errors, losses
    deny_step = next(i for i, (_, spec) in enumerate(STEPS) if spec and spec.endswith("b.py"))
    denied = json.loads(in_process[deny_step][0])["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny"
    deliver_step = STEPS.index((["hook", "deliver", "--host", "claude"], "claude-user-prompt"))
    told = json.loads(through_server[deliver_step][0])["hookSpecificOutput"]
    assert "the parser is yours now" in told["additionalContext"]  # before the prompt
    assert through_server[deliver_step + 1][0] == ""  # once
