"""`coord hook ...` run exactly as the hosts run them: their documented stdin JSON
(recorded fixtures per host and event in tests/fixtures/hooks), checking stdout
JSON, exit status and stderr, against a real daemon."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from hook_runs import AGENT_A, AGENT_B, SESSION_A, SESSION_B, hook, payload, start_wake

from coordd_client import Client
from coordd_client.identity import cursor_agent
from support import (
    DaemonProcess,
    RawConnection,
    coord,
    git_repo,
)


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = git_repo(workdir / "repo").resolve()
    (path / "src" / "auth").mkdir(parents=True)
    return path


def test_session_start_puts_the_board_and_the_name_in_the_context(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent="planner", project=str(repo)) as client:
        client.post("review the migration", assignee="claude-3cda0b494380")
        client.post("ready for anyone")
    done = hook("session-start", "claude", payload("claude-session-start", CWD=str(repo)),
                daemon.socket_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert "you are claude-3cda0b494380" in context
    assert "review the migration" in context and "ready for anyone" in context
    assert "claim before you work" in context
    codex = hook("session-start", "codex", payload("codex-session-start", CWD=str(repo)),
                 daemon.socket_path)  # fmt: skip
    assert (
        "you are codex-123456789abc"  # a v7 UUID: its random end, not its timestamp
        in json.loads(codex.stdout)["hookSpecificOutput"]["additionalContext"]
    )


def test_the_edit_guard_denies_another_agents_reserved_file_only(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("login refactor").task
        a.claim(task.id)
        a.reserve(["src/auth/**"], task_id=task.id, reason="login refactor")
    target = str(repo / "src" / "auth" / "login.py")
    as_b = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE=target)
    denied = hook("pre-edit", "claude", as_b, daemon.socket_path)
    assert denied.returncode == 0
    decision = json.loads(denied.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    reason = decision["permissionDecisionReason"]
    assert AGENT_A in reason and "src/auth/**" in reason and f"task #{task.id}" in reason
    assert "pick other work" in reason
    as_a = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_A, FILE=target)
    mine = hook("pre-edit", "claude", as_a, daemon.socket_path)
    assert (mine.returncode, mine.stdout) == (0, "")  # silent: allowed
    free = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE=str(repo / "README"))
    assert hook("pre-edit", "claude", free, daemon.socket_path).stdout == ""
    outside = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE="/etc/hosts")
    elsewhere = hook("pre-edit", "claude", outside, daemon.socket_path)
    assert (elsewhere.stdout, elsewhere.stderr) == ("", "")  # not the board's: silently allowed


def test_the_codex_guard_reads_the_patch_headers(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, agent="claude-aaaa", project=str(repo)) as a:
        a.reserve(["src/auth/session.py"])
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: README.md",
            "@@",
            "-*** Update File: src/auth/session.py",  # inside a hunk: not a header
            "+text",
            "   *** Update File: docs/a.md",
            "*** Move to: src/auth/session.py",  # the rename's target is reserved
            "*** End Patch",
        ]
    )
    stdin = payload("codex-pre-edit", CWD=str(repo), SESSION=SESSION_B, PATCH=patch)
    denied = hook("pre-edit", "codex", stdin, daemon.socket_path)
    assert denied.returncode == 2  # Codex: exit 2 blocks; never "ask"
    assert "src/auth/session.py" in denied.stderr and "claude-aaaa" in denied.stderr
    clean = patch.replace("*** Move to: src/auth/session.py", "*** Move to: src/auth/other.py")
    stdin = payload("codex-pre-edit", CWD=str(repo), SESSION=SESSION_B, PATCH=clean)
    assert hook("pre-edit", "codex", stdin, daemon.socket_path).returncode == 0


def test_the_cursor_guard_answers_permission(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, agent="someone", project=str(repo)) as a:
        a.reserve(["src/**"])
    target = str(repo / "src" / "x.py")
    stdin = payload("cursor-pre-edit", CWD=str(repo), SESSION="c0ffee00-1", FILE=target)
    denied = json.loads(hook("pre-edit", "cursor", stdin, daemon.socket_path).stdout)
    assert denied["permission"] == "deny" and "someone" in denied["agent_message"]
    elsewhere = payload("cursor-pre-edit", CWD=str(repo), SESSION="c0ffee00-1",
                        FILE=str(repo / "docs.md"))  # fmt: skip
    assert json.loads(hook("pre-edit", "cursor", elsewhere, daemon.socket_path).stdout) == {
        "permission": "allow"
    }


def test_a_stopped_daemon_never_bricks_an_edit_unless_strict(workdir: Path, repo: Path) -> None:
    absent = workdir / "no.sock"
    stdin = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE=str(repo / "a.py"))
    allowed = hook("pre-edit", "claude", stdin, absent)
    assert allowed.returncode == 0
    assert "could not check reservations" in allowed.stderr
    # Issue 43: and the model is told (test_unreachable_board.py has every host).
    told = json.loads(allowed.stdout)["hookSpecificOutput"]
    assert "permissionDecision" not in told and "allowed UNCHECKED" in told["additionalContext"]
    strict = hook("pre-edit", "claude", stdin, absent, COORD_GUARD_STRICT="1")
    assert json.loads(strict.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    broken = hook("pre-edit", "claude", "{not json", absent)
    assert broken.returncode == 0


def test_a_reservation_covers_the_file_in_every_worktree(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    linked = (workdir / "linked").resolve()
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    (linked / "src").mkdir(exist_ok=True)
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        a.reserve(["src/auth.py"])
    stdin = payload("claude-pre-edit", CWD=str(linked), SESSION=SESSION_B,
                    FILE=str(linked / "src" / "auth.py"))  # fmt: skip
    decision = json.loads(hook("pre-edit", "claude", stdin, daemon.socket_path).stdout)
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    checked = coord("check", "src/auth.py", "--agent", AGENT_B, socket=daemon.socket_path,
                    cwd=linked)  # fmt: skip
    assert checked.returncode == 3 and AGENT_A in checked.stdout


def waiting(daemon: DaemonProcess) -> int:
    conn = RawConnection(daemon.socket_path)
    try:
        return int(conn.call("server.info")["result"]["waiters"])
    finally:
        conn.close()


def wait_for_waiters(daemon: DaemonProcess, count: int) -> None:
    deadline = time.monotonic() + 15
    while waiting(daemon) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert waiting(daemon) >= count


def test_the_wake_hook_exits_2_when_work_is_assigned_to_the_tab(
    daemon: DaemonProcess, repo: Path
) -> None:
    waiter = start_wake(daemon.socket_path, repo, SESSION_A)
    try:
        wait_for_waiters(daemon, 1)
        coord("post", "not for you", "--to", AGENT_B, "--project", str(repo),
              socket=daemon.socket_path)  # fmt: skip
        time.sleep(1.0)
        assert waiter.poll() is None, "woken by a task assigned to someone else"
        started = time.monotonic()
        posted = coord("post", "review the migration", "--to", AGENT_A, "--project", str(repo),
                       "--agent", "codex-3", socket=daemon.socket_path)  # fmt: skip
        assert posted.returncode == 0
        _, stderr = waiter.communicate(timeout=10)
        assert waiter.returncode == 2
        # Woken by the post itself, not by a timeout: a bound that only a missed wake-up
        # (the 10 s communicate above, or the hook's own wait) would cross, busy or not.
        assert time.monotonic() - started < 10
        assert "'review the migration' was assigned to you by codex-3" in stderr
        assert "claim_task" in stderr
        # Reported once: the next waiter is not woken for the same task.
        again = start_wake(daemon.socket_path, repo, SESSION_A)
        wait_for_waiters(daemon, 1)
        time.sleep(0.5)
        assert again.poll() is None
        again.terminate()
        again.communicate(timeout=10)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)


def test_a_task_assigned_before_the_waiter_started_wakes_it_at_once(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent="lead", project=str(repo)) as client:
        client.post("already yours", assignee=AGENT_B)
    waiter = start_wake(daemon.socket_path, repo, SESSION_B)
    _, stderr = waiter.communicate(timeout=15)
    assert waiter.returncode == 2 and "'already yours'" in stderr


def test_a_second_waiter_replaces_the_first(daemon: DaemonProcess, repo: Path) -> None:
    first = start_wake(daemon.socket_path, repo, SESSION_A)
    wait_for_waiters(daemon, 1)
    second = start_wake(daemon.socket_path, repo, SESSION_A)
    try:
        first.communicate(timeout=10)
        assert first.returncode == 0
        assert second.poll() is None
    finally:
        second.kill()
        second.communicate(timeout=10)


def test_session_end_gives_back_claims_and_reservations(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("half done").task
        a.claim(task.id)
        a.reserve(["src/**"])
        a.acquire_slot("dev-db")  # issue 35: slot leases go too
    started = time.monotonic()
    ended = hook("session-end", "claude", payload("claude-session-end", CWD=str(repo),
                 SESSION=SESSION_A), daemon.socket_path)  # fmt: skip
    assert ended.returncode == 0 and "released 1 claim and 1 reservation" in ended.stderr
    # The hook spends at most SESSION_END_TIMEOUT_S on calls (its deadline, enforced by the
    # client's timeout); this bound adds two process starts on a possibly busy machine.
    assert time.monotonic() - started < 10
    with Client(daemon.socket_path) as client:
        assert client.get(task.id).task.state == "pending"
        assert client.reservations().reservations == []
        assert client.slots().leases == []


def test_session_end_hands_back_the_work_assigned_to_the_tab(
    daemon: DaemonProcess, repo: Path
) -> None:
    """An assigned task is skipped by everyone else's claim_next: session end clears the
    ended tab's assignments of this project's pending tasks (claimed ones released first)."""
    with Client(daemon.socket_path, agent="lead", project=str(repo)) as lead:
        held = lead.post("claimed and assigned", assignee=AGENT_A).task
        waiting = lead.post("assigned, never started", assignee=AGENT_A).task
        theirs = lead.post("for the other tab", assignee=AGENT_B).task
        elsewhere = lead.post("another board", assignee=AGENT_A, project="/other").task
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        assert a.claim(held.id).won
    started = time.monotonic()
    ended = hook("session-end", "claude", payload("claude-session-end", CWD=str(repo),
                 SESSION=SESSION_A), daemon.socket_path)  # fmt: skip
    # The hook spends at most SESSION_END_TIMEOUT_S on calls (its deadline, enforced by the
    # client's timeout); this bound adds two process starts on a possibly busy machine.
    assert time.monotonic() - started < 10
    assert ended.returncode == 0, ended.stderr
    with Client(daemon.socket_path, project=str(repo)) as client:
        for task in (held, waiting):
            now = client.get(task.id).task
            assert (now.state, now.assignee, now.claimed_by) == ("pending", None, None)
            last = client.events_since(task_id=task.id).events[-1]
            assert last.task is not None
            assert (last.type, last.agent, last.task.assignee) == ("task.assigned", AGENT_A, None)
        assert client.get(theirs.id).task.assignee == AGENT_B
        assert client.get(elsewhere.id).task.assignee == AGENT_A  # not this project's
        picked = [client.claim_next("someone-else").task for _ in range(2)]
        assert {t.id for t in picked if t is not None} == {held.id, waiting.id}
    assert "released 1 claim and" in ended.stderr and "unassigned 2 pending tasks" in ended.stderr


def test_a_claude_registered_hook_fed_a_cursor_payload_acts_as_that_window(
    daemon: DaemonProcess, repo: Path
) -> None:
    """Cursor also runs `.claude/settings.json` hooks: the payload says it is Cursor's,
    so the window's own reservation does not block it, and the answer is Cursor's shape."""
    window = cursor_agent(str(repo))
    with Client(daemon.socket_path, agent=window, project=str(repo)) as client:
        client.reserve(["src/auth/**"])
    target = str(repo / "src" / "auth" / "session.py")
    stdin = payload("cursor-pre-edit", CWD=str(repo), SESSION="c0ffee00-2", FILE=target)
    allowed = hook("pre-edit", "claude", stdin, daemon.socket_path)
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout) == {"permission": "allow"}
    with Client(daemon.socket_path, agent="someone-else", project=str(repo)) as client:
        client.reserve(["docs/**"])
    stdin = payload("cursor-pre-edit", CWD=str(repo), SESSION="c0ffee00-2",
                    FILE=str(repo / "docs" / "a.md"))  # fmt: skip
    denied = json.loads(hook("pre-edit", "claude", stdin, daemon.socket_path).stdout)
    assert denied["permission"] == "deny" and "someone-else" in denied["agent_message"]


def test_a_cursor_window_ends_with_its_window_not_with_a_chat(
    daemon: DaemonProcess, repo: Path
) -> None:
    """A Cursor window is one agent for all its chats: a chat's sessionEnd keeps what the
    window holds; `window_close` gives it back. Its context points at the tools."""
    window = cursor_agent(str(repo))
    with Client(daemon.socket_path, agent=window, project=str(repo)) as client:
        held = client.claim(client.post("window work").task.id).task
    chat = {"conversation_id": "c0ffee00-3", "workspace_roots": [str(repo)],
            "hook_event_name": "sessionEnd"}  # fmt: skip
    started = hook("session-start", "cursor", json.dumps({**chat, "hook_event_name":
                   "sessionStart"}), daemon.socket_path)  # fmt: skip
    context = json.loads(started.stdout)["additional_context"]
    assert "claim_next" in context and f"--agent {window}" in context
    assert "`coord next`" not in context
    ended = hook("session-end", "cursor", json.dumps({**chat, "reason": "completed"}),
                 daemon.socket_path)  # fmt: skip
    assert ended.returncode == 0
    with Client(daemon.socket_path, project=str(repo)) as look:
        assert look.get(held.id).task.claimed_by == window  # another chat may go on
    closed = hook("session-end", "cursor", json.dumps({**chat, "reason": "window_close"}),
                  daemon.socket_path)  # fmt: skip
    assert closed.returncode == 0 and "released 1 claim and" in closed.stderr
