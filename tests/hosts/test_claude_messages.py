"""Real Claude Code (tests/hosts/package.json) woken by a message (issue 34): an idle tab's
`Stop` waiter wakes it when another agent messages it, and the model's next request
carries the message; the turn after that, nothing is delivered twice."""

from __future__ import annotations

from coordd_client import Client
from hosts.fake_anthropic import FakeAnthropic, Say, Step
from hosts.test_claude import RUN_TIMEOUT_S, Tmux, approve_api_key, set_up, told_agent
from hosts.world import World


def test_an_idle_tab_is_woken_by_a_message_and_its_next_request_has_it(world: World) -> None:
    set_up(world)
    approve_api_key(world)
    steps: list[Step] = [Say("ready"), Say("on it"), Say("done")]
    with FakeAnthropic(steps) as api:
        flags = ("--permission-mode", "acceptEdits", "--allowedTools", "mcp__coord")
        tab = Tmux(world, api, *flags, "--", "wait for the others")
        try:
            assert api.wait_for_main_requests(1, RUN_TIMEOUT_S), tab.screen()
            agent = told_agent(api)
            with Client(world.daemon.socket_path, agent="codex-3", project=str(world.repo)) as c:
                sent = c.send_message("please review #7 before you merge", to=agent).message
            # The message alone starts a turn, and the model is told it, naming the sender.
            assert api.wait_for_main_requests(2, RUN_TIMEOUT_S), tab.screen()
            woken = api.main_requests()[1].text()
            assert f"#{sent.id} from codex-3" in woken
            assert "please review #7 before you merge" in woken
            # Delivered once: the next prompt's hooks add nothing about it again.
            tab.type("anything new?")
            assert api.wait_for_main_requests(3, RUN_TIMEOUT_S), tab.screen()
            later = api.main_requests()[2].text()
            assert later.count("please review #7 before you merge") == woken.count(
                "please review #7 before you merge"
            )
        finally:
            tab.close()
