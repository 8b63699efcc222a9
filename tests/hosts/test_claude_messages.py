"""Real Claude Code (tests/hosts/package.json) woken by a message (issue 34): an idle tab's
`Stop` waiter wakes it when another agent messages it, and the model's next request
carries the message; the turn after that, nothing is delivered twice.

What each side sees of the wake (issue 47 item 6, docs/HOSTS.md "What the model sees"):
the user, only the hook's fixed `rewakeSummary` (Claude Code 2.1.332 reads one from the
hook's output for official-marketplace plugins only); the model, a task notification
with that summary and, in a nested system reminder, the `rewakeMessage` and the hook's
stderr. Claude Code escapes the nested reminder's closing tag (`&lt;/system-reminder&gt;`)
itself: no coord text carries a tag."""

from __future__ import annotations

from coordd_apps.setup.hosts import WAKE_MESSAGE, WAKE_SUMMARY
from coordd_client import Client
from hosts.fake_anthropic import FakeAnthropic, Say, Step
from hosts.test_claude import (
    RUN_TIMEOUT_S,
    Tmux,
    _eventually,
    approve_api_key,
    set_up,
    told_agent,
)
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
            # The shape 2.1.332 gives it, exactly as the model receives it.
            notice = (
                f"<task-notification>\n<summary>{WAKE_SUMMARY}</summary>\n"
                "</task-notification>\n<system-reminder>\n"
                f"{WAKE_MESSAGE} coord: 1 new message #{sent.id} from codex-3:"
                " please review #7 before you merge\n&lt;/system-reminder&gt;\n"
                "</system-reminder>"
            )
            assert any(notice in text for text in _user_texts(api, 1)), _user_texts(api, 1)
            # The user sees the summary only, shown as coord's (not "Stop hook feedback").
            assert _eventually(lambda: WAKE_SUMMARY in tab.screen()), tab.screen()
            assert "Stop hook feedback" not in tab.screen()
            # Delivered once: the next prompt's hooks add nothing about it again.
            tab.type("anything new?")
            assert api.wait_for_main_requests(3, RUN_TIMEOUT_S), tab.screen()
            later = api.main_requests()[2].text()
            assert later.count("please review #7 before you merge") == woken.count(
                "please review #7 before you merge"
            )
        finally:
            tab.close()


def _user_texts(api: FakeAnthropic, index: int) -> list[str]:
    """The text blocks of the user messages in the `index`th main-loop request."""
    texts: list[str] = []
    for message in api.main_requests()[index].body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            texts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return texts
