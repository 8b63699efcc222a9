"""`coord top`'s cost so far (issue 48) against a real daemon: usage reported through
`usage.report` for a claimed task shows, summed, in the board's COST column, the
Agents pane and the status line, as it arrives and without a key press; a budget's
mark at 80% and 100%."""

from __future__ import annotations

import asyncio

from rich.text import Text
from test_cost_out import usage
from test_top import board, cell, run
from textual.widgets import DataTable, Static
from top_pilot import until

from coordd_apps.tui.app import TopApp
from coordd_client import Client
from support import DaemonProcess

PROJECT = "/top-cost"


def agent_cost(app: TopApp, agent: str) -> str:
    people = app.query_one("#agents", DataTable)
    for key in people.rows:
        row = people.get_row(key)
        if str(row[0]) == agent:
            return str(row[-1])
    return ""


def test_the_cost_column_sums_the_usage_reported_for_a_claimed_task(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
        task = a.post("parser", budget=2_000_000).task
        a.claim(task.id)
        other = a.post("lexer").task

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: app.follower.status == "live" and board(app).row_count == 2, pilot)
        with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
            a.report_usage("claude", [
                usage("1", "claude-sonnet-4-5", input=1200, output=34_000),
                usage("2", "claude-sonnet-4-5", cache_read=1_564_800),
            ])  # fmt: skip
        # 1,600,000 tokens of a 2M budget: 80%, marked.
        await until(lambda: cell(app, task.id, "COST") == "1.6M/2M!", pilot)
        assert cell(app, other.id, "COST") == ""  # nothing charged, no budget
        styled = board(app).get_cell(str(task.id), "COST")
        assert isinstance(styled, Text) and styled.style == "yellow"
        await until(lambda: agent_cost(app, "claude-a") == "1.6M", pilot)
        counts = app.query_one("#counts", Static)
        await until(lambda: "1.6M tokens" in str(counts.render()), pilot)
        with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
            a.report_usage("claude", [usage("3", "claude-sonnet-4-5", output=500_000)])
            a.report_usage("claude", [usage("3", "claude-sonnet-4-5", output=500_000)])  # again
        await until(lambda: cell(app, task.id, "COST") == "2.1M/2M!!", pilot)  # counted once
        await until(lambda: agent_cost(app, "claude-a") == "2.1M", pilot)

    run(TopApp(daemon.socket_path, PROJECT, agent="human-test"), scenario)


def test_a_spent_budget_is_marked_at_80_columns_where_cost_has_no_room(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
        task = a.post("parser", budget=1000).task
        a.claim(task.id)
        other = a.post("lexer", budget=1000).task

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: app.follower.status == "live" and board(app).row_count == 2, pilot)
        assert "COST" not in {name for name, _ in app.board.columns}  # no room at 80
        with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
            a.report_usage("claude", [usage("1", "claude-sonnet-4-5", output=850)])
        await until(lambda: cell(app, task.id, "TITLE") == "!80% parser", pilot)
        with Client(daemon.socket_path, agent="claude-a", project=PROJECT) as a:
            a.report_usage("claude", [usage("2", "claude-sonnet-4-5", output=200)])
        await until(lambda: cell(app, task.id, "TITLE") == "!100% parser", pilot)
        styled = board(app).get_cell(str(task.id), "TITLE")
        assert isinstance(styled, Text) and "bold red" in str(styled.spans)
        assert cell(app, other.id, "TITLE") == "lexer"  # nothing spent on it: no mark

    async def main() -> None:
        app = TopApp(daemon.socket_path, PROJECT, agent="human-test")
        async with app.run_test(size=(80, 24)) as pilot:
            await scenario(app, pilot)

    asyncio.run(main())
