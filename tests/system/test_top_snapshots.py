"""Pictures of `coord top`'s main screens from the fixed demo board (no daemon, frozen
clock): a layout regression shows as an SVG diff. Update them on purpose with
`pytest tests/system/test_top_snapshots.py --snapshot-update` and look at the diff."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from coordd_client.tui import demo
from coordd_client.tui.app import TopApp


def demo_app() -> TopApp:
    return TopApp(Path("/nonexistent"), "/home/ada/shop", agent="human-ada", now=demo.NOW)


async def show_demo(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, TopApp)
    app.show_fixed(demo.TASKS, demo.AGENTS, demo.RESERVATIONS)
    await pilot.pause()


def test_the_board_at_80_by_24(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=show_demo)


def test_the_board_wide(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(demo_app(), terminal_size=(120, 32), run_before=show_demo)


def test_the_agents_pane(snap_compare: Callable[..., bool]) -> None:
    async def agents(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.click("#--content-tab-tab-agents")
        await pilot.pause()

    assert snap_compare(demo_app(), terminal_size=(100, 24), run_before=agents)


def test_the_reservations_pane(snap_compare: Callable[..., bool]) -> None:
    async def reservations(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.click("#--content-tab-tab-reservations")
        await pilot.pause()

    assert snap_compare(demo_app(), terminal_size=(100, 24), run_before=reservations)


def test_the_keys(snap_compare: Callable[..., bool]) -> None:
    app = demo_app()
    assert snap_compare(app, press=["question_mark"], terminal_size=(80, 24), run_before=show_demo)
