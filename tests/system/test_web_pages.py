"""`coord web`'s landing, agents, task and messages pages at 1280 px in a real browser
(Debian's chromium under Playwright) against a real daemon process (issue 47 item 8):
the landing page keeps the landings that ended, the agents page hides the ended ones
behind a link and offers Release only where something is held, no page is wider than
the window, the `live` badge is on the pages that follow the stream and nowhere else,
the Send form's fields show their whole placeholders on one line, and the pages a
person signs an approval on show what is signed (item 3). Each test saves its page as
a picture in docs/ (docs/WATCHING.md shows them)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from test_cost_out import usage

from coordd_client.human import human_agent
from support import DaemonProcess
from web_server import WAIT_MS, WebServer, browser, start_web

__all__ = ["browser"]  # the fixture, used by name

PROJECT = "/home/ada/bakery"
DOCS = Path(__file__).resolve().parents[2] / "docs"
WIDTH = 1280
#: Names and text as long as agents write them: a width a page must still fit.
LONG_AGENT = "claude-code-headless-session-7f3a9c2e41b84d0e9a6f5c1d2b3e4f50"
LONG_PATH = "src/" + "/".join(f"deeply_nested_package_{n}" for n in range(8)) + "/module.py"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def open_page(browser: Browser, web: WebServer, path: str, *, live: bool) -> Page:
    """`path` in a 1280 px window, signed in through the printed address; a page that
    follows the stream once its badge says `live`."""
    page = browser.new_context(viewport={"width": WIDTH, "height": 800}).new_page()
    page.on("dialog", lambda dialog: pytest.fail(f"a dialog opened: {dialog.message}"))
    page.goto(web.url)
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    page.goto(web.base + path)
    if live:
        page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
        assert page.locator("#status").inner_text() == "live"
    else:
        assert page.locator("#status").count() == 0  # no badge that never says anything
    return page


def age_agents(daemon: DaemonProcess, like: str) -> None:
    """Move the last sighting of the agents named `like` back to 2020, in the store."""
    sql = "UPDATE agents SET last_seen = '2020' || substr(last_seen, 5) WHERE agent LIKE %s"
    if daemon.store is None:
        with closing(sqlite3.connect(daemon.db_path)) as conn, conn:
            conn.execute(sql.replace("%s", "?"), (like,))
        return
    import psycopg

    with psycopg.connect(daemon.store, autocommit=True) as pg:
        pg.execute(sql, (like,))


def fits(page: Page) -> None:
    """No horizontal scroll at 1280 px."""
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(
        """(width) => [...document.querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().left + el.scrollWidth > width)
        .map((el) => el.tagName + "." + el.className + " " + el.getBoundingClientRect().right)
        .slice(0, 8)""",
        WIDTH,
    )
    assert width <= WIDTH, f"{page.url} is {width} px wide: {wide}"


def shoot(page: Page, name: str) -> None:
    path = DOCS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def send_form_is_aligned(page: Page) -> None:
    """Every text field of the Send form is wide enough for its placeholder, and the
    fields, the kind and the button sit on one line, below the body."""
    cut = page.evaluate(
        """() => {
        const ctx = document.createElement("canvas").getContext("2d");
        return [...document.querySelectorAll("form.send input[type=text]")].filter((el) => {
            const style = getComputedStyle(el);
            ctx.font = style.font;
            const room = el.clientWidth - parseFloat(style.paddingLeft)
                - parseFloat(style.paddingRight);
            return ctx.measureText(el.placeholder).width > room;
        }).map((el) => el.placeholder);
    }"""
    )
    assert cut == []
    form = page.locator("form.send").first
    middles = [
        box["y"] + box["height"] / 2
        for box in (
            form.locator(selector).bounding_box()
            for selector in ("input[name=to]", "select", "button")
        )
        if box is not None
    ]
    assert len(middles) == 3 and max(middles) - min(middles) < 4, middles
    body = form.locator("textarea").bounding_box()
    assert body is not None and body["y"] + body["height"] <= min(middles)


def test_the_landing_page_keeps_the_landings_that_ended_below_the_queue(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    with daemon.client() as client:
        landed = client.enqueue_landing(
            "feat-login", "main", ["src/login.py"], agent="cursor-2", project=PROJECT
        ).landing
        client.start_landing(landed.id, agent="cursor-2", project=PROJECT)
        client.finish_landing(
            landed.id, "landed", agent="cursor-2", project=PROJECT, commit="9f2c4e1a" * 5
        )
        failed = client.enqueue_landing(
            "feat-cart", "main", ["src/cart.py"], agent="codex-9", project=PROJECT
        ).landing
        client.finish_landing(
            failed.id, "failed", agent="codex-9", project=PROJECT, reason="tests failed: cart"
        )
        queued = client.enqueue_landing(
            "feat-" + "x" * 60, "main", [LONG_PATH], agent=LONG_AGENT, project=PROJECT
        ).landing
    page = open_page(browser, web, "/landing", live=True)
    assert page.locator(f"#q{queued.id}").count() == 1  # the live queue, still on top
    done = page.locator(f"#r{landed.id}").inner_text()
    assert "feat-login" in done and "cursor-2" in done and "landed" in done
    assert "9f2c4e1a9f2c" in done and "ago" in done
    lost = page.locator(f"#r{failed.id}").inner_text()
    assert "codex-9" in lost and "failed" in lost and "tests failed: cart" in lost
    # One that ends while the page is open moves from the queue to the recent list.
    page.evaluate("window.sameDocument = true")
    with daemon.client() as client:
        client.finish_landing(
            queued.id, "failed", agent=LONG_AGENT, project=PROJECT, reason="withdrawn"
        )
    page.locator(f"#r{queued.id}").wait_for(timeout=WAIT_MS)
    assert page.locator(f"#q{queued.id}").count() == 0
    assert page.evaluate("window.sameDocument") is True
    assert page.locator("#recent tr").count() == 4  # the heading row and three
    fits(page)
    shoot(page, "web-landings.png")
    page.context.close()


def test_the_agents_page_hides_ended_agents_and_offers_release_only_to_holders(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    with daemon.client() as client:
        task = client.post("fix the oven timer", project=PROJECT, agent="claude-poster").task
        client.claim(task.id, LONG_AGENT)
        client.reserve([LONG_PATH, "docs/**"], agent=LONG_AGENT, project=PROJECT)
        # Cost so far (issue 48): the holder's calls, charged to its task.
        client.report_usage("claude", [usage("1", "claude-opus-4-5", input=2_400, output=18_000,
                                             cache_read=960_000)],
                            agent=LONG_AGENT, project=PROJECT)  # fmt: skip
        client.heartbeat("codex-idle")
        for n in range(3):
            client.heartbeat(f"claude-headless-{n}")
    # Three headless sessions that ended long ago, holding nothing.
    age_agents(daemon, "claude-headless-%")
    page = open_page(browser, web, "/agents", live=False)
    shown = page.locator("table.agents td:first-child").all_inner_texts()
    assert LONG_AGENT in shown and "codex-idle" in shown
    assert not [name for name in shown if name.startswith("claude-headless-")]
    assert page.locator(f'tr[id="a-{LONG_AGENT}"] button').inner_text() == "release"
    assert page.locator('tr[id="a-codex-idle"] button').count() == 0  # holds nothing
    cost = page.locator(f'tr[id="a-{LONG_AGENT}"] td:nth-child(5)').inner_text()
    assert cost == "980k tokens · $0.94 est."  # $0.012 + $0.45 + $0.48 at opus-4-5's prices
    fits(page)
    shoot(page, "web-agents.png")
    page.get_by_role("link", name="show ended (3)").click()
    page.wait_for_url("**/agents?ended=1", timeout=WAIT_MS)
    assert page.locator('tr[id="a-claude-headless-0"]').count() == 1
    assert page.locator('tr[id="a-claude-headless-0"] button').count() == 0
    fits(page)
    page.context.close()


def test_a_task_page_with_long_names_and_results_fits_1280_px(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    with daemon.client() as client:
        task = client.post(
            "move the " + LONG_PATH + " module", project=PROJECT, agent=LONG_AGENT,
            body="Why: " + LONG_PATH + "\n" + "a line that goes on and on " * 20,
        ).task  # fmt: skip
        fence = client.claim(task.id, LONG_AGENT).task.fence
        client.report_usage("claude", [usage("1", "claude-sonnet-4-5", input=3, output=4_120,
                                             cache_creation=18_700, cache_read=205_440)],
                            agent=LONG_AGENT, project=PROJECT)  # fmt: skip
        client.complete(task.id, LONG_AGENT, fence=fence, result="moved " + LONG_PATH * 3)
        client.send_message(
            "is " + LONG_PATH + " still imported?", task_id=task.id, kind="question",
            agent="codex-9", project=PROJECT,
        )  # fmt: skip
    page = open_page(browser, web, f"/task/{task.id}", live=False)
    assert page.locator("table.history tr").count() >= 3
    # Cost so far (issue 48): $0.06 output, $0.07 cache writes, $0.06 cache reads.
    assert "228,263 tokens (228k) · $0.19 est." in page.locator("dl.fields").inner_text()
    fits(page)
    send_form_is_aligned(page)
    shoot(page, "web-task.png")
    page.context.close()


def test_the_messages_page_is_live_fits_and_its_send_form_is_aligned(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    human = human_agent()
    with daemon.client() as client:
        client.send_message(
            "may I take " + LONG_PATH + "?", to=human, kind="question", agent=LONG_AGENT,
            project=PROJECT,
        )  # fmt: skip
        client.send_message("the oven is free", agent="codex-9", project=PROJECT)
    page = open_page(browser, web, "/messages", live=True)
    assert page.locator("#inbox li").count() >= 1
    fits(page)
    send_form_is_aligned(page)
    shoot(page, "web-messages.png")
    page.context.close()


def confirm_facts(page: Page) -> dict[str, str]:
    """The confirm page's question and facts (what the person signs), once it shows."""
    page.wait_for_selector("#confirm", timeout=WAIT_MS)
    names = page.locator("#facts dt").all_inner_texts()
    facts = dict(zip(names, page.locator("#facts dd").all_inner_texts(), strict=True))
    return {"asked": page.locator("p.question").inner_text(), **facts}


def test_the_approval_pages_show_what_is_signed_and_fit_1280_px(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    """Issue 47 item 3, in a browser at 1280 px: the page a person signs a release
    request or a gate on names what is signed (paths, requester, reason; the gate, its
    question, its asker), whatever the length of the names, and fits the window."""
    human = human_agent()
    with daemon.client() as client:
        client.reserve([LONG_PATH], agent=human, project=PROJECT)
        request = client.request_release(
            patterns=[LONG_PATH], body="the migration needs it", agent=LONG_AGENT,
            project=PROJECT,
        ).request  # fmt: skip
        gate = client.post(
            "ship the " + LONG_PATH + " migration?", body="The backup ran at 02:00.",
            assignee=human, agent=LONG_AGENT, project=PROJECT,
        ).task  # fmt: skip

    page = open_page(browser, web, "/messages", live=True)
    page.locator(f"#m{request.id} form", has_text="Approve").get_by_role("button").click()
    facts = confirm_facts(page)
    assert LONG_PATH in facts["asked"] and LONG_AGENT in facts["asked"], facts
    assert facts["asks for"] == LONG_PATH
    assert LONG_AGENT in facts.values() and "the migration needs it" in facts.values(), facts
    fits(page)
    shoot(page, "web-approve-release.png")

    page.goto(web.base + f"/task/{gate.id}")
    page.locator(f'form[action="/act/approve/{gate.id}"] button').click()
    facts = confirm_facts(page)
    assert facts["asked"].startswith(f"Approve gate #{gate.id}"), facts
    assert facts["gate"] == f"#{gate.id} ship the {LONG_PATH} migration?"
    assert facts["question"] == "The backup ran at 02:00."
    assert facts["asked by"] == LONG_AGENT
    fits(page)
    shoot(page, "web-approve-gate.png")
    page.context.close()
