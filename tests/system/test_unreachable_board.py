"""Issue 43: a guard that cannot reach its board says so where the model and its user read,
not only on stderr; a repository can choose to refuse instead (`.coord/config.json`'s
`"unreachable": "deny"`, overridden by `COORD_GUARD_STRICT`); several live boards never
crash a guard, and a daemon of another board is refused. Real hook processes, real
daemons, each host's recorded stdin.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_runs import AGENT_A, SESSION_A, SESSION_B, hook, hook_env, payload

from coordd_client import Client
from coordd_wire.rendezvous import rendezvous_dir
from support import (
    COORD,
    SHARED_TMP_SOCKET,
    DaemonProcess,
    FakeHost,
    coord,
    git_repo,
    run_as_new_tab,
)

UNCHECKED = "allowed UNCHECKED"


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = git_repo(workdir / "repo").resolve()
    (path / "src").mkdir()
    return path


def configure(repo: Path, **keys: object) -> None:
    (repo / ".coord").mkdir(exist_ok=True)
    (repo / ".coord" / "config.json").write_text(json.dumps(keys))


def edit(host: str, repo: Path, session: str = SESSION_B) -> str:
    """The host's pre-edit stdin for an edit of `src/a.py` (Codex: a patch)."""
    if host == "codex":
        patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** End Patch\n"
        return payload("codex-pre-edit", CWD=str(repo), SESSION=session, PATCH=patch)
    return payload(f"{host}-pre-edit", CWD=str(repo), SESSION=session,
                   FILE=str(repo / "src" / "a.py"))  # fmt: skip


def turn(event: str, repo: Path, session: str = SESSION_A) -> str:
    """Claude Code's PostToolUse after a shell command, or its UserPromptSubmit."""
    base = {"session_id": session, "cwd": str(repo), "transcript_path": "/t.jsonl"}
    if event == "post-tool":
        tool = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}}
        return json.dumps({**base, "hook_event_name": "PostToolUse", **tool})
    return json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"})


def context_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_an_unchecked_edit_is_told_to_the_model_and_the_user(
    workdir: Path, repo: Path, host: str
) -> None:
    """Before: exit 0, nothing on stdout, one line on stderr that no model reads. The
    shape was checked with the real hosts (tests/hosts: Claude Code and Codex both put
    an allowed PreToolUse's additionalContext before the model; Codex fails the hook on
    `"permissionDecision": "allow"`, so none is sent)."""
    done = hook("pre-edit", host, edit(host, repo), workdir / "absent.sock")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    said = answer["hookSpecificOutput"]
    assert said["hookEventName"] == "PreToolUse" and "permissionDecision" not in said
    context = said["additionalContext"]
    assert context.startswith("coord: could not check reservations (no coordd answers on")
    assert UNCHECKED in context and "coordd serve" in context and "coord doctor" in context
    assert "Mention this to the user" in context
    assert UNCHECKED in answer["systemMessage"]  # what Claude Code shows its user
    assert UNCHECKED in done.stderr  # and the log, as before


def test_cursor_is_told_in_its_agent_and_user_messages(workdir: Path, repo: Path) -> None:
    done = hook("pre-edit", "cursor", edit("cursor", repo, "c0ffee00-1"), workdir / "absent.sock")
    answer = json.loads(done.stdout)
    assert answer["permission"] == "allow"
    assert UNCHECKED in answer["agent_message"] and UNCHECKED in answer["user_message"]


def test_a_repository_can_refuse_what_cannot_be_checked(workdir: Path, repo: Path) -> None:
    """`"unreachable": "deny"` refuses edits and commits, saying why and what to do;
    `COORD_GUARD_STRICT` decides over the file, both ways."""
    absent = workdir / "absent.sock"
    configure(repo, unreachable="deny")
    denied = json.loads(hook("pre-edit", "claude", edit("claude", repo), absent).stdout)
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert f'{repo / ".coord" / "config.json"} says "unreachable": "deny"' in reason
    assert "coordd serve" in reason and "coord doctor" in reason
    codex = hook("pre-edit", "codex", edit("codex", repo), absent)
    assert codex.returncode == 2 and "refused until it can" in codex.stderr
    allowed = hook("pre-edit", "claude", edit("claude", repo), absent, COORD_GUARD_STRICT="0")
    assert UNCHECKED in context_of(allowed)

    (repo / "src" / "a.py").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "src/a.py"], check=True)
    refused = coord("hook", "pre-commit", "--agent", AGENT_A, socket=absent, cwd=repo)
    assert refused.returncode == 1, refused.stderr
    assert "refused until it can" in refused.stderr and "COORD_GUARD_STRICT=0" in refused.stderr
    assert "reserved:" not in refused.stderr  # not "committing files another agent reserved"
    once = coord("hook", "pre-commit", socket=absent, cwd=repo, env={"COORD_GUARD_STRICT": "0"})
    assert once.returncode == 0 and UNCHECKED in once.stderr

    configure(repo, unreachable="allow")
    strict = hook("pre-edit", "claude", edit("claude", repo), absent, COORD_GUARD_STRICT="1")
    decision = json.loads(strict.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "as COORD_GUARD_STRICT=1" in decision["permissionDecisionReason"]


@SHARED_TMP_SOCKET
def test_a_wrong_value_is_passed_over_and_named_by_doctor(workdir: Path, repo: Path) -> None:
    absent = workdir / "absent.sock"
    configure(repo, unreachable="refuse")
    allowed = hook("pre-edit", "claude", edit("claude", repo), absent)
    assert UNCHECKED in context_of(allowed)  # the default: a hook never bricks an agent
    done = coord("doctor", "--json", socket=absent, cwd=repo)
    (found,) = [c for c in json.loads(done.stdout)["checks"] if c["section"] == "edits"]
    assert found["status"] == "missing" and found["unreachable"] == "allow"
    assert 'unreachable must be "allow" or "deny"' in found["detail"]


def test_the_hooks_during_a_turn_say_it_once_per_outage(workdir: Path, repo: Path) -> None:
    """Claude Code's PostToolUse and UserPromptSubmit (Codex's take the same shape): the
    first hook that finds the board gone tells the model, the next ones do not repeat
    it; once the board answered, the next outage is told again. An unchecked edit is
    told by its guard, so the hook after that edit does not repeat it."""
    socket = workdir / "s.sock"
    first = context_of(hook("post-tool", "claude", turn("post-tool", repo), socket))
    assert first.startswith("coord: the coordd board cannot be reached (no coordd answers on")
    assert "Mention this to the user" in first and "coordd serve" in first
    assert context_of(hook("post-tool", "claude", turn("post-tool", repo), socket)) == ""
    assert context_of(hook("deliver", "claude", turn("deliver", repo), socket)) == ""

    daemon = DaemonProcess(workdir, socket_path=socket).start()
    try:
        assert context_of(hook("deliver", "claude", turn("deliver", repo), socket)) == ""
    finally:
        assert daemon.stop() == 0
    again = context_of(hook("deliver", "claude", turn("deliver", repo), socket))
    assert again.startswith("coord: the coordd board cannot be reached")

    # Another tab: its unchecked edit is told by the guard, not again after the edit.
    assert UNCHECKED in context_of(hook("pre-edit", "claude", edit("claude", repo), socket))
    after = turn("post-tool", repo, SESSION_B)
    assert context_of(hook("post-tool", "claude", after, socket)) == ""


def derived(workdir: Path, socket: Path, **extra: str) -> dict[str, str]:
    """A hook's environment with no socket given: it is derived from an empty runtime
    directory, where nobody answers, so discovery reads the rendezvous."""
    env = hook_env(socket, **extra)
    del env["COORDD_SOCKET"]
    runtime = workdir / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


@pytest.fixture
def two_boards(workdir: Path) -> Iterator[tuple[DaemonProcess, DaemonProcess]]:
    """Two live boards of this user (this test's HOME): two stores, two sockets. Started
    with their own --db and --socket, each is a separate board; their records are made
    the user's, as an older daemon's record (no `separate`) counts: a split."""
    first = DaemonProcess(workdir, db_path=workdir / "one.db", socket_path=workdir / "1.sock")
    second = DaemonProcess(workdir, db_path=workdir / "two.db", socket_path=workdir / "2.sock")
    first.start()
    second.start()
    for path in rendezvous_dir().glob("*.json"):
        record = json.loads(path.read_text())
        record.pop("separate", None)
        path.write_text(json.dumps(record))
    yield first, second
    first.ensure_dead()
    second.ensure_dead()


def test_several_live_boards_never_crash_a_guard(
    workdir: Path, repo: Path, two_boards: tuple[DaemonProcess, DaemonProcess]
) -> None:
    """Discovery refuses (`SeveralBoards`) when the socket was not given and more than
    one board is live. Before: git's pre-commit failed on it (exit 1, outside the guard's
    policy: every commit blocked), the edit guard allowed saying so on stderr only, even
    under the strict setting, and the session start put nothing at all in the context."""
    env = derived(workdir, two_boards[0].socket_path)
    (repo / "src" / "a.py").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "src/a.py"], check=True)

    def pre_commit(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([COORD, "hook", "pre-commit"], cwd=repo, env={**env, **extra},
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip

    committed = pre_commit()
    assert committed.returncode == 0 and "Traceback" not in committed.stderr, committed.stderr
    assert "2 of your boards are live" in committed.stderr and UNCHECKED in committed.stderr
    assert pre_commit(COORD_GUARD_STRICT="1").returncode == 1

    def run(event: str, stdin: str, **extra: str) -> subprocess.CompletedProcess[str]:
        argv = [COORD, "hook", event, "--host", "claude"]
        return run_as_new_tab(argv, env={**env, **extra}, stdin=stdin)

    told = context_of(run("pre-edit", edit("claude", repo)))
    assert "2 of your boards are live" in told and UNCHECKED in told
    strict = json.loads(run("pre-edit", edit("claude", repo), COORD_GUARD_STRICT="1").stdout)
    assert strict["hookSpecificOutput"]["permissionDecision"] == "deny"
    started = context_of(run("session-start", payload("claude-session-start", CWD=str(repo))))
    assert started.startswith("coordd board unavailable (no coordd answers on")
    # The refusal whole, with what to do (it was cut at 300 characters, before its remedy).
    assert f"--socket {two_boards[0].socket_path}" in started
    assert "Until it answers, edits and commits go ahead UNCHECKED" in started


def test_a_commit_on_another_board_than_the_tabs_is_refused_as_such(
    workdir: Path, repo: Path, two_boards: tuple[DaemonProcess, DaemonProcess]
) -> None:
    """The tab's first session start bound it to board one; its commit's guard reaches
    board two: refused, saying which boards (not "files another agent reserved")."""
    first, second = two_boards
    (repo / "src" / "a.py").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "src/a.py"], check=True)
    with FakeHost() as tab:
        start = payload("claude-session-start", CWD=str(repo))
        started = tab.run([COORD, "hook", "session-start", "--host", "claude"],
                          env=hook_env(first.socket_path), stdin=start)  # fmt: skip
        assert "you are" in context_of(started)
        with Client(second.socket_path) as client:
            other = client.server_info().board_id
        refused = tab.run([COORD, "hook", "pre-commit"], env=hook_env(second.socket_path),
                          cwd=repo)  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert f"serves board {other}" in refused.stderr and "reserved" not in refused.stderr


def test_a_daemon_too_busy_to_answer_is_not_called_absent(workdir: Path, repo: Path) -> None:
    """A guard that timed out (the daemon is up, but stopped or swamped) used to tell
    the person to start the daemon; it now says the daemon is running but busy."""
    daemon = DaemonProcess(workdir).start()
    assert daemon.proc is not None
    daemon.proc.send_signal(signal.SIGSTOP)
    try:
        done = hook("pre-edit", "claude", edit("claude", repo), daemon.socket_path)
    finally:
        daemon.proc.send_signal(signal.SIGCONT)
        daemon.stop()
    context = context_of(done)
    assert UNCHECKED in context and "timed out waiting for the daemon's answer" in context
    assert "running but did not answer in time" in context and "coordd serve" not in context
