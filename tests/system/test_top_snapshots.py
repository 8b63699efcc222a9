"""Pictures of `coord top`'s main screens from the fixed demo board (no daemon, frozen
clock): a layout regression shows as an SVG diff. Update them on purpose with
`pytest tests/system/test_top_snapshots.py --snapshot-update` and look at the diff.

Each board picture also asserts on the screen's text (the columns layout.py chose,
every title, the feed and the counts line), so a picture updated by mistake still
fails on what matters.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, RichLog, Static
from top_pilot import until

from coordd_apps.tui import demo, layout, messages
from coordd_apps.tui.app import TopApp


def demo_app() -> TopApp:
    return TopApp(
        Path("/nonexistent"),
        "/home/ada/shop",
        agent="human-ada",
        clock=lambda: demo.NOW,
        follow=False,
    )


async def show_demo(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, TopApp)
    demo.show(app)
    # A shown feed is written after the first layout (a line is cut to the log's width;
    # a hidden one waits to be shown): wait for it rather than trust one pause to be
    # enough on a busy machine.
    await pilot.pause()
    feed = app.query_one("#feed", RichLog)
    if feed.display:
        await until(lambda: len(feed.lines) > 0, pilot)


def screen_text(pilot: Pilot[Any], selector: str) -> list[str]:
    widget = pilot.app.screen.query_one(selector)
    return [widget.render_line(y).text for y in range(widget.size.height)]


def check_the_board(pilot: Pilot[Any], width: int, height: int) -> None:
    """What the picture must show at this size, as text."""
    app = pilot.app
    columns = dict(layout.columns(width))
    board = app.query_one("#board", DataTable)
    assert [str(c.label) for c in board.columns.values()] == list(columns)
    lines = screen_text(pilot, "#board")
    assert lines[0].split()[:2] == ["ID", "STATE"] and "TITLE" in lines[0]
    # Where COST has no room, a budget past 80% or 100% marks the title (#4, #6).
    marks = {} if "COST" in columns else {4: "!80% ", 6: "!100% "}
    for task in demo.TASKS:  # each title, whole or cut with an ellipsis, on its row
        row = next(line for line in lines[1:] if line.split()[0] == str(task.id))
        cut = columns["TITLE"]
        title = marks.get(task.id, "") + task.title
        shown = title if len(title) <= cut else title[: cut - 1] + "…"
        assert shown in row, (shown, row)
    if "COST" in columns:  # issue 48: tokens so far, a budget's mark from 80%
        cost = {line.split()[0]: line for line in lines[1:] if line.strip()}
        assert "412k" in cost["1"] and "1.7M/2M!" in cost["4"] and "2.1M/2M!!" in cost["6"]
    counts = app.query_one("#counts", Static)
    assert counts.region.bottom <= height - 1  # above the footer, on screen
    check_the_status_line(pilot, width, height)
    feed = app.query_one("#feed", RichLog)
    if height >= layout.FEED_AUTO_ROWS:
        assert feed.display and feed.region.height == layout.feed_lines(height, None) + 1
        assert any("task.failed" in line for line in screen_text(pilot, "#feed"))
    else:
        assert not feed.display  # a toggled pane: `e`


def check_the_status_line(pilot: Pilot[Any], width: int, height: int) -> None:
    """Every count whole, the edits' last (issue 47 item 7): on one line when it fits,
    else on two, above the footer."""
    counts = pilot.app.query_one("#counts", Static)
    assert counts.region.bottom <= height - 1
    lines = [line.rstrip() for line in screen_text(pilot, "#counts")]
    assert "pending 3 claimed 2 done 0 failed 1 cancelled 0" in lines[0]
    assert lines[-1].endswith("4.3M tokens, 2 files edited in 2+ worktrees")  # issue 48
    assert len(lines) == (1 if width >= 130 else 2)  # 126 characters on one
    assert all(len(line) <= width and "…" not in line for line in lines)


def test_a_given_board_has_its_status_line_at_once() -> None:
    """The status line of a board `show_fixed` gives is written with it, not at the next
    frame: on a loaded machine the frame timer had not run when a snapshot was taken."""
    app = demo_app()

    async def main() -> None:
        async with app.run_test(size=(120, 40)):
            app.show_fixed(demo.TASKS, demo.AGENTS, demo.RESERVATIONS, demo.EVENTS)
            assert "pending 3 claimed 2" in str(app.query_one("#counts", Static).render())

    asyncio.run(main())


@pytest.mark.parametrize(
    "size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: "x".join(map(str, s))
)
def test_the_board(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    async def shown(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        check_the_board(pilot, *size)

    assert snap_compare(demo_app(), terminal_size=size, run_before=shown)


def test_the_feed_at_24_rows_is_a_toggled_pane(snap_compare: Callable[..., bool]) -> None:
    async def toggled(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert any("task.assigned" in line for line in screen_text(pilot, "#feed"))
        assert "TITLE" in screen_text(pilot, "#board")[0]

    assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=toggled)


def test_the_agents_pane(snap_compare: Callable[..., bool]) -> None:
    async def agents(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.click("#--content-tab-tab-agents")
        await pilot.pause()
        # This project's agents seen lately; not another repository's, nor a closed tab.
        names = [line.split()[0] for line in screen_text(pilot, "#agents")[1:] if line.strip()]
        assert names == ["claude-3cda0b494380", "codex-019d1afbb2c7", "cursor-shop"]

    assert snap_compare(demo_app(), terminal_size=(100, 24), run_before=agents)


def test_the_reservations_pane(snap_compare: Callable[..., bool]) -> None:
    async def reservations(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.click("#--content-tab-tab-reservations")
        await pilot.pause()

    assert snap_compare(demo_app(), terminal_size=(100, 24), run_before=reservations)


def test_the_keys(snap_compare: Callable[..., bool]) -> None:
    """Keys as typed (`/`, `?`, `enter`), each once: not Textual's names for them."""

    async def keys(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = "\n".join(screen_text(pilot, "Static"))
        assert "slash" not in text and "question_mark" not in text
        assert text.count("enter") == 1 and "/ " in text and "? " in text

    assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=keys)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: "x".join(map(str, s)))
def test_the_messages_pane(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    """`4` shows the Messages pane and focuses it (issue 47 item 7): every column fits the
    width, a body cut ends in "…", and the status line is whole under it."""

    async def inbox(pilot: Pilot[Any]) -> None:
        await show_demo(pilot)
        await pilot.press("4")
        await pilot.pause()
        assert pilot.app.focused is pilot.app.query_one("#messages", DataTable)
        width, height = size
        columns = dict(layout.pane_columns(width, layout.MESSAGE_COLUMNS, "MESSAGE"))
        assert columns["MESSAGE"] >= (27 if width < 120 else 50)
        lines = screen_text(pilot, "#messages")
        assert lines[0].split() == list(messages.COLUMNS)
        for message in demo.MESSAGES:
            row = next(line for line in lines[1:] if line.split()[:1] == [str(message.id)])
            cut = columns["MESSAGE"]
            body = message.body
            shown = body if len(body) <= cut else body[: cut - 1] + "…"
            assert row.rstrip().endswith(shown), (shown, row)
        check_the_status_line(pilot, width, height)

    assert snap_compare(demo_app(), terminal_size=size, run_before=inbox)


def test_a_key_per_pane() -> None:
    """1 to 5 show and focus the board, agents, reservations, messages and the feed (the
    feed shown first when it was hidden), so the arrows move in the pane you chose."""
    app = demo_app()

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await show_demo(pilot)
            for key, pane in [("2", "agents"), ("3", "reservations"), ("4", "messages"),
                              ("1", "board")]:  # fmt: skip
                await pilot.press(key)
                await pilot.pause()
                assert app.focused is app.query_one(f"#{pane}", DataTable)
            await pilot.press("5")  # hidden at 24 rows
            await pilot.pause()
            feed = app.query_one("#feed", RichLog)
            assert feed.display and feed.has_focus

    asyncio.run(main())


def test_the_side_panes_refit_when_the_terminal_narrows() -> None:
    """A resize gives the Messages and Reservations panes their new columns, rows kept."""
    app = demo_app()

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await show_demo(pilot)
            await pilot.resize_terminal(80, 24)
            await pilot.pause()
            for pane, wanted, rest, rows in [
                ("messages", layout.MESSAGE_COLUMNS, "MESSAGE", len(demo.MESSAGES)),
                ("reservations", layout.RESERVATION_COLUMNS, "PATTERN", 2),
            ]:
                table = app.query_one(f"#{pane}", DataTable)
                shown = [(str(c.label), c.width) for c in table.columns.values()]
                assert shown == layout.pane_columns(80, wanted, rest)
                assert table.row_count == rows

    asyncio.run(main())
