"""The side panes that carry no events: reservations (with issue 35's slot and port
leases below them) and agents, re-read every `SIDE_REFRESH_S` from a worker thread
with the files edited in several worktrees and the human's inbox, and drawn scoped as
`presence` says. The app (app.py) inherits them; its own module since issue 45 (one
job per module).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from textual import work
from textual.widgets import DataTable

from coordd_apps import cost_view
from coordd_apps.tui import edits, messages
from coordd_apps.tui.board import Board, plain
from coordd_apps.tui.message_actions import MessageActions
from coordd_apps.tui.model import BoardModel
from coordd_apps.tui.slots import lease_rows, slot_leases
from coordd_apps.wording import render
from coordd_apps.wording.render import age
from coordd_client import presence
from coordd_client.client import Client
from coordd_client.text import parse_time
from coordd_wire.errors import CoordError
from coordd_wire.wire import AgentInfo, Reservation, SlotLease

#: Seconds between two `cost.query` reads at most: the sums are re-read when usage
#: arrives (a `usage.*` event in the feed), once per this, however fast it arrives.
COST_REFRESH_S = 1.0


class SidePanes(MessageActions):
    """The Reservations and Agents panes; TopApp sets what they read in its `__init__`."""

    model: BoardModel
    _clock: Callable[[], datetime]
    _reservations: list[Reservation]
    _edited_elsewhere: int
    _side: tuple[list[Reservation], list[AgentInfo], Sequence[SlotLease]] | None
    board: Board
    #: The sums are out of date (a load, a usage event), and when they may be re-read.
    _cost_due = True
    _cost_next = 0.0

    def _cost_frame(self, types: Iterable[str], *, loaded: bool) -> None:
        """Each frame, with the types of the events it applied: one `cost.query` when
        usage arrived (or the board was loaded), at most once per COST_REFRESH_S."""
        if loaded or any(t.startswith("usage.") for t in types):
            self._cost_due = True
        if self._cost_due and time.monotonic() >= self._cost_next:
            self._cost_due = False
            self._cost_next = time.monotonic() + COST_REFRESH_S
            self._refresh_cost()

    @work(thread=True, exclusive=True, group="cost")
    def _refresh_cost(self) -> None:
        try:
            with Client(self.socket, timeout_s=5) as client:
                costs = cost_view.read(client, self.project)
        except CoordError:
            self._cost_due = True  # read again at a later frame
            return
        if costs is not None:
            self.call_from_thread(self._show_costs, costs)

    def _show_costs(self, costs: cost_view.Costs) -> None:
        """The board's COST cells, and the Agents pane's."""
        if not self.query("#board"):
            return  # closing
        self.board.show_costs(costs)
        if self._side is not None:
            self._show_side(*self._side)

    @work(thread=True, exclusive=True, group="side")
    def _refresh_side(self) -> None:
        try:
            with Client(self.socket, timeout_s=5) as client:
                reservations = client.reservations(project=self.project).reservations
                agents = client.agents().agents
                elsewhere = edits.edited_in_several_worktrees(client, self.project)
                leases = slot_leases(client, self.project)
                inbox = messages.inbox(client, self.agent, self.project, (a.agent for a in agents))
        except CoordError:
            return
        self._edited_elsewhere = elsewhere  # shown at the next frame's status line
        self.call_from_thread(self._show_side, reservations, agents, leases)
        self.call_from_thread(self._show_messages, inbox)

    def _show_side(
        self,
        reservations: list[Reservation],
        agents: list[AgentInfo],
        leases: Sequence[SlotLease] = (),
    ) -> None:
        """The two panes that have no events; agents scoped as `presence` says."""
        if not self.query("#reservations"):
            # The app is closing (its widgets gone) when a slow refresh comes back, which
            # a loaded machine made likelier once the refresh also read the edits.
            return
        self._side = (reservations, agents, leases)
        now = self._clock()
        held = self.model.holdings()
        holders = set(held) | {r.agent for r in reservations}
        involved = None
        if self.project is not None:
            involved = presence.involved(
                self.model.tasks.values(), self.model.feed, self.board.costs.agents
            )
        agents = presence.scoped(agents, now, holders=holders, involved=involved)
        self._reservations, self._agents = reservations, agents
        table = self.query_one("#reservations", DataTable)
        table.clear()
        for r in reservations:
            mode = "exclusive" if r.exclusive else "shared"
            task = f"#{r.task_id}" if r.task_id else ""
            table.add_row(str(r.id), plain(r.pattern), plain(r.agent), plain(mode),
                          plain(render.relative(r.expires_at, now)), plain(task))  # fmt: skip
        for row in lease_rows(leases, now):  # issue 35: slot and port leases, below
            table.add_row(*map(plain, row))
        reserved: dict[str, int] = {}
        for r in reservations:
            reserved[r.agent] = reserved.get(r.agent, 0) + 1
        people = self.query_one("#agents", DataTable)
        people.clear()
        for a in agents:
            seen = age(a.last_seen, now)
            stale = now - parse_time(a.last_seen) >= presence.HORIZON
            holds = ",".join(f"#{i}" for i in held.get(a.agent, [])) or "-"
            spent = cost_view.cell(self.board.costs.agents.get(a.agent, 0), None)
            if a.ended_at is not None:  # its tab exited (docs/PROTOCOL-1.2.md section 2a)
                seen, stale = f"gone {age(a.ended_at, now)}", False
            people.add_row(plain(a.agent), plain(f"{seen}{' (stale)' if stale else ''}"),
                           plain(holds), str(reserved.get(a.agent, 0)), plain(spent))  # fmt: skip
