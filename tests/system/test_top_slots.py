"""`coord top` shows slot and port leases (issue 35) under the reservations, from a real
daemon, as text (never markup), and drops them when they are released."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, RichLog
from top_pilot import until

from coordd_apps.tui.app import TopApp
from coordd_client import Client
from support import DaemonProcess

PROJECT = "/top-slots"


def rows(table: DataTable[object]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def test_top_lists_slot_and_port_leases(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="[b]holder[/b]", project=PROJECT) as client:
        client.acquire_slot("migrations")
        port = client.lease_port("dev-server", low=33000, high=33009).lease.port

    async def scenario(app: TopApp, pilot: object) -> None:
        table = app.query_one("#reservations", DataTable)
        await until(lambda: table.row_count == 2, pilot)
        shown = rows(table)
        assert [r[1:4] for r in shown] == [
            ["migrations", "[b]holder[/b]", "slot of 1"],
            [f"port {port} (dev-server)", "[b]holder[/b]", "port"],
        ]
        with Client(daemon.socket_path, agent="[b]holder[/b]", project=PROJECT) as client:
            client.release_slots()
        await until(lambda: table.row_count == 0, pilot)

    async def main() -> None:
        app = TopApp(daemon.socket_path, PROJECT, agent="human-test")
        async with app.run_test(size=(120, 40)) as pilot:
            await scenario(app, pilot)

    asyncio.run(main())


def test_at_80x24_a_feed_line_is_cut_with_an_ellipsis_not_by_the_scrollbar(
    daemon: DaemonProcess,
) -> None:
    """Found in review (issue 47 item 7): a line written before the feed had a scrollbar
    was cut by the scrollbar when it came, mid-word and with no "…" (`slot land:main
    (release`). Every line is written to the width the scrollbar leaves."""

    async def main() -> None:
        app = TopApp(daemon.socket_path, PROJECT, agent="human-test")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("e")
            feed = app.query_one("#feed", RichLog)
            await until(lambda: feed.display and feed.scrollable_content_region.width > 0, pilot)
            with Client(daemon.socket_path, agent="codex-9f1e00000001", project=PROJECT) as c:
                for n in range(12):  # more lines than the feed has rows: a scrollbar comes
                    c.send_message(f"note {n}: " + "word " * 20, to="claude-3cda0b494380")
            await until(lambda: len(feed.lines) >= 12 and feed.show_vertical_scrollbar, pilot)
            await pilot.pause(0.1)
            room = feed.scrollable_content_region.width
            assert all(line.cell_length <= room for line in feed.lines)
            assert all(line.text.rstrip().endswith("…") for line in feed.lines)

    asyncio.run(main())
