"""The Textual app: board, agents, reservations and the live feed, and the human's actions.

Every action is confirmed and done as the agent `human-<user>` through the
socket, from a worker thread so the screen never stalls on the daemon.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    RichLog,
    Static,
    TabbedContent,
    TabPane,
)

from coordd_client import presence, render
from coordd_client.client import Client
from coordd_client.paging import task_history
from coordd_client.protocol.errors import CoordError
from coordd_client.protocol.wire import AgentInfo, Event, Reservation, Task
from coordd_client.tui import layout
from coordd_client.tui.follow import Follower
from coordd_client.tui.model import (
    STATES,
    BoardModel,
    Filter,
    age,
    age_of,
    feed_line,
    lease_left,
    state_word,
)

#: Seconds per frame: events that arrive between two frames are drawn together. Each
#: redraw of a changed DataTable costs time linear in its rows (measured: 10,000 rows
#: at 50 events/s took most of a core at 20 frames/s), so five a second.
FRAME_S = 0.2
#: Reservations and agents carry no events (PROTOCOL.md section 7): re-read this often.
SIDE_REFRESH_S = 2.0
#: A row that stops matching the filter (a task just done) stays, showing its new
#: state (what just happened), until the filter changes or this many gather: Textual's
#: DataTable removes a row, and adds many, in time linear in the table.
STALE_ROWS_KEPT = 1000
STYLE = {
    "pending": "yellow",
    "blocked": "magenta",
    "claimed": "cyan",
    "lapsed": "bold red",
    "done": "green",
    "failed": "red",
    "cancelled": "dim",
}
STATE_FILTERS = (
    ("open", frozenset({"pending", "claimed", "failed"})),
    ("all", frozenset(STATES)),
    ("pending", frozenset({"pending"})),
    ("claimed", frozenset({"claimed"})),
    ("done", frozenset({"done"})),
)


def human_agent() -> str:
    return f"human-{render.clean(getpass.getuser())}"


def plain(text: str) -> Text:
    """Someone else's text (a title, an agent's name, a pattern) as a cell or a label.

    Textual parses a `str` as Rich markup: a title `Handle [/api/v1] prefix` raises
    MarkupError in every redraw, and `[link=...]` or `[on red]` restyles the screen.
    Everything agents wrote is shown as a `Text`, never parsed.
    """
    return Text(render.clean(text), end="", overflow="ellipsis")  # cut short: "…"


class Confirm(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        ("y", "answer(True)", "yes"),
        ("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, markup=False)
            yield Label("y: yes   n: no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Ask(ModalScreen[dict[str, str] | None]):
    """A small form: one Input per field; Enter submits, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "cancel", "cancel")]

    def __init__(self, title: str, fields: list[tuple[str, str]]) -> None:
        super().__init__()
        self.form_title = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.form_title, markup=False)
            for name, placeholder in self.fields:
                yield Input(placeholder=placeholder, id=f"field-{name}")
            yield Button("OK (enter)", id="ok")

    def on_input_submitted(self) -> None:
        self._submit()

    def on_button_pressed(self) -> None:
        self._submit()

    def _submit(self) -> None:
        values = {name: self.query_one(f"#field-{name}", Input).value for name, _ in self.fields}
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Detail(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("escape,q,enter", "close", "close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="detail"):
            yield Static(self.text, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


class TopApp(App[None]):
    CSS = """
    TabbedContent, ContentSwitcher, TabPane, #board { height: 1fr; }
    #feed { height: auto; border-top: solid $accent; overflow-y: auto; }
    #status { height: 1; background: $panel; }
    #dialog, #detail { width: 80%; max-width: 100; height: auto; max-height: 90%;
                       border: thick $accent; padding: 1 2; background: $surface; }
    Confirm, Ask, Detail { align: center middle; }
    """
    #: The footer shows the keys that fit 80 columns; `?` lists every one, by its tooltip.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "post", "post", tooltip="post a task"),
        Binding("a", "assign", "assign", tooltip="assign the selected task"),
        Binding("c", "cancel_task", "cancel", tooltip="cancel the selected task"),
        Binding("o", "reopen", "reopen", show=False, tooltip="reopen the selected task"),
        Binding("x", "release_agent", "release", tooltip="release all an agent holds"),
        Binding(
            "enter",
            "detail",
            "detail",
            show=False,
            key_display="enter",
            tooltip="task detail and history",
        ),
        Binding("f", "cycle_states", "states", tooltip="states: open, all, pending, ..."),
        Binding("slash", "search", "search", tooltip="search titles"),
        Binding("r", "ready_only", "ready", show=False, tooltip="ready tasks only"),
        Binding("m", "mine", "mine", show=False, tooltip="only yours"),
        Binding("s", "cycle_sort", "sort", show=False, tooltip="by id, or most urgent first"),
        Binding("e", "toggle_feed", "events", tooltip="show or hide the event feed"),
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
        #: The board's columns now, (name, width), from `layout.columns` at this width.
        self._columns: list[tuple[str, int]] = []
        #: The AGE text each row shows, so the tick touches only the cells that change.
        self._ages: dict[int, str] = {}
        self._feed_shown: bool | None = None  # None: by the height (layout.feed_lines)
        self._status_line = ""
        self._stale_rows = 0
        self.redraws = 0  # frames that changed the board (the tests count them)
        self._state_filter = 0
        self._sort = 0
        self._reservations: list[Reservation] = []
        self._agents: list[AgentInfo] = []

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
        yield RichLog(id="feed", max_lines=500, markup=False)
        with Horizontal(id="status"):
            yield Static(id="counts")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        where = self.project or "every project"
        self.title = f"coord top: {where}"
        self.sub_title = f"you act as {self.agent}"
        self._fit(self.size.width, self.size.height)
        self.query_one("#agents", DataTable).add_columns("AGENT", "SEEN", "HOLDS", "RESERVED")
        self.query_one("#reservations", DataTable).add_columns(
            "ID", "PATTERN", "HOLDER", "MODE", "EXPIRES", "TASK"
        )
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
    ) -> None:
        """Show a given board instead of following a daemon (the demo and snapshots);
        `events` fill the feed only (`tasks` are the board as it is after them)."""
        self.follower.status = "demo"
        self.model.load(tasks, 0)
        self.model.feed.extend(events or ())
        # After the first layout: a RichLog line is cut to the log's width when written.
        self.call_after_refresh(self._write_feed, events or [])
        self._rebuild()
        self._show_side(reservations, agents)

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
        wanted = layout.columns(width)
        if wanted == self._columns:
            return
        self._columns = wanted
        board = self.query_one("#board", DataTable)
        selected = self._selected()
        board.clear(columns=True)
        for name, cells in wanted:
            board.add_column(name, key=name, width=cells)  # fixed: never measured again
        self._rebuild()
        if selected is not None and str(selected.id) in board.rows:
            board.move_cursor(row=board.get_row_index(str(selected.id)))

    def action_toggle_feed(self) -> None:
        self._feed_shown = not self.query_one("#feed", RichLog).display
        self._fit(self.size.width, self.size.height)

    # --- live updates ---------------------------------------------------------------

    def _frame(self) -> None:
        """Apply whatever arrived since the last frame, in one redraw."""
        follower = self.follower
        if follower.loaded is not None:
            tasks, seq = follower.loaded
            follower.loaded = None
            self.model.load(tasks, seq)
            self._rebuild()
        if follower.events:
            batch: list[Event] = []
            while follower.events:
                batch.append(follower.events.popleft())
            changed = self.model.apply(batch)
            self._update_rows(changed)
            self._write_feed(batch)
        self._show_status()

    def _write_feed(self, batch: list[Event]) -> None:
        feed = self.query_one("#feed", RichLog)
        # One line per event, cut with "…" at the log's width (RichLog otherwise measures
        # against the console's width, which need not be the terminal's).
        width = feed.scrollable_content_region.width or None
        for event in batch:
            feed.write(plain(feed_line(event)), width=width)

    def _now(self) -> datetime:
        return self._clock()

    def _cells(self, task: Task, now: datetime) -> list[Any]:
        """The row's cells, for the columns shown at this width."""
        word = state_word(task, now)
        who = task.claimed_by or (f"-> {task.assignee}" if task.assignee else "")
        shown = age(task.updated_at, now)
        self._ages[task.id] = shown
        every: dict[str, Any] = {
            "ID": task.id,
            "STATE": Text(word, style=STYLE.get(word, "")),
            "PRI": task.priority,
            "KIND": plain(task.kind),
            "WHO": plain(who),
            "LEASE": lease_left(task, now),
            "BLOCKED BY": plain(",".join(f"#{i}" for i in task.blocked_by)),
            "AGE": shown,
            "TITLE": plain(task.title),
        }
        return [every[name] for name, _ in self._columns]

    def _rebuild(self) -> None:
        board = self.query_one("#board", DataTable)
        board.clear()
        self._ages.clear()
        now = self._now()
        for task in sorted(self.model.tasks.values(), key=lambda t: t.id):
            if self.filter.admits(task):
                board.add_row(*self._cells(task, now), key=str(task.id))
        self._apply_sort()
        self._stale_rows = 0
        self.redraws += 1

    def _update_rows(self, changed: set[int]) -> None:
        board = self.query_one("#board", DataTable)
        now = self._now()
        added = False
        for task_id in changed:
            task = self.model.tasks[task_id]
            key = str(task_id)
            present = key in board.rows
            if self.filter.admits(task):
                cells = self._cells(task, now)
                if present:
                    for (column, _), value in zip(self._columns, cells, strict=True):
                        board.update_cell(key, column, value, update_width=False)
                else:
                    board.add_row(*cells, key=key)
                    added = True
            elif present:
                cells = self._cells(task, now)
                for (column, _), value in zip(self._columns, cells, strict=True):
                    board.update_cell(key, column, value, update_width=False)
                self._stale_rows += 1
        if self._stale_rows > STALE_ROWS_KEPT:
            self._tidy()
        if added:
            self._apply_sort()
        self.redraws += 1

    def _tidy(self) -> None:
        """Drop the rows that stopped matching (see STALE_ROWS_KEPT), keeping the cursor."""
        if not self._stale_rows:
            return
        board = self.query_one("#board", DataTable)
        selected = self._selected()
        self._rebuild()
        if selected is not None and str(selected.id) in board.rows:
            board.move_cursor(row=board.get_row_index(str(selected.id)))

    def _tick(self) -> None:
        """The clock moved: lease countdowns, lapses and ages, without asking the daemon.

        Every row's AGE is recomputed (a subtraction per row, from the model's parsed
        `updated_at`), and only the cells whose text changed are touched: seconds-old
        rows each second, the rest once a minute or an hour.
        """
        board = self.query_one("#board", DataTable)
        now = self._now()
        shown = {name for name, _ in self._columns}
        for task_id in self.model.claimed:
            key = str(task_id)
            if key in board.rows:
                task = self.model.tasks[task_id]
                if "LEASE" in shown:
                    board.update_cell(key, "LEASE", lease_left(task, now), update_width=False)
                word = state_word(task, now)
                styled = Text(word, style=STYLE.get(word, ""))
                board.update_cell(key, "STATE", styled, update_width=False)
        if "AGE" in shown:
            moment = now.timestamp()
            updated, ages = self.model.updated, self._ages
            for task_id, was in ages.items():
                text = age_of(moment - updated[task_id])
                if text != was:
                    ages[task_id] = text
                    board.update_cell(str(task_id), "AGE", text, update_width=False)

    def _apply_sort(self) -> None:
        """By the ID column, always shown; the priority comes from the model (PRI may
        not be on screen at this width)."""
        board = self.query_one("#board", DataTable)
        if self._sort == 0:
            board.sort("ID")
        else:  # most urgent first, then oldest
            tasks = self.model.tasks
            board.sort("ID", key=lambda task_id: (-tasks[task_id].priority, task_id))

    def _show_status(self) -> None:
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
            extras.append(f"search: {self.filter.text!r}")
        status = f"daemon {self.follower.status} | " + " ".join(parts)
        line = status + " | " + ", ".join(extras)
        if line != self._status_line:  # unchanged: no repaint
            self._status_line = line
            shown_line = plain(line)
            shown_line.no_wrap = True  # one line, cut with "…" when narrow
            self.query_one("#counts", Static).update(shown_line)

    @work(thread=True, exclusive=True, group="side")
    def _refresh_side(self) -> None:
        try:
            with Client(self.socket, timeout_s=5) as client:
                reservations = client.reservations(project=self.project).reservations
                agents = client.agents().agents
        except CoordError:
            return
        self.call_from_thread(self._show_side, reservations, agents)

    def _show_side(self, reservations: list[Reservation], agents: list[AgentInfo]) -> None:
        """The two panes that have no events; agents scoped as `presence` says."""
        now = self._now()
        held = self.model.holdings()
        holders = set(held) | {r.agent for r in reservations}
        involved = None
        if self.project is not None:
            involved = presence.involved(self.model.tasks.values(), self.model.feed)
        agents = presence.scoped(agents, now, holders=holders, involved=involved)
        self._reservations, self._agents = reservations, agents
        table = self.query_one("#reservations", DataTable)
        table.clear()
        for r in reservations:
            mode = "exclusive" if r.exclusive else "shared"
            task = f"#{r.task_id}" if r.task_id else ""
            table.add_row(r.id, plain(r.pattern), plain(r.agent), mode,
                          render.relative(r.expires_at, now), task)  # fmt: skip
        reserved: dict[str, int] = {}
        for r in reservations:
            reserved[r.agent] = reserved.get(r.agent, 0) + 1
        people = self.query_one("#agents", DataTable)
        people.clear()
        for a in agents:
            seen = age(a.last_seen, now)
            stale = now - render.parse_time(a.last_seen) >= presence.HORIZON
            holds = ",".join(f"#{i}" for i in held.get(a.agent, [])) or "-"
            people.add_row(plain(a.agent), f"{seen}{' (stale)' if stale else ''}", holds,
                           str(reserved.get(a.agent, 0)))  # fmt: skip

    # --- actions ----------------------------------------------------------------------

    def _selected(self) -> Task | None:
        board = self.query_one("#board", DataTable)
        if board.row_count == 0:
            return None
        key = board.coordinate_to_cell_key(board.cursor_coordinate).row_key.value
        return self.model.tasks.get(int(key)) if key is not None else None

    @work(thread=True, group="actions")
    def _do(self, what: str, method: str, *args: Any, **kwargs: Any) -> None:
        try:
            with Client(self.socket, timeout_s=10) as client:
                getattr(client, method)(*args, **kwargs)
        except CoordError as exc:
            self.call_from_thread(
                self.notify, f"{what}: {exc.message}", severity="error", markup=False
            )
            return
        self.call_from_thread(self.notify, f"{what}: done", markup=False)

    def action_post(self) -> None:
        fields = [
            ("title", "title"),
            ("kind", "kind (task)"),
            ("priority", "priority (0)"),
            ("assignee", "assignee (none)"),
            ("after", "depends on: ids, e.g. 3 7"),
        ]

        def posted(values: dict[str, str] | None) -> None:
            if not values or not values["title"].strip():
                return
            try:
                priority = int(values["priority"] or 0)
                after = [int(x.lstrip("#")) for x in values["after"].replace(",", " ").split()]
            except ValueError:
                self.notify("priority and depends-on must be numbers", severity="error")
                return
            project = self.project or "default"

            def go(yes: bool | None) -> None:
                if yes:
                    self._do("post", "post", values["title"].strip(), kind=values["kind"] or None,
                             priority=priority, assignee=values["assignee"] or None,
                             depends_on=after or None, agent=self.agent,
                             project=project)  # fmt: skip

            self.push_screen(Confirm(f"Post {values['title'].strip()!r} to {project}?"), go)

        self.push_screen(Ask("Post a task", fields), posted)

    def action_assign(self) -> None:
        task = self._selected()
        if task is None:
            return

        def chosen(values: dict[str, str] | None) -> None:
            if values is None:
                return
            assignee = values["agent"].strip() or None

            def go(yes: bool | None) -> None:
                if yes:
                    self._do(f"assign #{task.id}", "assign", task.id, assignee, agent=self.agent)

            self.push_screen(Confirm(f"Assign #{task.id} to {assignee or 'nobody'}?"), go)

        self.push_screen(Ask(f"Assign #{task.id} to", [("agent", "agent (empty: clear)")]), chosen)

    def action_cancel_task(self) -> None:
        self._confirm_then("cancel", "cancel")

    def action_reopen(self) -> None:
        self._confirm_then("reopen", "reopen")

    def _confirm_then(self, verb: str, method: str) -> None:
        """Ask about the selected task, then call `method(id, agent=me)` on yes."""
        task = self._selected()
        if task is None:
            return

        def go(yes: bool | None) -> None:
            if yes:
                self._do(f"{verb} #{task.id}", method, task.id, agent=self.agent)

        self.push_screen(Confirm(f"{verb.capitalize()} #{task.id} {task.title[:60]!r}?"), go)

    def _selected_agent(self) -> str | None:
        """On the Agents tab, the agent under the cursor; elsewhere the selected task's
        holder (or, for a pending task, its assignee)."""
        if self.query_one(TabbedContent).active == "tab-agents":
            people = self.query_one("#agents", DataTable)
            row = people.cursor_row
            return self._agents[row].agent if 0 <= row < len(self._agents) else None
        task = self._selected()
        return None if task is None else task.claimed_by or task.assignee

    def action_release_agent(self) -> None:
        """Let go of everything the selected agent holds (1.2 `agent.release`), as me."""
        of = self._selected_agent()
        if of is None:
            return
        where = self.project or "every project"

        def go(yes: bool | None) -> None:
            if yes:
                self._do(f"release {render.clean(of)}", "release_agent", of, agent=self.agent,
                         project=self.project, reason="released from coord top")  # fmt: skip

        question = f"Release everything {render.clean(of)} holds in {where}?"
        self.push_screen(Confirm(question + " (claims, reservations, assignments)"), go)

    def action_detail(self) -> None:
        task = self._selected()
        if task is not None:
            self._load_detail(task.id)

    @work(thread=True, group="detail")
    def _load_detail(self, task_id: int) -> None:
        try:
            with Client(self.socket, timeout_s=10) as client:
                task = client.get(task_id).task
                history = task_history(client, task_id)
        except CoordError as exc:
            self.call_from_thread(self.notify, exc.message, severity="error", markup=False)
            return
        text = render.task_detail(task) + "\n\nHistory:\n"
        text += "\n".join(render.history_line(e) for e in history)
        self.call_from_thread(self.push_screen, Detail(text))

    def action_cycle_states(self) -> None:
        self._state_filter = (self._state_filter + 1) % len(STATE_FILTERS)
        self.filter.states = STATE_FILTERS[self._state_filter][1]
        self._rebuild()

    def action_ready_only(self) -> None:
        self.filter.ready_only = not self.filter.ready_only
        self._rebuild()

    def action_mine(self) -> None:
        self.filter.mine = None if self.filter.mine else self.agent
        self._rebuild()

    def action_cycle_sort(self) -> None:
        self._sort = (self._sort + 1) % 2
        self._apply_sort()

    def action_search(self) -> None:
        def searched(values: dict[str, str] | None) -> None:
            if values is not None:
                self.filter.text = values["text"].strip()
                self._rebuild()

        self.push_screen(Ask("Search titles", [("text", "text (empty: all)")]), searched)

    def action_help(self) -> None:
        """Each binding once, by the key as typed (`/`, `?`), not its name (`slash`)."""
        keys = "\n".join(
            f"{self.get_key_display(b):<7} {b.tooltip or b.description}"
            for b in self.BINDINGS
            if isinstance(b, Binding)
        )
        self.push_screen(Detail("Keys\n\n" + keys))
