"""`coord web`'s pages of 1.2's additions in a real browser (Debian's chromium under
Playwright) against a real daemon process: an agent's message appears on the messages
page without a reload, the human approves a release request and the reservation is
handed over, a `<script>` body stays text (inbox and task thread), and the slots page
shows a lease another process took, and one taken while it is open."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from coordd_client.human import human_agent
from support import DaemonProcess, coord
from web_server import WAIT_MS, WebServer, browser, open_board, start_web

__all__ = ["browser"]  # the fixture, used by name

PROJECT = "/home/ada/cafe"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def open_view(browser: Browser, web: WebServer, path: str) -> Page:
    """The printed address (the token becomes a cookie), then `path`, once it is live."""
    page = open_board(browser, web)
    page.goto(web.base + path)
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    return page


def test_a_message_from_an_agent_appears_on_the_messages_page_without_a_reload(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    page = open_view(browser, web, "/messages")
    assert page.locator("#inbox li.msg").count() == 0
    page.evaluate("window.sameDocument = true")
    with daemon.client() as client:
        sent = client.send_message(
            "the schema is frozen until noon", to=human_agent(), agent="codex-3", project=PROJECT
        ).message
        asked = client.send_message(
            "may I drop the old index?", kind="question", agent="codex-3", project=PROJECT,
            to=human_agent(),
        ).message  # fmt: skip
    page.wait_for_selector(f"#inbox #m{sent.id}", timeout=WAIT_MS)
    page.wait_for_selector(f"#asks #m{asked.id}", timeout=WAIT_MS)
    assert "from codex-3" in page.locator(f"#inbox #m{sent.id} .about").inner_text()
    assert page.locator(f"#inbox #m{sent.id} pre").inner_text() == sent.body
    assert page.evaluate("window.sameDocument") is True
    # The human replies to the question; it is answered, and leaves the open list.
    page.locator(f"#asks #m{asked.id} input[name=body]").fill("yes, after the backup")
    page.locator(f"#asks #m{asked.id}").get_by_role("button", name="Reply").click()
    page.wait_for_selector("#confirm", timeout=WAIT_MS)
    page.locator("#confirm").click()
    page.wait_for_url("**/messages", timeout=WAIT_MS)
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    assert page.locator(f"#asks #m{asked.id}").count() == 0
    with daemon.client() as client:
        now = client.get_message(asked.id).message
    assert now.open is False
    assert now.answer_id is not None
    with daemon.client() as client:
        reply = client.get_message(now.answer_id).message
    assert (reply.sender, reply.body) == (human_agent(), "yes, after the backup")
    page.context.close()


def test_a_reply_being_typed_survives_a_message_arriving(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    """The part of the page read again on each message keeps what the human types: a new
    message while they write a reply neither clears it nor takes the focus away."""
    with daemon.client() as client:
        asked = client.send_message(
            "may I drop the old index?", kind="question", agent="codex-3", project=PROJECT,
            to=human_agent(),
        ).message  # fmt: skip
    page = open_view(browser, web, "/messages")
    reply = page.locator(f"#asks #m{asked.id} input[name=body]")
    reply.fill("yes, after the")
    with daemon.client() as client:
        later = client.send_message(
            "tests are green", agent="claude-7", project=PROJECT, to=human_agent()
        ).message
    page.wait_for_selector(f"#inbox #m{later.id}", timeout=WAIT_MS)  # the part was read again
    assert reply.input_value() == "yes, after the"
    assert page.evaluate("document.activeElement.name") == "body"
    page.keyboard.type(" backup")
    page.locator(f"#asks #m{asked.id}").get_by_role("button", name="Reply").click()
    page.wait_for_selector("#confirm", timeout=WAIT_MS)
    page.locator("#confirm").click()
    page.wait_for_url("**/messages", timeout=WAIT_MS)
    with daemon.client() as client:
        answer_id = client.get_message(asked.id).message.answer_id
        assert answer_id is not None
        assert client.get_message(answer_id).message.body == "yes, after the backup"
    page.context.close()


def test_the_human_approves_a_release_request_and_the_reservation_is_handed_over(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    human = human_agent()
    with daemon.client() as client:
        client.reserve(["src/db/**"], agent=human, project=PROJECT)
        request = client.request_release(
            patterns=["src/db/**"], body="I need the migrations", agent="claude-7",
            project=PROJECT,
        ).request  # fmt: skip
    page = open_view(browser, web, "/messages")
    item = page.locator(f"#asks #m{request.id}")
    item.get_by_role("button", name="Approve").click()
    page.wait_for_selector("#confirm", timeout=WAIT_MS)
    # What is signed is on the page that signs it (issue 47 item 3): the paths, the
    # requester, the holder and the requester's reason.
    assert page.locator("p.question").inner_text() == (
        f"Approve release request #{request.id}: hand src/db/** from {human} over to claude-7?"
    )
    facts = dict(
        zip(
            page.locator("#facts dt").all_inner_texts(),
            page.locator("#facts dd").all_inner_texts(),
            strict=True,
        )
    )
    assert facts["requester"] == "claude-7"
    assert facts["asks for"] == "src/db/**"
    assert facts["held by"] == human
    assert facts["reason"] == "I need the migrations"
    assert facts["open until"].startswith("in ")
    page.locator("#confirm").click()
    page.wait_for_url("**/messages", timeout=WAIT_MS)
    with daemon.client() as client:
        held = client.reservations(project=PROJECT).reservations
        answered = client.get_message(request.id).message
    assert [(r.agent, r.pattern) for r in held] == [("claude-7", "src/db/**")]
    assert answered.request is not None and answered.request.status == "approved"
    page.context.close()


def test_a_script_in_a_message_body_is_shown_as_text_in_the_inbox_and_the_thread(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    evil = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    with daemon.client() as client:
        task = client.post("tune the cache", agent="claude-1", project=PROJECT).task
        sent = client.send_message(
            evil, to=human_agent(), task_id=task.id, agent="claude-1", project=PROJECT
        ).message
    page = open_board(browser, web)
    for path, where in (("/messages", "#inbox"), (f"/task/{task.id}", "#thread")):
        page.goto(web.base + path)
        page.wait_for_selector(f"{where} #m{sent.id}", timeout=WAIT_MS)
        assert page.locator(f"{where} #m{sent.id} pre").inner_text() == evil
        assert page.evaluate("window.pwned") is None
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1
    page.context.close()


def test_the_slots_and_landing_pages_list_what_other_processes_hold(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    took = coord(
        "--agent", "cursor-2", "--project", PROJECT, "slot", "acquire", "migrations",
        socket=daemon.socket_path,
    )  # fmt: skip
    assert took.returncode == 0, took.stderr
    page = open_view(browser, web, "/slots")
    first = page.locator("#slots tr", has_text="migrations")
    assert first.count() == 1
    assert "cursor-2" in first.inner_text()
    page.evaluate("window.sameDocument = true")
    again = coord(
        "--agent", "codex-9", "--project", PROJECT, "slot", "acquire", "test-db",
        "--capacity", "2", socket=daemon.socket_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    page.locator("#slots tr", has_text="test-db").wait_for(timeout=WAIT_MS)
    assert "codex-9" in page.locator("#slots tr", has_text="test-db").inner_text()
    assert page.evaluate("window.sameDocument") is True
    page.context.close()
    # The landing queue: the second entry shares a path with the one ahead of it.
    with daemon.client() as client:
        client.enqueue_landing("feat-a", "main", ["src/a.py"], agent="cursor-2", project=PROJECT)
        behind = client.enqueue_landing(
            "feat-b", "main", ["src/a.py", "src/b.py"], agent="codex-9", project=PROJECT
        ).landing
    page = open_view(browser, web, "/landing")
    way = page.locator(f"#q{behind.id}").inner_text()
    assert "feat-b" in way and "shares src/a.py with #" in way
    page.context.close()
