"""Driving `coord top` under Textual's pilot, for the TUI tests (test_top*.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.css.query import NoMatches
from textual.widgets.data_table import CellDoesNotExist

#: How long a screen may take to show what a test waits for. Generous: only a hang
#: should cross it, and on a busy machine a refresh that takes 50 ms idle takes seconds.
SHOWN_WITHIN_S = 90.0


async def until(
    check: Callable[[], bool], pilot: object, timeout_s: float = SHOWN_WITHIN_S
) -> None:
    """Let the app run (frames, the feed thread) until `check` holds; a check that
    raises because what it reads is not on screen yet (a row still to come, or the
    board itself before its screen is mounted, as on a busy machine) is a no."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s

    def holds() -> bool:
        try:
            return check()
        except (LookupError, CellDoesNotExist, NoMatches):
            return False

    while not holds():
        assert loop.time() < deadline, "the screen never showed it"
        await pilot.pause(0.05)  # type: ignore[attr-defined]
