"""`coord web`'s cost so far (issue 48) in a real browser against a real daemon: usage
reported through `usage.report` for a claimed task shows, summed, in the board's cost
column (a budget's mark from 80%, the dollars labelled `est.`), follows new usage
without a reload, and shows on the task page and per agent on the agents page; every
page still fits 1280 px."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect
from test_cost_out import usage
from test_web_pages import fits, open_page

from coordd_client import Client
from support import DaemonProcess
from web_server import WAIT_MS, WebServer, browser, start_web

__all__ = ["browser"]  # the fixture, used by name

PROJECT = "/home/ada/bakery"
AGENT = "claude-3cda0b494380"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def test_cost_so_far_on_the_board_the_task_and_the_agents_pages(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    with Client(daemon.socket_path, agent=AGENT, project=PROJECT) as a:
        task = a.post("write the orders migration", budget=2_000_000).task
        a.claim(task.id)
        other = a.post("drop the old column").task
        a.report_usage("claude", [
            usage("1", "claude-sonnet-4-5", input=1200, output=34_000),
            usage("2", "claude-sonnet-4-5", cache_read=1_564_800),
        ])  # fmt: skip
    page = open_page(browser, web, "/", live=True)
    cost = page.locator(f"#t{task.id} td.cost")
    # 1,600,000 tokens of 2M: 80%, marked; $0.0036 input + $0.51 output
    # + $0.47 cache reads at the default claude-sonnet-4 prices.
    assert cost.inner_text() == "1.6M/2M! $0.98 est."
    assert "b1" in (cost.get_attribute("class") or "")
    assert page.locator(f"#t{other.id} td.cost").inner_text() == ""
    fits(page)
    # More usage, and the same entry again (counted once): the cell follows, no reload.
    with Client(daemon.socket_path, agent=AGENT, project=PROJECT) as a:
        for _ in range(2):
            a.report_usage("claude", [usage("3", "claude-sonnet-4-5", output=500_000)])
    expect(cost).to_have_text("2.1M/2M!! $8.48 est.", timeout=WAIT_MS)
    # A task event's row (a release) does not carry the cost: the page keeps the cell.
    page.locator(f"#t{task.id}").evaluate("(row) => { row.dataset.old = '1'; }")
    with Client(daemon.socket_path, agent=AGENT, project=PROJECT) as a:
        a.release(task.id)
    expect(page.locator(f"#t{task.id}")).not_to_have_attribute("data-old", "1", timeout=WAIT_MS)
    assert cost.inner_text() == "2.1M/2M!! $8.48 est."
    page.context.close()

    page = open_page(browser, web, f"/task/{task.id}", live=False)
    fields = page.locator("dl.fields").inner_text()
    assert "2,100,000 tokens (2.1M) · $8.48 est. · budget 2M: 105%" in fields
    fits(page)
    page.context.close()

    page = open_page(browser, web, "/agents", live=False)
    assert page.locator(f'tr[id="a-{AGENT}"] td:nth-child(5)').inner_text() == (
        "2.1M tokens · $8.48 est."
    )
    fits(page)
    page.context.close()
