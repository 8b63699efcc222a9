"""`coord hook ...` run exactly as the hosts run them: their documented stdin JSON
(recorded fixtures per host and event in tests/fixtures/hooks), checking stdout
JSON, exit status and stderr, against a real daemon."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from coordd_client import Client
from coordd_client.hooks import guard
from coordd_client.identity import cursor_agent, host_agent
from support import (
    COORD,
    DaemonProcess,
    RawConnection,
    coord,
    coord_env,
    git_repo,
    run_as_new_tab,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
SESSION_A = "aaaaaaaa-1111-4f6e-8b5a-000000000001"
SESSION_B = "bbbbbbbb-2222-4f6e-8b5a-000000000002"
AGENT_A = host_agent("claude", SESSION_A)
AGENT_B = host_agent("claude", SESSION_B)


def payload(name: str, **values: str) -> str:
    """A recorded host payload with its placeholders (CWD, SESSION, FILE, PATCH) filled."""

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        if isinstance(node, str) and node in values:
            return values[node]
        return node

    return json.dumps(fill(json.loads((FIXTURES / f"{name}.json").read_text())))


def hook_env(socket: Path, **env: str) -> dict[str, str]:
    """A hook's environment: the test's own state directory (what was reported to whom)."""
    state = socket.parent / "state"
    return coord_env(socket, XDG_STATE_HOME=str(state), **env)


def hook(
    event: str, host: str, stdin: str, socket: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """One hook run, by a host process of its own (so each call is its own tab)."""
    return run_as_new_tab(
        [COORD, "hook", event, "--host", host], env=hook_env(socket, **env), stdin=stdin
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
    assert (allowed.returncode, allowed.stdout) == (0, "")
    assert "could not check reservations" in allowed.stderr
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


def start_wake(daemon: DaemonProcess, repo: Path, session: str) -> subprocess.Popen[str]:
    """The Stop hook as Claude Code starts it with asyncRewake: in the background."""
    process = subprocess.Popen(
        [COORD, "hook", "wake", "--host", "claude", "--max-wait", "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hook_env(daemon.socket_path),
    )
    assert process.stdin is not None
    process.stdin.write(payload("claude-stop", CWD=str(repo), SESSION=session))
    process.stdin.close()
    process.stdin = None  # written and closed, as the host does; communicate() must not flush
    return process


def wait_for_waiters(daemon: DaemonProcess, count: int) -> None:
    deadline = time.monotonic() + 15
    while waiting(daemon) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert waiting(daemon) >= count


def test_the_wake_hook_exits_2_when_work_is_assigned_to_the_tab(
    daemon: DaemonProcess, repo: Path
) -> None:
    waiter = start_wake(daemon, repo, SESSION_A)
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
        again = start_wake(daemon, repo, SESSION_A)
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
    waiter = start_wake(daemon, repo, SESSION_B)
    _, stderr = waiter.communicate(timeout=15)
    assert waiter.returncode == 2 and "'already yours'" in stderr


def test_a_second_waiter_replaces_the_first(daemon: DaemonProcess, repo: Path) -> None:
    first = start_wake(daemon, repo, SESSION_A)
    wait_for_waiters(daemon, 1)
    second = start_wake(daemon, repo, SESSION_A)
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
    started = time.monotonic()
    ended = hook("session-end", "claude", payload("claude-session-end", CWD=str(repo),
                 SESSION=SESSION_A), daemon.socket_path)  # fmt: skip
    assert ended.returncode == 0 and "released 1 claim(s) and 1 reservation(s)" in ended.stderr
    # The hook spends at most SESSION_END_TIMEOUT_S on calls (its deadline, enforced by the
    # client's timeout); this bound adds two process starts on a possibly busy machine.
    assert time.monotonic() - started < 10
    with Client(daemon.socket_path) as client:
        assert client.get(task.id).task.state == "pending"
        assert client.reservations().reservations == []


def test_the_git_guard_honours_agent_and_project(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """`coord --agent X --project P hook pre-commit`: X's own reservations never block
    it, and P is the board asked (setup pins them where a host curates the environment)."""
    (repo / "src" / "auth" / "login.py").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "src/auth/login.py"], check=True)
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["src/auth/**"])
    elsewhere = str(workdir / "other-board")
    with Client(daemon.socket_path, agent="someone", project=elsewhere) as someone:
        someone.reserve(["src/**"])

    def pre_commit(*options: str) -> subprocess.CompletedProcess[str]:
        return coord(*options, "hook", "pre-commit", socket=daemon.socket_path, cwd=repo)

    own = pre_commit("--agent", "holder")
    assert own.returncode == 0, own.stderr
    other = pre_commit("--agent", "intruder")
    assert other.returncode == 1 and "you (intruder)" in other.stderr and "holder" in other.stderr
    there = pre_commit("--agent", "holder", "--project", elsewhere)
    assert there.returncode == 1 and "someone" in there.stderr and "src/**" in there.stderr
    after = coord("hook", "pre-commit", "--agent", "holder", socket=daemon.socket_path, cwd=repo)
    assert after.returncode == 0, after.stderr  # after the command's name too
    # The host hooks take --project as well (their agent already honoured --agent).
    edit = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B,
                   FILE=str(repo / "src" / "main.py"))  # fmt: skip
    assert hook("pre-edit", "claude", edit, daemon.socket_path).stdout == ""
    pinned = subprocess.run(
        [COORD, "--project", elsewhere, "hook", "pre-edit", "--host", "claude"],
        input=edit, capture_output=True, text=True, timeout=30,
        env=hook_env(daemon.socket_path), check=False,
    )  # fmt: skip
    decision = json.loads(pinned.stdout)["hookSpecificOutput"]
    assert (
        decision["permissionDecision"] == "deny"
        and "someone" in decision["permissionDecisionReason"]
    )


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
            assert (last.type, last.agent, last.task.assignee) == ("task.assigned", AGENT_A, None)
        assert client.get(theirs.id).task.assignee == AGENT_B
        assert client.get(elsewhere.id).task.assignee == AGENT_A  # not this project's
        picked = [client.claim_next("someone-else").task for _ in range(2)]
        assert {t.id for t in picked if t is not None} == {held.id, waiting.id}
    assert "released 1 claim(s)" in ended.stderr and "unassigned 2 pending task(s)" in ended.stderr


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


def test_the_git_guard_checks_a_commit_of_more_paths_than_one_check_takes(
    daemon: DaemonProcess, repo: Path
) -> None:
    """A check takes at most 256 paths (PROTOCOL.md section 10): a 301-file commit is
    asked about in chunks, and the one reserved file among them still refuses it
    (issue 29, item 4: the oversized check was refused and taken for "daemon down")."""
    files = [f"src/f{index:03}.py" for index in range(300)] + ["src/auth/login.py"]
    for name in files:
        (repo / name).write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True)
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["src/auth/login.py"])
    refused = coord("hook", "pre-commit", "--agent", "intruder", socket=daemon.socket_path,
                    cwd=repo)  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert "src/auth/login.py" in refused.stderr and "holder" in refused.stderr
    assert "could not check" not in refused.stderr
    # The guard's own function, as the pre-edit hook calls it, chunks too.
    asked = {name: name for name in files}
    verdict = guard.check_board_paths(
        daemon.socket_path, asked, agent="intruder", project=str(repo), strict=False
    )
    assert not verdict.allowed and verdict.unreachable is None
    assert "src/auth/login.py" in verdict.reason


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
    assert closed.returncode == 0 and "released 1 claim(s)" in closed.stderr


def _nested(repo: Path, kind: str) -> Path:
    """A repository inside `repo`: a plain nested clone, or a registered submodule."""
    if kind == "nested":
        return git_repo(repo / "vendor" / "lib").resolve()
    source = git_repo(repo.parent / "sub-origin")
    subprocess.run(
        ["git", "-C", str(repo), "-c", "protocol.file.allow=always", "submodule", "add", "-q",
         str(source), "sub"],
        check=True, capture_output=True,
    )  # fmt: skip
    return (repo / "sub").resolve()


@pytest.mark.parametrize("kind", ["nested", "submodule"])
def test_a_nested_repositorys_files_are_checked_on_its_own_board(
    daemon: DaemonProcess, repo: Path, kind: str
) -> None:
    """A nested repository (or a submodule) is a project of its own: its files are
    asked about on its board, relative to its top. Before: relative to its top but on
    the outer board, so the outer `x.py` denied the nested `x.py` (a false deny) and
    the nested board's reservation of `y.py` was never seen (a false allow)."""
    inner = _nested(repo, kind)
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        a.reserve(["x.py"])  # the outer repository's x.py
    with Client(daemon.socket_path, agent=AGENT_A, project=str(inner)) as a:
        a.reserve(["y.py"])  # the nested repository's y.py

    def decide(file: Path) -> str:
        stdin = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE=str(file))
        done = hook("pre-edit", "claude", stdin, daemon.socket_path)
        assert done.returncode == 0, done.stderr
        if not done.stdout:
            return "allow"
        return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])

    assert decide(inner / "x.py") == "allow"
    assert decide(inner / "y.py") == "deny"
    assert decide(repo / "x.py") == "deny"
    assert decide(repo / "y.py") == "allow"


def test_a_nul_byte_in_a_hook_path_is_answered_not_a_traceback(
    daemon: DaemonProcess, repo: Path
) -> None:
    """Before: `ValueError: embedded null byte` and a traceback from the edit guard."""
    bad_file = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B,
                       FILE=str(repo / "src") + "/a\u0000b.py")  # fmt: skip
    done = hook("pre-edit", "claude", bad_file, daemon.socket_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "NUL" in decision["permissionDecisionReason"]
    bad_cwd = payload("claude-pre-edit", CWD=str(repo) + "\u0000x", SESSION=SESSION_B,
                      FILE="/etc/hosts")  # fmt: skip
    done = hook("pre-edit", "claude", bad_cwd, daemon.socket_path)
    assert (done.returncode, done.stdout) == (0, "") and "Traceback" not in done.stderr
