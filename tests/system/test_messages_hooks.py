"""Messages reach a tab through its hosts' hooks (issue 34): once in the turn's context,
in the session-start context, on a Cursor chat's stop, in the pre-edit deny's advice,
and as a wake-up of an idle Claude Code tab (a second message sent while it wakes is
kept for the next hook, not lost); and the `coord msg/inbox/request/answer` workflow."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from hook_runs import AGENT_A, SESSION_A, hook, hook_env, payload, start_wake

from coordd_client import Client
from coordd_client.identity import host_agent
from support import COORD, DaemonProcess, RawConnection, coord, git_repo, run_as_new_tab


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = git_repo(workdir / "repo").resolve()
    (path / "src" / "auth").mkdir(parents=True)
    return path


def turn_payload(repo: Path, event: str) -> str:
    return json.dumps(
        {"session_id": SESSION_A, "cwd": str(repo), "hook_event_name": event, "tool_name": "Bash"}
    )


def deliver(daemon: DaemonProcess, repo: Path, event: str = "PostToolUse") -> str:
    done = hook("deliver", "claude", turn_payload(repo, event), daemon.socket_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def send(daemon: DaemonProcess, repo: Path, body: str, sender: str = "codex-3") -> int:
    with Client(daemon.socket_path, agent=sender, project=str(repo)) as client:
        return client.send_message(body, to=AGENT_A).message.id


def test_a_message_is_added_to_the_turns_context_once(daemon: DaemonProcess, repo: Path) -> None:
    assert deliver(daemon, repo) == ""  # nothing unread: nothing printed
    sent = send(daemon, repo, "I need src/auth/** after #42")
    first = json.loads(deliver(daemon, repo))["hookSpecificOutput"]
    assert first["hookEventName"] == "PostToolUse"
    assert first["additionalContext"] == (
        f"coord: 1 new message #{sent} from codex-3: I need src/auth/** after #42"
    )
    assert deliver(daemon, repo) == ""  # shown once
    send(daemon, repo, "and a second thought")
    prompt = json.loads(deliver(daemon, repo, "UserPromptSubmit"))["hookSpecificOutput"]
    assert prompt["hookEventName"] == "UserPromptSubmit"
    assert "and a second thought" in prompt["additionalContext"]


def test_a_cursor_chat_gets_its_messages_as_the_follow_up(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent="lead", project=str(repo)) as client:
        client.send_message("review #7 next", to="cursor-chat")
    stop = json.dumps({"conversation_id": "c1", "workspace_roots": [str(repo)]})
    argv = [COORD, "hook", "deliver", "--host", "cursor", "--agent", "cursor-chat"]
    done = run_as_new_tab(argv, env=hook_env(daemon.socket_path), stdin=stop)
    assert "review #7 next" in json.loads(done.stdout)["followup_message"]
    again = run_as_new_tab(argv, env=hook_env(daemon.socket_path), stdin=stop)
    assert json.loads(again.stdout) == {}


def test_unread_messages_open_the_session_start_context_once(
    daemon: DaemonProcess, repo: Path
) -> None:
    start = payload("claude-session-start", CWD=str(repo))
    agent = host_agent("claude", json.loads(start)["session_id"])
    with Client(daemon.socket_path, agent="codex-3", project=str(repo)) as client:
        client.send_message("welcome back: #12 is yours", to=agent)
    done = hook("session-start", "claude", start, daemon.socket_path)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "welcome back: #12 is yours" in context
    again = hook("session-start", "claude", start, daemon.socket_path)
    assert "welcome back" not in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_pre_edit_deny_names_the_holder_and_how_to_ask(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, agent="codex-3", project=str(repo)) as holder:
        holder.reserve(["src/auth/**"])
    edit = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_A,
                   FILE=str(repo / "src" / "auth" / "login.py"))  # fmt: skip
    done = hook("pre-edit", "claude", edit, daemon.socket_path)
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "by codex-3" in reason
    assert "request_release" in reason and "coord request 'src/auth/**'" in reason


def message_waiters(daemon: DaemonProcess) -> int:
    conn = RawConnection(daemon.socket_path)
    try:
        return int(conn.call("server.info")["result"]["message_waiters"])
    finally:
        conn.close()


def test_a_message_wakes_an_idle_tab_and_a_second_one_is_not_lost(
    daemon: DaemonProcess, repo: Path
) -> None:
    waiter = start_wake(daemon.socket_path, repo, SESSION_A)
    try:
        deadline = time.monotonic() + 30
        while message_waiters(daemon) < 1:
            assert time.monotonic() < deadline and waiter.poll() is None
        started = time.monotonic()
        first = send(daemon, repo, "can you take #9?")
        second = send(daemon, repo, "also #10", sender="claude-7")
        _, stderr = waiter.communicate(timeout=30)
        # Woken by the message, not by a timeout (60 s): a bound only a missed wake crosses.
        assert waiter.returncode == 2 and time.monotonic() - started < 30
        assert f"#{first} from codex-3" in stderr
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)
    # Whatever the wake did not show is shown by the next hook, and nothing twice.
    later = deliver(daemon, repo)
    shown = stderr + later
    assert shown.count("can you take #9?") == 1
    assert shown.count("also #10") == 1 and f"#{second}" in shown


def test_ask_answer_hand_over_from_the_shell(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["src/auth/**"])
    env = {"COORD_PROJECT": str(repo)}
    asking = subprocess.Popen(
        [COORD, "request", "src/auth/**", "--why", "for #42", "--wait", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hook_env(daemon.socket_path, COORD_AGENT="asker", **env),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            inbox = coord("inbox", "--json", "--agent", "holder", socket=daemon.socket_path,
                          env=env)  # fmt: skip
            if inbox.returncode == 0:
                break
            assert time.monotonic() < deadline and asking.poll() is None, asking.stderr
        (request,) = json.loads(inbox.stdout)["messages"]
        assert request["kind"] == "request" and request["body"] == "for #42"
        answered = coord("answer", str(request["id"]), "approve", "--agent", "holder",
                         socket=daemon.socket_path, env=env)  # fmt: skip
        assert answered.returncode == 0, answered.stderr
        out, err = asking.communicate(timeout=30)
        assert asking.returncode == 0, err
        assert "approved: src/auth/** is yours now" in out
    finally:
        if asking.poll() is None:
            asking.kill()
            asking.communicate(timeout=10)
    with Client(daemon.socket_path, project=str(repo)) as client:
        held = client.reservations(project=str(repo)).reservations
        assert [(r.agent, r.pattern) for r in held] == [("asker", "src/auth/**")]
    sent = coord("msg", "thanks", "--to", "holder", "--agent", "asker",
                 socket=daemon.socket_path, env=env)  # fmt: skip
    assert sent.returncode == 0 and "to holder" in sent.stdout


def test_a_request_nobody_answers_says_it_expired(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["docs/**"])
    asked = coord("request", "docs/**", "--ttl", "1", "--wait", "60", "--agent", "asker",
                  socket=daemon.socket_path, env={"COORD_PROJECT": str(repo)})  # fmt: skip
    assert asked.returncode == 2, asked.stderr  # no answer: the timeout's exit status
    assert "expired unanswered" in asked.stdout, asked.stdout


def test_the_humans_message_comes_first_and_says_it_outranks(
    daemon: DaemonProcess, repo: Path
) -> None:
    """Issue 47, matching mcp_agent_mail's Human Overseer: a person's message reaches the
    tab marked as the human's, before another agent's sent earlier, with the line that
    puts it before the tab's own task (docs/WATCHING.md, "What the human is given")."""
    from coordd_apps.wording.render_messages import HUMAN_FIRST

    agents = send(daemon, repo, "src/auth is mine until #42")
    person = send(daemon, repo, "stop the migration and revert it", sender="human-ada")
    context = json.loads(deliver(daemon, repo))["hookSpecificOutput"]["additionalContext"]
    assert context.splitlines() == [
        "coord: 2 new messages (reply: coord msg --reply ID):",
        f"  #{person} from human-ada (the human): stop the migration and revert it",
        f"  #{agents} from codex-3: src/auth is mine until #42",
        HUMAN_FIRST,
    ]
