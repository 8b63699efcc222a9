"""`coord web` in a real browser (Debian's chromium under Playwright) against a real
daemon process: the board renders, other processes' changes appear without a reload,
gates are approved and rejected as `human-<user>`, an agent's `<script>` stays text,
a cross-site form does nothing, and the stream resumes across a daemon restart."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from test_cost_out import usage

from coordd_client.human import human_agent
from support import DaemonProcess, coord
from web_server import WAIT_MS, WebServer, browser, open_board, start_web

__all__ = ["browser"]  # the fixture, used by name

PROJECT = "/home/ada/shop"
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "web.png"


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, PROJECT)
    yield server
    server.stop()


def post(daemon: DaemonProcess, title: str, **fields: object) -> int:
    with daemon.client() as client:
        return client.post(title, project=PROJECT, agent="claude-poster", **fields).task.id  # type: ignore[arg-type]


def test_the_board_renders_and_an_agent_written_script_is_shown_as_text(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    evil = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    first = post(daemon, evil)
    post(daemon, "second", kind="bug", priority=5)
    page = open_board(browser, web)
    assert page.title() == "coord web"
    assert page.locator(f"#t{first} td.title").inner_text() == evil
    assert page.locator("#rows tr").count() == 2
    assert page.locator("#t2 td.state").inner_text() == "pending"
    assert page.evaluate("window.pwned") is None
    assert page.locator("img").count() == 0
    # The page's own script is its only one.
    assert page.locator("script").count() == 1
    page.context.close()


def test_open_signs_a_real_browser_in_from_its_file_with_the_strict_cookie(
    daemon: DaemonProcess, browser: Browser, tmp_path: Path
) -> None:
    """`--open`'s file, opened by chromium itself: a `SameSite=Strict` cookie is not
    sent along a navigation a `file:` page started, so the sign-in must not be a
    plain redirect (issue 44)."""
    given = tmp_path / "given"
    fake = tmp_path / "browser"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {given}\n')
    fake.chmod(0o700)
    server = start_web(daemon.socket_path, PROJECT, "--open", env={"BROWSER": str(fake)})
    try:
        deadline = time.monotonic() + WAIT_MS / 1000
        while not given.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        uri = given.read_text()
        assert uri.startswith("file:///") and server.token not in uri
        page = browser.new_context().new_page()
        page.goto(uri)
        page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
        assert page.evaluate("location.pathname + location.search") == "/"
        page.context.close()
    finally:
        server.stop()


def test_a_claim_by_another_process_appears_without_a_reload(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    task = post(daemon, "parser crash")
    page = open_board(browser, web)
    page.evaluate("window.sameDocument = true")
    claimed = coord("--agent", "cursor-2", "claim", str(task), socket=daemon.socket_path)
    assert claimed.returncode == 0, claimed.stderr
    page.wait_for_selector(f"#t{task} td.s-claimed", timeout=WAIT_MS)
    assert page.locator(f"#t{task} td.who").inner_text() == "cursor-2"
    assert ":" in page.locator(f"#t{task} td.lease").inner_text()  # the countdown, m:ss
    fresh = post(daemon, "posted while watching")
    page.wait_for_selector(f"#t{fresh}", timeout=WAIT_MS)
    assert page.evaluate("window.sameDocument") is True
    page.context.close()


def test_a_capped_board_shows_the_newest_and_adds_no_older_row_live(
    daemon: DaemonProcess, browser: Browser
) -> None:
    """`--rows 2`: the two newest tasks, the rest counted; a change to a task below the
    cap stays off the page (it would pop in out of order), a new task comes in."""
    oldest, _, newer, newest = (post(daemon, f"task {n}") for n in range(4))
    server = start_web(daemon.socket_path, PROJECT, "--rows", "2")
    try:
        page = open_board(browser, server)
        assert [page.locator("#rows tr").nth(i).get_attribute("id") for i in (0, 1)] == [
            f"t{newer}", f"t{newest}",
        ]  # fmt: skip
        note = "2 older ones too: narrow the filter"
        assert note in page.locator("#count").inner_text()
        claimed = coord("--agent", "cursor-2", "claim", str(oldest), socket=daemon.socket_path)
        assert claimed.returncode == 0, claimed.stderr
        fresh = post(daemon, "posted after the claim")  # its event comes after the claim's
        page.wait_for_selector(f"#t{fresh}", timeout=WAIT_MS)
        assert page.locator(f"#t{oldest}").count() == 0
        assert page.locator("#rows tr").count() == 3
        assert page.locator("#count").inner_text().startswith("3 tasks shown; 2 older")
        page.context.close()
    finally:
        server.stop()


def _decide(page: Page, gate: int, verb: str, reason: str = "") -> tuple[str, dict[str, str]]:
    """Click Approve or Reject on a gate, then confirm; the confirm page's question and
    the facts it showed (what was signed)."""
    line = page.locator(f"#g{gate}")
    if reason:
        line.locator("input[name=reason]").fill(reason)
    line.get_by_role("button", name=verb).click()
    page.wait_for_selector("#confirm", timeout=WAIT_MS)
    asked = page.locator("p.question").inner_text()
    names = page.locator("#facts dt").all_inner_texts()
    facts = dict(zip(names, page.locator("#facts dd").all_inner_texts(), strict=True))
    page.locator("#confirm").click()
    page.wait_for_url(f"**/task/{gate}", timeout=WAIT_MS)
    return asked, facts


def test_gates_approved_and_rejected_as_the_human_unblock_or_stop_their_dependents(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    # Agents post the gates from the CLI with `--to human`.
    gates = []
    for title in ("ship the migration?", "drop the old column?"):
        posted = coord(
            "--json", "--agent", "claude-asker", "--project", PROJECT, "post", title,
            "--to", "human", "--body", f"{title} The backup ran at 02:00.",
            socket=daemon.socket_path,
        )  # fmt: skip
        assert posted.returncode == 0, posted.stderr
        gates.append(int(posted.stdout.split('"id":')[1].split(",")[0]))
    approved, rejected = gates
    after_approved = post(daemon, "switch the reads", depends_on=[approved])
    after_rejected = post(daemon, "clean up", depends_on=[rejected])
    human = human_agent()
    page = open_board(browser, web)
    assert page.locator("#waiting h2").inner_text() == "Waiting for you (2)"

    # The page a person signs names what is signed (issue 47 item 3).
    asked, facts = _decide(page, approved, "Approve")
    assert asked == f'Approve gate #{approved} "ship the migration?", asked by claude-asker?'
    assert facts == {
        "gate": f"#{approved} ship the migration?",
        "question": "ship the migration? The backup ran at 02:00.",
        "asked by": "claude-asker",
        "project": PROJECT,
    }
    page.goto(web.base + "/")
    asked, facts = _decide(page, rejected, "Reject", "not before the backup")
    assert asked == (
        f'Reject gate #{rejected} "drop the old column?", asked by claude-asker'
        " because not before the backup?"
    )
    assert facts["question"] == "drop the old column? The backup ran at 02:00."

    with daemon.client() as client:
        history = client.events_since(after_seq=0, task_id=approved).events
        assert (history[-1].type, history[-1].agent) == ("task.completed", human)
        assert client.get(approved).task.state == "done"
        # What the asker's tab reads: who approved what.
        assert client.get(approved).task.result == f'approved by {human}: "ship the migration?"'
        assert client.get(after_approved).task.blocked_by == []
        failed = client.get(rejected).task
        assert failed.state == "failed"
        assert failed.result == "not before the backup"
        last = client.events_since(after_seq=0, task_id=rejected).events[-1]
        assert (last.type, last.agent) == ("task.failed", human)
        assert client.get(after_rejected).task.blocked_by == [rejected]
        # The asker's tab is told by a message (which reaches and wakes it), with the
        # human's reason: not only a task state it would have to wait on.
        told = client.read_messages(agent="claude-asker").messages
        assert [(m.sender, m.to, m.task_id, m.body) for m in told] == [
            (
                human, "claude-asker", approved,
                f'approved gate #{approved} "ship the migration?": its dependents may go',
            ),
            (
                human, "claude-asker", rejected,
                f'rejected gate #{rejected} "drop the old column?": not before the backup',
            ),
        ]  # fmt: skip
    page.goto(web.base + "/")
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    assert page.locator("#waiting h2").inner_text() == "Waiting for you (0)"
    page.context.close()


def test_a_form_on_another_site_does_nothing(
    daemon: DaemonProcess, web: WebServer, browser: Browser, workdir: Path
) -> None:
    task = post(daemon, "keep me")
    page = open_board(browser, web)  # the human is signed in: the cookie is set
    (workdir / "evil.html").write_text(
        f'<form id="f" method="post" action="{web.base}/act/cancel/{task}">'
        '<input name="csrf" value="guess"><input name="confirmed" value="yes">'
        '<button id="go">win a prize</button></form>'
    )
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(workdir))  # noqa: E731
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        other = page.context.new_page()
        other.goto(f"http://localhost:{evil.server_address[1]}/evil.html")
        with other.expect_navigation(timeout=WAIT_MS):
            other.locator("#go").click()
        assert "refused" in other.content()
    finally:
        evil.shutdown()
        evil.server_close()
    with daemon.client() as client:
        assert client.get(task).task.state == "pending"
    page.context.close()


def test_the_stream_resumes_across_a_daemon_restart(
    daemon: DaemonProcess, web: WebServer, browser: Browser
) -> None:
    post(daemon, "before the restart")
    page = open_board(browser, web)
    page.evaluate("window.sameDocument = true")
    assert daemon.stop() == 0
    page.wait_for_selector("#status[data-state=reconnecting]", timeout=WAIT_MS)
    daemon.start()
    page.wait_for_selector("#status[data-state=live]", timeout=WAIT_MS)
    after = post(daemon, "after the restart")
    page.wait_for_selector(f"#t{after}", timeout=WAIT_MS)
    assert page.evaluate("window.sameDocument") is True
    page.context.close()


def test_the_readme_screenshot(daemon: DaemonProcess, web: WebServer, browser: Browser) -> None:
    """Regenerates docs/web.png (the README's picture) from a small board."""
    with daemon.client() as client:
        migration = client.post("write the orders migration", project=PROJECT,
                                agent="claude-3cda0b494380").task.id  # fmt: skip
        client.claim(migration, "codex-019d1afbb2c7", lease_s=540)
        client.post("switch the reads to orders_v2", project=PROJECT, agent="claude-3cda0b494380",
                    depends_on=[migration])  # fmt: skip
        flaky = client.post("flaky test_checkout_total", project=PROJECT, kind="bug",
                            priority=5, agent="cursor-7f2e").task.id  # fmt: skip
        client.claim(flaky, "cursor-7f2e", lease_s=1500)
        client.post("deploy orders_v2 to staging?", project=PROJECT, agent="codex-019d1afbb2c7",
                    assignee=human_agent())  # fmt: skip
        client.post(
            "<b>not bold</b>: titles are text", project=PROJECT, agent="claude-3cda0b494380"
        )
        # Cost so far (issue 48): what the two holders' calls were charged.
        client.report_usage("codex", [usage("1", "gpt-5-codex", input=41_000, output=6_200,
                                            cache_read=380_000)],
                            agent="codex-019d1afbb2c7", project=PROJECT)  # fmt: skip
        client.report_usage("cursor", [usage("1", "claude-sonnet-4-5", input=900,
                                             output=12_000, cache_read=1_250_000)],
                            agent="cursor-7f2e", project=PROJECT)  # fmt: skip
    page = open_board(browser, web)
    page.set_viewport_size({"width": 1200, "height": 400})
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000
    page.context.close()
