"""The keys that change what the board shows, not the board: which states (`f`), ready
tasks only (`r`), only yours (`m`), the order (`s`) and a search of titles (`/`), all
through the board's `Filter` (`board_filter.py`, which `coord web` reads too). The app
(app.py) inherits them; its own module since issue 45 (one job per module).
"""

from __future__ import annotations

from textual.app import App

from coordd_apps.board_filter import Filter
from coordd_apps.tui.board import Board
from coordd_apps.tui.screens import Ask
from coordd_wire.wire import STATES

STATE_FILTERS = (
    ("open", frozenset({"pending", "claimed", "failed"})),
    ("all", frozenset(STATES)),
    ("pending", frozenset({"pending"})),
    ("claimed", frozenset({"claimed"})),
    ("done", frozenset({"done"})),
)


class ViewKeys(App[None]):
    """The view's keys; TopApp sets what they read in its `__init__`."""

    agent: str
    board: Board
    filter: Filter
    _state_filter: int

    def action_cycle_states(self) -> None:
        self._state_filter = (self._state_filter + 1) % len(STATE_FILTERS)
        self.filter.states = STATE_FILTERS[self._state_filter][1]
        self.board.rebuild()

    def action_ready_only(self) -> None:
        self.filter.ready_only = not self.filter.ready_only
        self.board.rebuild()

    def action_mine(self) -> None:
        self.filter.mine = None if self.filter.mine else self.agent
        self.board.rebuild()

    def action_cycle_sort(self) -> None:
        self.board.cycle_sort()

    def action_search(self) -> None:
        def searched(values: dict[str, str] | None) -> None:
            if values is not None:
                self.filter.text = values["text"].strip()
                self.board.rebuild()

        self.push_screen(Ask("Search titles", [("text", "text (empty: all)")]), searched)
