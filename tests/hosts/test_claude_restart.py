"""Real Claude Code (tests/hosts/package.json): an idle tab stays wakeable across a daemon
crash. Its `Stop` waiter is waiting when the daemon is killed (`kill -9`); the waiter
starts the daemon again (autostart, on the store the socket served) and waits on it,
and a message sent then starts the tab's next turn: the model's next request has it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from coordd_client import Client
from hosts.fake_anthropic import FakeAnthropic, Say, Step
from hosts.test_claude import RUN_TIMEOUT_S, Tmux, approve_api_key, set_up, told_agent
from hosts.world import World
from support import server_info_or_none


def waited_on(socket: Path, tab: Tmux, *, not_pid: int = 0) -> int:
    """Block until a daemon other than `not_pid` answers on `socket` with the tab's
    waits (`task.wait`, `message.wait`) open on it; that daemon's pid."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        info = server_info_or_none(socket)
        waits = info is not None and info.waiters >= 1 and info.message_waiters >= 1
        if info is not None and waits and info.pid != not_pid:
            return info.pid
        assert time.monotonic() < deadline, (info, tab.screen())
        time.sleep(0.1)


def test_an_idle_tab_is_woken_by_a_message_sent_after_the_daemon_was_killed(
    world: World,
) -> None:
    set_up(world)
    approve_api_key(world)
    socket = world.daemon.socket_path
    steps: list[Step] = [Say("ready"), Say("on it")]
    restarted = 0
    with FakeAnthropic(steps) as api:
        flags = ("--permission-mode", "acceptEdits", "--allowedTools", "mcp__coord")
        tab = Tmux(world, api, *flags, "--", "wait for the others")
        try:
            assert api.wait_for_main_requests(1, RUN_TIMEOUT_S), tab.screen()
            agent = told_agent(api)
            first = waited_on(socket, tab)
            world.daemon.kill()  # a crash: no drain, no goodbye on the connection
            restarted = waited_on(socket, tab, not_pid=first)
            with Client(socket, agent="codex-3", project=str(world.repo)) as sender:
                sent = sender.send_message("the API moved to v2", to=agent).message
            assert api.wait_for_main_requests(2, RUN_TIMEOUT_S), tab.screen()
            woken = api.main_requests()[1].text()
            assert f"#{sent.id} from codex-3" in woken
            assert "the API moved to v2" in woken
        finally:
            tab.close()
            if restarted:
                os.kill(restarted, signal.SIGTERM)
