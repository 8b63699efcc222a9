"""The Textual app: board, agents, reservations, messages and the live feed, and the keys.

The app lays the panes out, follows the daemon (follow.py) and applies what
arrived once per frame; the board table's rows are board.py's, the modal
screens screens.py's, the human's actions (each confirmed, done as the
agent `human-<user>`) actions.py's and message_actions.py's, the side panes
side_panes.py's, and the keys that filter and sort the board view_keys.py's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    RichLog,
    Static,
    TabbedContent,
    TabPane,
)

from coordd_apps import cost_view
from coordd_apps.board_filter import Filter
from coordd_apps.tui import edits, layout, message_actions, messages
from coordd_apps.tui.board import Board, plain
from coordd_apps.tui.follow import Follower
from coordd_apps.tui.model import BoardModel, feed_line
from coordd_apps.tui.screens import Confirm, Detail
from coordd_apps.tui.side_panes import SidePanes
from coordd_apps.tui.view_keys import STATE_FILTERS, ViewKeys
from coordd_client.human import human_agent
from coordd_client.text import clean
from coordd_wire.wire import STATES, AgentInfo, Event, Reservation, SlotLease, Task
from coordd_wire.wire_messages import Message

#: The app, and the modal screens it shows where callers have always imported them.
__all__ = ["Confirm", "Detail", "TopApp"]

#: Seconds per frame: events that arrive between two frames are drawn together. Each
#: redraw of a changed DataTable costs time linear in its rows (measured: 10,000 rows
#: at 50 events/s took most of a core at 20 frames/s), so five a second.
FRAME_S = 0.2
#: Reservations and agents carry no events (PROTOCOL.md section 7), nor does a request
#: expiring (tui/messages.py): re-read this often.
SIDE_REFRESH_S = 2.0
#: The side panes whose columns layout.pane_columns fits: (table id, columns, the one
#: that takes the rest).
PANES = (
    ("reservations", layout.RESERVATION_COLUMNS, "PATTERN"),
    ("messages", layout.MESSAGE_COLUMNS, "MESSAGE"),
    ("agents", layout.AGENT_COLUMNS, "HOLDS"),
)
#: Keys `?` leaves to the `1-5` line (the first pane key's).
PANE_KEYS_UNLISTED = frozenset("2345")


class TopApp(SidePanes, ViewKeys):
    """`coord top`: the board, agents, reservations and the feed of one project (or all)."""

    CSS = """
    TabbedContent, ContentSwitcher, TabPane, #board { height: 1fr; }
    #feed { height: auto; border-top: solid $accent; overflow-y: auto; }
    #status, #counts { height: auto; background: $panel; }
    #dialog, #detail { width: 80%; max-width: 100; height: auto; max-height: 90%;
                       border: thick $accent; padding: 1 2; background: $surface; }
    #dialog Label { width: 100%; }
    Confirm, Ask, Detail { align: center middle; }
    """
    #: The footer shows the keys that fit 80 columns; `?` lists every one, by its tooltip.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "post", "post", tooltip="post a task"),
        Binding("a", "assign", "assign", tooltip="assign the selected task"),
        Binding("c", "cancel_task", "cancel", tooltip="cancel the selected task"),
        Binding("o", "reopen", "reopen", show=False, tooltip="reopen the selected task"),
        Binding("x", "release_agent", "release", show=False, tooltip="release all an agent holds"),
        Binding(
            "enter",
            "detail",
            "detail",
            show=False,
            key_display="enter",
            tooltip="task detail and history",
        ),
        Binding("w", "reply", "reply", show=False, tooltip="reply to the selected message"),
        Binding("g", "approve", "grant", show=False, tooltip="approve the request or gate"),
        Binding("d", "deny", "deny", show=False, tooltip="deny the request, reject the gate"),
        Binding("k", "mark_read", "read", show=False, tooltip="mark the messages read"),
        Binding("f", "cycle_states", "states", tooltip="states: open, all, pending, ..."),
        Binding("slash", "search", "search", tooltip="search titles"),
        Binding("r", "ready_only", "ready", show=False, tooltip="ready tasks only"),
        Binding("m", "mine", "mine", show=False, tooltip="only yours"),
        Binding("s", "cycle_sort", "sort", show=False, tooltip="by id, or most urgent first"),
        Binding("e", "toggle_feed", "events", tooltip="show or hide the event feed"),
        # A key per pane, so the arrows move in the one you mean (issue 47 item 7); `?`
        # lists the five on one line, the footer as `1-5`.
        Binding(
            "1",
            "pane('board')",
            "panes",
            key_display="1-5",
            tooltip="panes: board, agents, reservations, messages, feed",
        ),
        Binding("2", "pane('agents')", "agents", show=False),
        Binding("3", "pane('reservations')", "reservations", show=False),
        Binding("4", "pane('messages')", "messages", show=False),
        Binding("5", "pane('feed')", "feed", show=False),
        Binding("question_mark", "help", "keys", tooltip="these keys"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(
        self,
        socket: Path,
        project: str | None,
        *,
        agent: str | None = None,
        clock: Callable[[], datetime] | None = None,
        follow: bool = True,
    ) -> None:
        """Args:
        clock: the time every relative cell (AGE, LEASE, SEEN) is computed from, read
            at each redraw; a test moves it, the demo freezes it. Default: the wall.
        follow: read and follow the daemon; False for a board given by `show_fixed`.
        """
        super().__init__()
        self.socket = socket
        self.project = project
        self.agent = agent or human_agent()
        self.model = BoardModel()
        self.filter = Filter()
        self.follower = Follower(socket, project)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._follow = follow
        self.board = Board(
            lambda: self.query_one("#board", DataTable), self.model, self.filter, self._clock
        )
        self._feed_shown: bool | None = None  # None: by the height (layout.feed_lines)
        self._status_line = ""
        self._state_filter = 0
        self._reservations: list[Reservation] = []
        self._agents = []
        self._messages = []
        #: Files edited in 2+ worktrees lately (`tui/edits.py`, issue 33).
        self._edited_elsewhere = 0
        #: What the side panes show, unscoped, to redraw them when the width changes.
        self._side: tuple[list[Reservation], list[AgentInfo], Sequence[SlotLease]] | None = None
        self._inbox: messages.Inbox | None = None

    @property
    def redraws(self) -> int:
        """Frames that changed the board (the tests count them)."""
        return self.board.redraws

    # --- layout ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=self._follow)
        with TabbedContent(initial="tab-board"):
            with TabPane("Board", id="tab-board"):
                yield DataTable(id="board", cursor_type="row", zebra_stripes=True)
            with TabPane("Agents", id="tab-agents"):
                yield DataTable(id="agents", cursor_type="row")
            with TabPane("Reservations", id="tab-reservations"):
                yield DataTable(id="reservations", cursor_type="row")
            with TabPane("Messages", id="tab-messages"):  # issue 34: tui/messages.py
                yield DataTable(id="messages", cursor_type="row")
        yield RichLog(id="feed", max_lines=500, markup=False)
        with Horizontal(id="status"):
            yield Static(id="counts")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        where = self.project or "every project"
        self.title = f"coord top: {where}"
        self.sub_title = f"you act as {self.agent}"
        self._fit(self.size.width, self.size.height)
        self.set_interval(FRAME_S, self._frame)
        self.set_interval(1.0, self._tick)
        if self._follow:
            self.follower.start()
            self.set_interval(SIDE_REFRESH_S, self._refresh_side)
            self._refresh_side()

    def show_fixed(
        self,
        tasks: list[Task],
        agents: list[AgentInfo],
        reservations: list[Reservation],
        events: list[Event] | None = None,
        *,
        inbox: list[Message] | None = None,
        edited_elsewhere: int = 0,
        costs: cost_view.Costs | None = None,
    ) -> None:
        """Show a given board instead of following a daemon (the demo and snapshots);
        `events` fill the feed only (`tasks` are the board as it is after them), `inbox`
        the Messages pane, `edited_elsewhere` the status line's count of files edited in
        2+ worktrees, `costs` the tokens charged so far."""
        self.follower.status = "demo"
        self.board.costs = costs or cost_view.Costs()
        self._edited_elsewhere = edited_elsewhere
        self._show_messages(messages.Inbox(inbox or [], {}))
        self.model.load(tasks, 0)
        self.model.feed.extend(events or ())
        # After the first layout: a RichLog line is cut to the log's width when written.
        self.call_after_refresh(self._write_feed, events or [])
        self.board.rebuild()
        self._show_side(reservations, agents)
        # Now, not at the next frame: a given board is whole, and a picture taken of it
        # (the snapshot tests, on a busy machine) must not depend on a timer's turn.
        self._show_status()

    def on_unmount(self) -> None:
        self.follower.stop()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        """Columns for this width and the feed for this height (layout.py's rule)."""
        feed = self.query_one("#feed", RichLog)
        lines = layout.feed_lines(height, self._feed_shown)
        feed.display = lines > 0
        if lines:
            feed.styles.height = lines + 1  # and its top border
        self.board.set_columns(layout.columns(width))
        redraw = False
        for pane, wanted, rest in PANES:
            redraw |= self._set_pane_columns(pane, layout.pane_columns(width, wanted, rest))
        if redraw and self._side is not None:  # a pane's rows go with its old columns
            self._show_side(*self._side)
        if redraw and self._inbox is not None:
            self._show_messages(self._inbox)
        self._show_status()

    def _set_pane_columns(self, pane: str, wanted: list[tuple[str, int]]) -> bool:
        """Fixed widths for a side pane (cut cells end in "…"); True if they changed."""
        table = self.query_one(f"#{pane}", DataTable)
        now = [(str(c.label), c.width) for c in table.columns.values()]
        if now == wanted:
            return False
        table.clear(columns=True)
        for name, cells in wanted:
            table.add_column(name, width=cells)
        return True

    def action_pane(self, pane: str) -> None:
        """Show the pane and focus it, so the arrows and page keys move in it; the feed
        is shown first if hidden."""
        if pane == "feed":
            feed = self.query_one("#feed", RichLog)
            if not feed.display:
                self.action_toggle_feed()
            feed.focus()
            return
        self.query_one(TabbedContent).active = f"tab-{pane}"
        self.query_one(f"#{pane}", DataTable).focus()

    def action_toggle_feed(self) -> None:
        self._feed_shown = not self.query_one("#feed", RichLog).display
        self._fit(self.size.width, self.size.height)

    # --- live updates ---------------------------------------------------------------

    def _board_shown(self) -> bool:
        """Whether the board is there for a timer to draw on.

        On a loaded machine a timer can fire before the board is mounted or while
        the app is closing and its widgets are gone; the timer then skips its work
        until the next tick."""
        return bool(self.query("#board"))

    def _tick(self) -> None:
        """The clock moved: ages and lease countdowns (`Board.tick`)."""
        if self._board_shown():
            self.board.tick()

    def _frame(self) -> None:
        """Apply whatever arrived since the last frame, in one redraw."""
        if not self._board_shown():
            return
        follower = self.follower
        loaded = follower.loaded is not None
        types: list[str] = []
        first, follower.first = follower.first, None
        if first is not None and follower.loaded is None:  # painted while the rest loads
            self.model.load(first[0], first[2])
            self.model.state_counts = Counter(first[1])
            self.board.rebuild()
        if follower.loaded is not None:
            tasks, seq = follower.loaded
            follower.loaded = None
            self.model.load(tasks, seq)
            self.board.rebuild()
        if follower.events:
            batch: list[Event] = []
            while follower.events:
                batch.append(follower.events.popleft())
            changed = self.model.apply(batch)
            self.board.update_rows(changed)
            self._write_feed(batch)
            types = [event.type for event in batch]
        if self._follow:
            self._cost_frame(types, loaded=loaded)
        self._show_status()

    def _write_feed(self, batch: list[Event]) -> None:
        feed = self.query_one("#feed", RichLog)
        # One line per event, cut with "…" at the log's width (RichLog otherwise measures
        # against the console's width, which need not be the terminal's).
        # The scrollbar's columns are kept free even before it shows: lines already
        # written are not redrawn, so one written wider is cut by it with no "…".
        region = feed.scrollable_content_region.width
        bar = 0 if feed.show_vertical_scrollbar else feed.styles.scrollbar_size_vertical
        width = (region - bar) if region > bar else None
        for event in batch:
            feed.write(plain(feed_line(event)), width=width)

    def _show_status(self) -> None:
        board = self.follower.board_id
        if board and board not in self.sub_title:  # known once the board is loaded
            self.sub_title = f"you act as {self.agent} · board {board}"
        counts = self.model.counts()
        parts = [f"{state} {counts.get(state, 0)}" for state in STATES]
        shown = self.query_one("#board", DataTable).row_count
        name, _ = STATE_FILTERS[self._state_filter]
        extras = [f"{shown} shown ({name})"]
        if self.filter.ready_only:
            extras.append("ready only")
        if self.filter.mine:
            extras.append(f"mine: {self.filter.mine}")
        if self.filter.text:
            extras.append(f'search: "{clean(self.filter.text)}"')
        if spent := sum(self.board.costs.agents.values()):  # issue 48: all charged
            extras.append(f"{cost_view.compact(spent)} tokens")
        if word := edits.status_word(self._edited_elsewhere):
            extras.append(word)
        status = f"daemon {self.follower.status} | " + " ".join(parts)
        lines = [status + " | " + ", ".join(extras)]
        if len(lines[0]) > self.size.width:  # two lines rather than a count cut off
            lines = [status, ", ".join(extras)]
        line = "\n".join(lines)
        if line != self._status_line:  # unchanged: no repaint
            self._status_line = line
            shown_line = Text("\n").join(map(plain, lines))
            shown_line.no_wrap = True  # a search longer than the width is cut with "…"
            shown_line.overflow = "ellipsis"
            self.query_one("#counts", Static).update(shown_line)

    # --- the view ------------------------------------------------------------------

    def _selected(self) -> Task | None:
        board = self.query_one("#board", DataTable)
        if board.row_count == 0:
            return None
        key = board.coordinate_to_cell_key(board.cursor_coordinate).row_key.value
        return self.model.tasks.get(int(key)) if key is not None else None

    def action_help(self) -> None:
        """Each binding once, by the key as typed (`/`, `?`), not its name (`slash`); the
        Messages tab's four on one line."""
        keys = "\n".join(
            f"{self.get_key_display(b):<7} {b.tooltip or b.description}"
            for b in self.BINDINGS
            if isinstance(b, Binding)
            and b.action not in message_actions.ACTIONS
            and b.key not in PANE_KEYS_UNLISTED
        )
        keys += "\n" + message_actions.HELP_LINE  # the Messages tab's keys, on one line
        self.push_screen(Detail("Keys\n" + keys))  # 24 rows hold every line
