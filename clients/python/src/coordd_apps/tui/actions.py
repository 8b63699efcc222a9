"""What the human does from `coord top`: post, assign, cancel, reopen, release, read a task.

Every action is confirmed (screens.py) and done as the agent `human-<user>`
through the socket, from a worker thread so the screen never stalls on the
daemon; the outcome comes back as a notification. The app (app.py) inherits
these and binds them to keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.widgets import DataTable, TabbedContent

from coordd_apps.tui.board import Board
from coordd_apps.tui.screens import Ask, Confirm, Detail
from coordd_apps.wording import render
from coordd_apps.wording.render_messages import summary
from coordd_client.client import Client
from coordd_client.paging import task_history
from coordd_client.text import clean
from coordd_wire.errors import CoordError
from coordd_wire.wire import AgentInfo

#: A title or a reply quoted in a confirmation is cut here, with "…" (the dialog wraps).
QUOTED_CHARS = 120


class HumanActions(App[None]):
    """The actions; TopApp sets what they read in its `__init__`."""

    socket: Path
    project: str | None
    agent: str
    board: Board
    #: The Agents tab's rows, in order (to find the one under the cursor).
    _agents: list[AgentInfo]

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

            self.push_screen(Confirm(f'Post "{clean(values["title"].strip())}" to {project}?'), go)

        self.push_screen(Ask("Post a task", fields), posted)

    def action_assign(self) -> None:
        task = self.board.selected()
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
        task = self.board.selected()
        if task is None:
            return

        def go(yes: bool | None) -> None:
            if yes:
                self._do(f"{verb} #{task.id}", method, task.id, agent=self.agent)

        self.push_screen(
            Confirm(f'{verb.capitalize()} #{task.id} "{summary(task.title, QUOTED_CHARS)}"?'),
            go,
        )

    def _selected_agent(self) -> str | None:
        """On the Agents tab, the agent under the cursor; elsewhere the selected task's
        holder (or, for a pending task, its assignee)."""
        if self.query_one(TabbedContent).active == "tab-agents":
            people = self.query_one("#agents", DataTable)
            row = people.cursor_row
            return self._agents[row].agent if 0 <= row < len(self._agents) else None
        task = self.board.selected()
        return None if task is None else task.claimed_by or task.assignee

    def action_release_agent(self) -> None:
        """Let go of everything the selected agent holds (1.2 `agent.release`), as me."""
        of = self._selected_agent()
        if of is None:
            return
        where = self.project or "every project"

        def go(yes: bool | None) -> None:
            if yes:
                self._do(f"release {clean(of)}", "release_agent", of, agent=self.agent,
                         project=self.project, reason="released from coord top")  # fmt: skip

        question = f"Release everything {clean(of)} holds in {where}?"
        self.push_screen(Confirm(question + " (claims, reservations, assignments)"), go)

    def action_detail(self) -> None:
        task = self.board.selected()
        if task is not None:
            self._load_detail(task.id)

    @work(thread=True, group="detail")
    def _load_detail(self, task_id: int) -> None:
        try:
            with Client(self.socket, timeout_s=10) as client:
                task = client.get(task_id).task
                history = task_history(client, task_id, budgets=True)
        except CoordError as exc:
            self.call_from_thread(self.notify, exc.message, severity="error", markup=False)
            return
        text = render.task_detail(task) + "\n\nHistory:\n"
        text += "\n".join(render.history_line(e) for e in history)
        self.call_from_thread(self.push_screen, Detail(text))
