"""The board table: which tasks are rows, their cells, and redrawing only what changed.

Textual's DataTable costs time linear in its rows for a removal or a re-sort,
so the rows are touched as little as the board allows: a changed task updates
its own cells, the clock's tick only the cells whose text moved, and a row
that stops matching the filter stays until enough gather (STALE_ROWS_KEPT).
The app (app.py) owns the widget and calls in here each frame and tick.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from coordd_apps import cost_view
from coordd_apps.board_filter import Filter
from coordd_apps.tui.model import BoardModel
from coordd_apps.wording.render import age, age_of, lease_left, state_word
from coordd_client.text import clean
from coordd_wire.wire import Task

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
#: The COST cell against a budget: from 80% spent, from 100% (`cost_view.level`).
BUDGET_STYLE = ("", "yellow", "bold red")


def plain(text: str) -> Text:
    """Someone else's text (a title, an agent's name, a pattern) as a cell or a label.

    Textual parses a `str` as Rich markup: a title `Handle [/api/v1] prefix` raises
    MarkupError in every redraw, and `[link=...]` or `[on red]` restyles the screen.
    Everything agents wrote is shown as a `Text`, never parsed.
    """
    return Text(clean(text), end="", overflow="ellipsis")  # cut short: "…"


class Board:
    """The rows of the `#board` DataTable, kept in step with the model and the filter."""

    def __init__(
        self,
        table: Callable[[], DataTable[Any]],
        model: BoardModel,
        board_filter: Filter,
        clock: Callable[[], datetime],
    ) -> None:
        """Args:
        table: the widget, looked up when needed (it exists once the app is composed).
        clock: the time every relative cell (AGE, LEASE) is computed from.
        """
        self._table = table
        self.model = model
        self.filter = board_filter
        self._clock = clock
        #: The board's columns now, (name, width), from `layout.columns` at this width.
        self.columns: list[tuple[str, int]] = []
        #: The AGE text each row shows, so the tick touches only the cells that change.
        self._ages: dict[int, str] = {}
        self._stale_rows = 0
        self.redraws = 0  # frames that changed the board (the tests count them)
        self.sort = 0  # 0: by id; 1: most urgent first
        #: Tokens charged so far, from the app's last `cost.query` (issue 48).
        self.costs = cost_view.Costs()

    def set_columns(self, wanted: list[tuple[str, int]]) -> None:
        """Show these columns (at a new width), keeping the selected row."""
        if wanted == self.columns:
            return
        self.columns = wanted
        board = self._table()
        selected = self.selected()
        board.clear(columns=True)
        for name, cells in wanted:
            board.add_column(name, key=name, width=cells)  # fixed: never measured again
        self.rebuild()
        self._keep_cursor_on(selected)

    def _keep_cursor_on(self, selected: Task | None) -> None:
        board = self._table()
        if selected is not None and str(selected.id) in board.rows:
            board.move_cursor(row=board.get_row_index(str(selected.id)))

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
            "COST": self._cost(task.id),
            "TITLE": self._title(task),
        }
        return [every[name] for name, _ in self.columns]

    def _cost(self, task_id: int) -> Text:
        spent, budget = self.costs.tasks.get(task_id, 0), self.costs.budgets.get(task_id)
        style = BUDGET_STYLE[cost_view.level(spent, budget)]
        return Text(cost_view.cell(spent, budget), style=style, end="")

    def _title(self, task: Task) -> Text:
        """The title; where the board is too narrow for COST, led by the budget's mark
        (`!80%`, `!100%`), so a spent budget shows at every width."""
        title = plain(task.title)
        if "COST" in {name for name, _ in self.columns}:
            return title
        spent, budget = self.costs.tasks.get(task.id, 0), self.costs.budgets.get(task.id)
        mark = cost_view.title_mark(spent, budget)
        if not mark:
            return title
        style = BUDGET_STYLE[cost_view.level(spent, budget)]
        return Text.assemble((mark, style), " ", title, end="", overflow="ellipsis")

    def show_costs(self, costs: cost_view.Costs) -> None:
        """New sums: only the cells whose text moved are touched (the mark, and so the
        style, is part of the text): COST, or TITLE where COST is not shown."""
        old, self.costs = self.costs, costs
        column = "COST" if "COST" in {name for name, _ in self.columns} else "TITLE"
        board = self._table()
        for task_id in set(old.tasks) | set(costs.tasks) | set(old.budgets) | set(costs.budgets):
            if str(task_id) not in board.rows:
                continue
            spent, budget = old.tasks.get(task_id, 0), old.budgets.get(task_id)
            if column == "COST":
                if cost_view.cell(spent, budget) != (cell := self._cost(task_id)).plain:
                    board.update_cell(str(task_id), column, cell, update_width=False)
                continue
            now_spent, now_budget = costs.tasks.get(task_id, 0), costs.budgets.get(task_id)
            task = self.model.tasks.get(task_id)
            was, mark = (
                cost_view.title_mark(spent, budget),
                cost_view.title_mark(now_spent, now_budget),
            )
            if task is not None and was != mark:
                board.update_cell(str(task_id), column, self._title(task), update_width=False)

    def rebuild(self) -> None:
        """Every row again, from the model through the filter (a new filter or board)."""
        board = self._table()
        board.clear()
        self._ages.clear()
        now = self._clock()
        for task in sorted(self.model.tasks.values(), key=lambda t: t.id):
            if self.filter.admits(task):
                board.add_row(*self._cells(task, now), key=str(task.id))
        self.apply_sort()
        self._stale_rows = 0
        self.redraws += 1

    def update_rows(self, changed: set[int]) -> None:
        """The rows of the tasks a batch of events changed, and only those."""
        board = self._table()
        now = self._clock()
        added = False
        for task_id in changed:
            task = self.model.tasks[task_id]
            key = str(task_id)
            present = key in board.rows
            if self.filter.admits(task):
                cells = self._cells(task, now)
                if present:
                    for (column, _), value in zip(self.columns, cells, strict=True):
                        board.update_cell(key, column, value, update_width=False)
                else:
                    board.add_row(*cells, key=key)
                    added = True
            elif present:
                cells = self._cells(task, now)
                for (column, _), value in zip(self.columns, cells, strict=True):
                    board.update_cell(key, column, value, update_width=False)
                self._stale_rows += 1
        if self._stale_rows > STALE_ROWS_KEPT:
            self._tidy()
        if added:
            self.apply_sort()
        self.redraws += 1

    def _tidy(self) -> None:
        """Drop the rows that stopped matching (see STALE_ROWS_KEPT), keeping the cursor."""
        if not self._stale_rows:
            return
        selected = self.selected()
        self.rebuild()
        self._keep_cursor_on(selected)

    def tick(self) -> None:
        """The clock moved: lease countdowns, lapses and ages, without asking the daemon.

        Every row's AGE is recomputed (a subtraction per row, from the model's parsed
        `updated_at`), and only the cells whose text changed are touched: seconds-old
        rows each second, the rest once a minute or an hour.
        """
        board = self._table()
        now = self._clock()
        shown = {name for name, _ in self.columns}
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

    def apply_sort(self) -> None:
        """By the ID column, always shown; the priority comes from the model (PRI may
        not be on screen at this width)."""
        board = self._table()
        if self.sort == 0:
            board.sort("ID")
        else:  # most urgent first, then oldest
            tasks = self.model.tasks
            board.sort("ID", key=lambda task_id: (-tasks[task_id].priority, task_id))

    def cycle_sort(self) -> None:
        self.sort = (self.sort + 1) % 2
        self.apply_sort()

    def selected(self) -> Task | None:
        """The task under the cursor, if the board has rows."""
        board = self._table()
        if board.row_count == 0:
            return None
        key = board.coordinate_to_cell_key(board.cursor_coordinate).row_key.value
        return self.model.tasks.get(int(key)) if key is not None else None
