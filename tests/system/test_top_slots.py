"""`coord top` shows slot and port leases (issue 35) under the reservations, from a real
daemon, as text (never markup), and drops them when they are released."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable
from top_pilot import until

from coordd_client import Client
from coordd_client.tui.app import TopApp
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
