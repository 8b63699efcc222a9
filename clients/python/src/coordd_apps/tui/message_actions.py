"""What the human does on the Messages tab (issue 34): reply to a message, approve or
deny a release request (a denial with a reason), and mark what is shown as read.

Each is confirmed and done as `human-<user>` through actions.py's `_do`, as every
other action of `coord top`; only the holder answers a request, so the keys act on
requests sent to the human, which are the ones this tab lists.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import DataTable, TabbedContent

from coordd_apps import approvals
from coordd_apps.tui import messages
from coordd_apps.tui.actions import QUOTED_CHARS
from coordd_apps.tui.board import plain
from coordd_apps.tui.gate_actions import GateActions
from coordd_apps.tui.screens import Ask, Confirm
from coordd_apps.wording.render_messages import summary
from coordd_client import human
from coordd_wire.wire import AgentInfo, Reservation
from coordd_wire.wire_messages import Message

#: The tab's actions, listed by `?` on one line (`HELP_LINE`) so the keys fit 24 rows.
ACTIONS = frozenset({"reply", "approve", "deny", "mark_read"})
HELP_LINE = "w g d k Messages: reply, approve, deny, mark read"


class MessageActions(GateActions):
    """The Messages tab's keys; TopApp fills `_messages` at each refresh."""

    #: The Messages tab's rows, in order (to find the one under the cursor).
    _messages: list[Message]
    _acks: dict[str, int] | None = None
    _inbox: messages.Inbox | None = None
    #: The live reservations the Reservations pane last read (what an approval ends).
    _reservations: list[Reservation]
    #: The agents the Agents pane last read (a gone requester is refused before asking).
    _agents: list[AgentInfo]

    def _show_messages(self, inbox: messages.Inbox) -> None:
        """Redraw the tab (keeping the cursor's row) and count what waits in its label."""
        if not self.query("#messages"):
            return  # the app is closing
        self._inbox = inbox  # redrawn as it is when the width changes
        shown = self._messages = inbox.messages
        self._acks = inbox.acks
        table = self.query_one("#messages", DataTable)
        row = table.cursor_row
        table.clear()
        for cells in messages.rows(shown):
            table.add_row(*map(plain, cells))  # agents' text, never markup
        if shown:
            table.move_cursor(row=min(max(row, 0), len(shown) - 1))
        waiting = sum(1 for m in shown if m.open)
        tab = self.query_one(TabbedContent).get_tab("tab-messages")
        tab.label = f"Messages ({waiting})" if waiting else "Messages"

    def _selected_message(self) -> Message | None:
        """The message under the cursor, on the Messages tab only."""
        if self.query_one(TabbedContent).active != "tab-messages":
            return None
        row = self.query_one("#messages", DataTable).cursor_row
        return self._messages[row] if 0 <= row < len(self._messages) else None

    def action_reply(self) -> None:
        message = self._selected_message()
        if message is None:
            return
        sender = messages.rows([message])[0][1]

        def written(values: dict[str, str] | None) -> None:
            body = (values or {}).get("body", "").strip()
            if not body:
                return

            def go(yes: bool | None) -> None:
                if yes:
                    self._do(f"reply to #{message.id}", "send_message", body,
                             reply_to=message.id, agent=self.agent,
                             project=message.project)  # fmt: skip

            quoted = summary(body, QUOTED_CHARS)
            self.push_screen(Confirm(f'Reply to #{message.id} from {sender}: "{quoted}"?'), go)

        self.push_screen(Ask(f"Reply to #{message.id} from {sender}", [("body", "reply")]), written)

    def action_approve(self) -> None:
        gate = self._selected_gate()  # on the Board: a gate waiting for you
        if gate is not None:
            self._approve_gate(gate)
            return
        message = self._open_request()
        if message is None:
            return
        gone = approvals.gone_refusal(message, self._agents)
        if gone is not None:  # before the dialog: there is nothing to confirm
            self.notify(gone, severity="error")
            return

        def go(yes: bool | None) -> None:
            if yes:
                self._do(f"approve #{message.id}", "answer_request", message.id, "approve",
                         reason="approved from coord top",
                         agent=human.answering_as(message.to, self.agent))  # fmt: skip

        asked = approvals.request_question("approve", message)
        ended = approvals.ends_whole(message, self._reservations)
        self.push_screen(Confirm(asked, _facts(message, ended)), go)

    def action_deny(self) -> None:
        gate = self._selected_gate()
        if gate is not None:
            self._reject_gate(gate)
            return
        message = self._open_request()
        if message is None:
            return

        def reasoned(values: dict[str, str] | None) -> None:
            if values is None:
                return
            said = values["reason"].strip()
            # The answer that reaches the requester names what stays (`answer_reason`).
            reason = approvals.answer_reason("deny", message, said)

            def go(yes: bool | None) -> None:
                if yes:
                    self._do(f"deny #{message.id}", "answer_request", message.id, "deny",
                             reason=reason,
                             agent=human.answering_as(message.to, self.agent))  # fmt: skip

            asked = approvals.request_question("deny", message, reason=said or "no reason")
            self.push_screen(Confirm(asked, _facts(message)), go)

        self.push_screen(Ask(f"Deny #{message.id}", [("reason", "reason (optional)")]), reasoned)

    def _open_request(self) -> Message | None:
        message = self._selected_message()
        if message is not None and not messages.is_open_request(message):
            self.notify(f"#{message.id} is not an open release request", severity="warning")
            return None
        return message

    def action_mark_read(self) -> None:
        """Acknowledge the messages shown: they leave the tab, and no hook shows them again
        (those above another project's unread message wait for the next `k`). Each name
        read is acknowledged: the human's, and its former terminal names (`human.py`)."""
        acks = dict(self._acks or {})
        if not acks:
            return
        count = sum(1 for m in self._messages if m.id <= max(acks.values()))

        def go(yes: bool | None) -> None:
            if yes:
                for name, up_to in acks.items():
                    what = "mark read" if name == self.agent else f"mark read ({name})"
                    self._do(what, "ack_messages", up_to, agent=name)

        self.push_screen(Confirm(f"Mark {count} message{'s' if count != 1 else ''} read?"), go)


def _facts(message: Message, ended: Sequence[str] = ()) -> str:
    """What a decision on `message` signs, for the dialog (`approvals.request_facts`)."""
    return approvals.facts_text(approvals.request_facts(message, ended))
