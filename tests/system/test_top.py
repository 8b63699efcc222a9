"""`coord top` in Textual's own harness (`App.run_test` and its pilot), against a real
daemon: it fills, follows other processes' changes without a key press, acts, survives
a daemon restart without a gap, and applies a burst in a bounded number of redraws.

Textual runs on asyncio, so each test drives its own `asyncio.run` (the suite's
async tests run under trio).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Label, RichLog, Static, TabbedContent
from top_pilot import until

from coordd_apps.tui import demo
from coordd_apps.tui.app import Confirm, Detail, TopApp
from coordd_client import Client, LeaseLost, presence
from coordd_wire.wire import AgentInfo, Task
from support import DaemonProcess, coord

PROJECT = "/top"


def run(app: TopApp, scenario: Callable[[TopApp, object], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await scenario(app, pilot)

    asyncio.run(main())


def board(app: TopApp) -> DataTable[object]:
    return app.query_one("#board", DataTable)


def cell(app: TopApp, task_id: int, column: str) -> str:
    return str(board(app).get_cell(str(task_id), column))


def test_the_board_fills_and_follows_other_processes(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="poster", project=PROJECT) as client:
        first = client.post("first task", priority=3).task
        second = client.post("second task", depends_on=[first.id]).task

        board_id = client.server_info().board_id

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: board(app).row_count == 2, pilot)
        assert cell(app, second.id, "STATE") == "blocked"  # a word, not only a colour
        # Which board this is, as every surface names it (issue 43).
        await until(lambda: f"board {board_id}" in app.sub_title, pilot)
        presses_before = app.redraws
        coord("claim", str(first.id), "--agent", "codex-3", socket=daemon.socket_path)
        await until(lambda: cell(app, first.id, "WHO") == "codex-3", pilot)
        assert cell(app, first.id, "STATE") == "claimed" and ":" in cell(app, first.id, "LEASE")
        coord("done", str(first.id), "--agent", "codex-3", socket=daemon.socket_path)
        # Done: the row stays, saying so, until the filter changes (what just happened).
        await until(lambda: cell(app, first.id, "STATE") == "done", pilot)
        await until(lambda: cell(app, second.id, "STATE") == "pending", pilot)  # unblocked
        assert app.redraws > presses_before
        feed = app.query_one("#feed", RichLog)
        assert any("completed" in str(line) for line in feed.lines)

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_the_feed_shows_every_kind_of_event(daemon: DaemonProcess) -> None:
    """Not only task events (issue 47 item 7): a slot grant, a message and a landing
    queued reach the feed as they happen."""

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: app.follower.status == "live", pilot)
        with Client(daemon.socket_path, agent="codex-3", project=PROJECT) as client:
            client.acquire_slot("migrations")
            client.send_message("deploy at five", to="human-test")
            client.enqueue_landing("feature-x", "main", ["src/a.py"])
        feed = app.query_one("#feed", RichLog)
        wanted = ("slot.granted", "message.sent", "land.queued")
        await until(lambda: all(any(w in str(x) for x in feed.lines) for w in wanted), pilot)
        line = next(str(x) for x in feed.lines if "message.sent" in str(x))
        assert "codex-3" in line and "deploy at five" in line

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_an_expiry_appears_without_a_key_press(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="w", project=PROJECT) as client:
        task = client.post("short lease").task
        client.claim(task.id, lease_s=1)

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: board(app).row_count == 1, pilot)
        await until(lambda: cell(app, task.id, "STATE") == "pending", pilot)

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_actions_change_the_daemon_as_the_human(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="w", project=PROJECT) as client:
        task = client.post("to cancel").task

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: board(app).row_count == 1, pilot)
        await pilot.press("p")  # type: ignore[attr-defined]
        await pilot.press(*"posted by a human")  # type: ignore[attr-defined]
        await pilot.press("enter")  # type: ignore[attr-defined]
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: board(app).row_count == 2, pilot)
        board(app).move_cursor(row=board(app).get_row_index(str(task.id)))
        await pilot.press("c", "y")  # type: ignore[attr-defined]
        await until(lambda: cell(app, task.id, "STATE") == "cancelled", pilot)
        await pilot.press("f")  # type: ignore[attr-defined]  # the next state filter: all
        await pilot.press("f", "f", "f", "f")  # type: ignore[attr-defined]  # back to open
        # The keys are handled; the table is redrawn after them: wait for it (only the
        # human's pending task is open).
        await until(
            lambda: str(task.id) not in board(app).rows and board(app).row_count == 1, pilot
        )

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)
    with Client(daemon.socket_path) as client:
        assert client.get(task.id).task.state == "cancelled"
        posted = client.list_tasks(project=PROJECT, state="pending").tasks
        assert [(t.title, t.created_by) for t in posted] == [("posted by a human", "human-test")]
        events = client.events_since(task_id=task.id).events
        assert events[-1].type == "task.cancelled" and events[-1].agent == "human-test"


def test_the_feed_resumes_without_a_gap_after_a_restart(daemon: DaemonProcess) -> None:
    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: app.follower.status == "live", pilot)
        coord("post", "before", "--project", PROJECT, socket=daemon.socket_path)
        await until(lambda: board(app).row_count == 1, pilot)
        await asyncio.to_thread(daemon.stop)
        await until(lambda: app.follower.status == "reconnecting", pilot)
        await asyncio.to_thread(daemon.start)
        coord("post", "after", "--project", PROJECT, socket=daemon.socket_path)
        await until(lambda: board(app).row_count == 2, pilot)
        assert app.follower.status == "live"
        seqs = [e.seq for e in app.model.feed]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # gap-free

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_ten_thousand_tasks_and_a_burst_in_few_redraws(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="bulk", project=PROJECT) as client:
        for n in range(10_000):
            client.post(f"bulk {n}")

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: board(app).row_count == 10_000, pilot, timeout_s=300)
        before = app.redraws
        burst = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", BURST, str(daemon.socket_path)],
            check=True,
            timeout=120,
        )
        assert burst.returncode == 0
        await until(lambda: app.model.counts()["claimed"] == 1000, pilot, timeout_s=300)
        frames = app.redraws - before
        assert 1 <= frames <= 200, frames  # batched per frame, not one redraw per event

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


#: 1,000 claims from another process, as fast as it can.
BURST = """
import sys
from coordd_client import Client
with Client(sys.argv[1], agent="burst") as client:
    for task_id in range(1, 1001):
        client.claim(task_id)
"""


#: Board text that Rich would read as markup: a closing tag with nothing open (raised
#: MarkupError in every redraw, so `coord top` crashed at start), a link, a restyle.
MARKUP_TITLES = (
    "Handle [/api/v1] prefix",
    "[link=https://evil.example]click[/link] me",
    "[bold red on white]loud[/] and [reverse]hidden",
)
MARKUP_AGENT = "[/]x"


def test_agents_text_is_shown_as_text_never_as_markup(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent=MARKUP_AGENT, project=PROJECT) as client:
        tasks = [client.post(title, kind="task").task for title in MARKUP_TITLES]
        client.claim(tasks[0].id)
        client.reserve(["docs/[ab]*.md"])

    def shown(value: object) -> tuple[str, list[object]]:
        assert isinstance(value, Text), value
        return value.plain, list(value.spans)

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: board(app).row_count == len(tasks), pilot)
        for task in tasks:
            assert shown(board(app).get_cell(str(task.id), "TITLE")) == (task.title, [])
        assert shown(board(app).get_cell(str(tasks[0].id), "WHO")) == (MARKUP_AGENT, [])
        agents = app.query_one("#agents", DataTable)
        await until(lambda: agents.row_count == 1, pilot)
        assert shown(agents.get_row_at(0)[0]) == (MARKUP_AGENT, [])
        reserved = app.query_one("#reservations", DataTable).get_row_at(0)
        assert [shown(c)[0] for c in reserved[1:3]] == ["docs/[ab]*.md", MARKUP_AGENT]
        # The feed, live: a change by the same agent while the app runs.
        coord("release", str(tasks[0].id), "--agent", MARKUP_AGENT, socket=daemon.socket_path)
        feed = app.query_one("#feed", RichLog)
        await until(lambda: any("task.released" in str(line) for line in feed.lines), pilot)
        line = next(str(line) for line in feed.lines if "task.released" in str(line))
        assert MARKUP_AGENT in line and MARKUP_TITLES[0] in line
        # The status line, with a search for text that is markup too.
        await pilot.press("slash", *"[/]", "enter")  # type: ignore[attr-defined]
        await until(lambda: 'search: "[/]"' in str(app.query_one("#counts").render()), pilot)
        await pilot.press("slash", "enter")  # type: ignore[attr-defined]
        # The detail view and its history, and a dialog quoting the title.
        board(app).move_cursor(row=board(app).get_row_index(str(tasks[1].id)))
        await pilot.press("enter")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Detail), pilot)
        detail = str(app.screen.query_one(Static).render())
        assert MARKUP_TITLES[1] in detail and MARKUP_AGENT in detail
        await pilot.press("escape")  # type: ignore[attr-defined]
        await pilot.press("c")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        question = str(app.screen.query(Label).first().render())
        assert "[link=https://evil.example]click[/link]" in question
        await pilot.press("n")  # type: ignore[attr-defined]

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_x_releases_the_selected_agents_holdings_after_a_confirmation(
    daemon: DaemonProcess,
) -> None:
    dead = "codex-mcp-client-4242-1a2b"
    with Client(daemon.socket_path, agent=dead, project=PROJECT) as client:
        task = client.post("held by a crashed tab").task
        held = client.claim(task.id).task
        client.reserve(["src/**"])

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: cell(app, task.id, "WHO") == dead, pilot)
        await pilot.press("x", "n")  # type: ignore[attr-defined]  # no: nothing happens
        await pilot.pause(0.3)  # type: ignore[attr-defined]
        assert cell(app, task.id, "WHO") == dead
        agents = app.query_one("#agents", DataTable)
        await until(lambda: agents.row_count == 1, pilot)
        app.query_one(TabbedContent).active = "tab-agents"
        await pilot.press("x")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        assert dead in str(app.screen.query(Label).first().render())
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: cell(app, task.id, "STATE") == "pending", pilot)

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)
    with Client(daemon.socket_path, agent=dead) as client:
        last = client.events_since(task_id=task.id).events[-1]
        assert (last.type, last.agent, last.of) == ("task.released", "human-test", dead)
        assert client.reservations(agent=dead).reservations == []
        with pytest.raises(LeaseLost):
            client.complete(task.id, fence=held.fence)


class Clock:
    """The app's clock: the wall's, moved on by a test."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead


def test_age_ticks_with_the_clock_alone(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="w", project=PROJECT) as client:
        task = client.post("sits there").task
    clock = Clock()

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: cell(app, task.id, "AGE").endswith("s"), pilot)
        last_seq = app.model.last_seq
        clock.ahead = timedelta(minutes=3)
        await until(lambda: cell(app, task.id, "AGE") == "3m", pilot)
        clock.ahead = timedelta(hours=2)
        await until(lambda: cell(app, task.id, "AGE") == "2h", pilot)
        assert app.model.last_seq == last_seq  # no event moved it: the tick did

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test", clock=clock), scenario)


def test_blocked_by_follows_each_dependency_from_its_completion_event_alone(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, agent="w", project=PROJECT) as client:
        first = client.post("first").task
        second = client.post("second").task
        dependent = client.post("after both", depends_on=[first.id, second.id]).task

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: cell(app, dependent.id, "BLOCKED BY") == f"#{first.id},#{second.id}",
                    pilot)  # fmt: skip

        def finish(task: Task) -> None:
            coord("claim", str(task.id), "--agent", "w", socket=daemon.socket_path)
            coord("done", str(task.id), "--agent", "w", socket=daemon.socket_path)

        # #second done: no event names the dependent (it is still blocked by #first),
        # and yet its cell drops #second.
        finish(second)
        await until(lambda: cell(app, dependent.id, "BLOCKED BY") == f"#{first.id}", pilot)
        assert cell(app, dependent.id, "STATE") == "blocked"
        # #first done: its last open dependency (task.unblocked), and it is ready.
        finish(first)
        await until(lambda: cell(app, dependent.id, "BLOCKED BY") == "", pilot)
        assert cell(app, dependent.id, "STATE") == "pending"
        coord("reopen", str(second.id), "--agent", "w", socket=daemon.socket_path)
        await until(lambda: cell(app, dependent.id, "BLOCKED BY") == f"#{second.id}", pilot)
        assert cell(app, dependent.id, "STATE") == "blocked"

    app = TopApp(daemon.socket_path, PROJECT, agent="human-test")
    reads = 0
    load = app.follower._load

    def counted() -> int:
        nonlocal reads
        reads += 1
        return load()

    app.follower._load = counted  # type: ignore[method-assign]
    run(app, scenario)
    assert reads == 1  # the board was read once, at the start: the rest came from events


def test_the_agents_pane_shows_this_projects_agents_seen_lately(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="holder", project=PROJECT) as client:
        client.claim(client.post("held").task.id)
    with Client(daemon.socket_path, agent="here", project=PROJECT) as client:
        client.post("posted here")
    with Client(daemon.socket_path, agent="elsewhere", project="/elsewhere") as client:
        client.post("posted elsewhere")
    clock = Clock()

    def names(app: TopApp) -> list[str]:
        return sorted(a.agent for a in app._agents)

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: names(app) == ["here", "holder"], pilot)
        assert app.query_one("#agents", DataTable).row_count == 2
        clock.ahead = presence.HORIZON + timedelta(minutes=1)
        # "here" has not been seen for longer than the horizon; "holder" holds a claim.
        await until(lambda: names(app) == ["holder"], pilot)

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test", clock=clock), scenario)


def test_prime_lists_this_projects_agents_seen_lately(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="here", project=PROJECT) as client:
        client.post("posted here")
    with Client(daemon.socket_path, agent="reserver", project=PROJECT) as client:
        client.reserve(["src/**"])
    with Client(daemon.socket_path, agent="elsewhere", project="/elsewhere") as client:
        client.post("posted elsewhere")
    text = coord("prime", "--agent", "me", "--project", PROJECT,
                 socket=daemon.socket_path).stdout  # fmt: skip
    others = text.split("Other agents:\n")[1].splitlines()
    listed = [line.split(":")[0].strip() for line in others if line.startswith("  ")]
    assert listed == ["here", "reserver"], text


def test_presence_keeps_holders_and_drops_the_long_gone() -> None:
    now = demo.NOW

    def seen(name: str, minutes_ago: float) -> AgentInfo:
        moment = now - timedelta(minutes=minutes_ago)
        return AgentInfo(agent=name, last_seen=moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), holding=0)

    agents = [seen("fresh", 1), seen("gone", 16), seen("holds", 600), seen("other", 1)]
    kept = presence.scoped(agents, now, holders={"holds"}, involved={"fresh", "gone", "holds"})
    assert [a.agent for a in kept] == ["fresh", "holds"]
    every = presence.scoped(agents, now, holders=set(), involved=None)  # every project
    assert [a.agent for a in every] == ["fresh", "other"]


def test_the_clock_tick_waits_while_the_board_is_gone() -> None:
    """The age tick fired while the app was closing (its widgets gone) and raised
    NoMatches out of `coord top` on a loaded machine: a timer finds no board, and waits."""
    app = TopApp(Path("/nonexistent"), PROJECT, agent="human-test", follow=False)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.query_one("#board", DataTable).remove()
            # Two ticks and many frames with no board: a timer that raised would end the
            # app with its exception, which run_test raises here.
            await pilot.pause(2.5)
        assert app.return_code in (None, 0)

    asyncio.run(main())
