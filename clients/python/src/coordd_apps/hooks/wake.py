"""`coord hook wake`: wait, without polling, until a ready task is assigned to this agent.

Claude Code runs it on `Stop` with `asyncRewake`: it blocks in the
background while the tab is idle, and exiting 2 wakes the tab with the
message on stderr. It waits edge-triggered (`task.wait` with `after_seq`),
so a stale match never fires; a task already assigned and ready when it
starts wakes it at once unless this agent was told of it before
(`reported`). One waiter per agent: a new one stops the old, which exits 0. It also
exits 0 when its host process is gone (a closed tab leaves no waiter behind).
A daemon that goes away while it waits (a crash, a restart) does not end it:
it reaches the board again and waits on (`wake_link`).

A session nobody attends is never made to wait: `claude -p`, the SDK and CI
runs execute `asyncRewake` hooks in the foreground (there is no idle prompt
to return to), so a waiter there would hold the run open for the whole wait.
Claude Code says which sessions those are in the environment of every hook:
`CLAUDE_CODE_SESSION_ATTENDED=0` (checked on 2.1.332; interactive tabs get
1), and, for older versions, `CLAUDE_CODE_ENTRYPOINT=sdk-*` (`sdk-cli` for
`claude -p`, `sdk-ts` and `sdk-py` for the SDKs; interactive: `cli`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from coordd_apps.hooks import reported, wake_link
from coordd_client import tabs
from coordd_client.client import WAIT_SLACK_S, Client
from coordd_client.methods import wait
from coordd_client.rpc import unwrap
from coordd_wire.errors import ShuttingDown
from coordd_wire.method_table import call
from coordd_wire.paths import state_dir
from coordd_wire.server_info import ServerInfo
from coordd_wire.wire import Task, WaitResult

#: A wait asks the daemon for at most this long at a time (chained by seq); between
#: two asks the waiter checks that its host process is still there (so it leaves within
#: this long of its tab; one edge-triggered call every few seconds costs an idle tab little).
WAIT_CHUNK_S = 5.0
ATTENDED_ENV = "CLAUDE_CODE_SESSION_ATTENDED"
ENTRYPOINT_ENV = "CLAUDE_CODE_ENTRYPOINT"


def unattended(environ: Mapping[str, str] | None = None) -> str | None:
    """Why nobody would be woken (the run is headless), or None for an attended tab."""
    env = os.environ if environ is None else environ
    if env.get(ATTENDED_ENV) == "0":
        return f"${ATTENDED_ENV}=0 (claude -p, the SDK or CI): the run ends at its last turn"
    if env.get(ENTRYPOINT_ENV, "").startswith("sdk-"):
        return f"${ENTRYPOINT_ENV}={env[ENTRYPOINT_ENV]}: a headless run ends at its last turn"
    return None


def _pid_file(agent: str) -> Path:
    return state_dir() / "wake" / f"{hashlib.sha1(agent.encode()).hexdigest()[:16]}.pid"


def _is_waiter(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        # No /proc (macOS): trust the pid file, which only waiters write.
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    return b"hook" in cmdline and b"wake" in cmdline


def take_over(agent: str) -> Path:
    """Stop the agent's earlier waiter, if one runs, and record this one."""
    path = _pid_file(agent)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError, ValueError):
        old = int(path.read_text())
        if old != os.getpid() and _is_waiter(old):
            os.kill(old, signal.SIGTERM)
    path.write_text(str(os.getpid()))
    return path


def _stop_quietly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


class _Cursor:
    """Where the waiter's edge-triggered `task.wait` goes on from: the last event seen."""

    def __init__(self) -> None:
        self.seq: int | None = None


def wait_for_assignment(
    socket: os.PathLike[str] | str,
    agent: str,
    project: str,
    max_wait_s: float,
    *,
    autostart: bool = False,
    derived: bool = False,
) -> str | None:
    """The wake-up message, or None when the time ran out (or the waiter was replaced).

    It wakes on a ready task assigned to the agent, and (1.2, feature `messages`) on a
    message to it: `task.wait` and `message.wait` are both kept open on one connection,
    and whichever answers with something first wakes the tab. Messages unread when it
    starts wake it at once (one that arrived while the tab was being woken, say), and
    the messages it shows are acknowledged, so no other hook repeats them.

    It outlives the daemon (`wake_link`): when the connection drops, it connects again
    (starting a daemon if `autostart`; `derived`: the socket was not asked for) and goes
    on from the last event it saw, after looking again at what is assigned and unread,
    so nothing that arrived around the restart is missed.
    """
    signal.signal(signal.SIGTERM, _stop_quietly)
    pid_file = take_over(agent)
    host = tabs.host_process()
    deadline = time.monotonic() + max_wait_s
    link = wake_link.Link(
        Path(socket), autostart=autostart, derived=derived, host=host, deadline=deadline
    )
    told = reported.reported(agent)
    cursor = _Cursor()
    try:
        while True:
            opened = link.open()
            if opened is None:
                return None
            client, info = opened
            try:
                with client:
                    return _wait_on(
                        client, info, agent, project, told=told, cursor=cursor, link=link
                    )
            except wake_link.GONE:
                continue  # the daemon went: reach it again, and go on from `cursor`
    finally:
        with contextlib.suppress(OSError, ValueError):
            if int(pid_file.read_text()) == os.getpid():
                pid_file.unlink()


def _wait_on(
    client: Client,
    info: ServerInfo,
    agent: str,
    project: str,
    *,
    told: list[str],
    cursor: _Cursor,
    link: wake_link.Link,
) -> str | None:
    """One connection's part of the wait: what is already there, then the wait itself."""
    talks = "messages" in info.features
    # Edge-triggered from the last event seen; a store older than that (restored from a
    # copy) starts from its own newest. What is assigned now is looked at once.
    seq = info.last_seq if cursor.seq is None else min(cursor.seq, info.last_seq)
    cursor.seq = seq
    waiting = client.list_tasks(
        project=project, state="pending", assignee=agent, ready=True, limit=1000
    ).tasks
    fresh = next((t for t in waiting if not reported.was_reported(agent, t, told)), None)
    if fresh is None and talks:
        unread = reported.take_unread(client, agent)
        if unread:
            return unread
    woken: Task | str | None = fresh
    if fresh is None:
        woken = _wait_for_either(client, agent, project, told=told, cursor=cursor, link=link,
                                 talks=talks)  # fmt: skip
    if woken is None or isinstance(woken, str):
        return woken
    reported.remember(agent, [woken])
    return _message(client, woken, agent)


def _wait_for_either(
    client: Client,
    agent: str,
    project: str,
    *,
    told: list[str],
    cursor: _Cursor,
    link: wake_link.Link,
    talks: bool,
) -> Task | str | None:
    """The first fresh assignment (a Task) or message (its context text), or None."""

    def chunk() -> float:
        return max(0.0, min(link.deadline - time.monotonic(), WAIT_CHUNK_S))

    def ask_task() -> int:
        after = cursor.seq
        return client.pipeline(
            wait(timeout_s=chunk(), project=project, assignee=agent, ready=True, after_seq=after)
        )

    def ask_messages() -> int | None:
        if not talks:
            return None
        # The table's entry, not `methods_messages`' builder: a hook loads few modules.
        return client.pipeline(call("message.wait", {"agent": agent, "timeout_s": chunk()}))

    task_call, message_call = ask_task(), ask_messages()
    while True:
        # Every wait is answered within its chunk: silence past that is a daemon that
        # hangs or a connection that died without a word, met as a daemon gone.
        response = client.next_frame(time.monotonic() + WAIT_CHUNK_S + WAIT_SLACK_S)
        if response.id == task_call:
            found = unwrap(response, WaitResult)
            cursor.seq = found.seq
            if found.task is not None and not reported.was_reported(agent, found.task, told):
                return found.task
        elif message_call is not None and response.id == message_call:
            if response.error is not None and response.error.get("code") == ShuttingDown.code:
                raise ShuttingDown("the daemon is stopping")  # met as the daemon gone
            # Read again as it acks: another hook may have shown them meanwhile.
            text = ""
            if response.error is None and reported.holds_messages(response.result):
                text = reported.take_unread(client, agent)
            if text:
                return text
        else:
            continue  # a notification, or an answer nobody waits for
        if link.over():
            return None
        if response.id == task_call:
            task_call = ask_task()
        else:
            message_call = ask_messages()


def _message(client: Client, task: Task, agent: str) -> str:
    by = task.created_by
    for event in reversed(client.events_since(task_id=task.id).events):
        if (
            event.task is not None
            and event.task.assignee == agent
            and event.type
            in (
                "task.assigned",
                "task.released",
                "task.posted",
            )
        ):
            by = event.agent or by
            break
    who = f" by {by}" if by else ""
    return (
        f"coord: #{task.id} '{task.title[:120]}' was assigned to you{who};"
        f" claim it with claim_task (id {task.id}) or `coord claim {task.id}`"
    )
