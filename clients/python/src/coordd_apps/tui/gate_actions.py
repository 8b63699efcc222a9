"""Approval gates from `coord top` (issue 47 item 3, found in review: only the web could
decide one): `g` / `d` on the Board tab approve or reject the selected task when it
waits for the human, with the dialog the web's confirm page has (the gate's title,
question and asker) and, as the web does, the asker told the decision and the reason
by a message on the gate's thread, which reaches and wakes its tab."""

from __future__ import annotations

import contextlib

from textual import work
from textual.widgets import TabbedContent

from coordd_apps import approvals
from coordd_apps.tui.actions import HumanActions
from coordd_apps.tui.screens import Ask, Confirm
from coordd_client.client import Client
from coordd_wire.errors import CoordError
from coordd_wire.wire import Task


class GateActions(HumanActions):
    """Deciding the selected gate; `MessageActions` routes `g` and `d` here on the Board."""

    def _selected_gate(self) -> Task | None:
        """The task under the cursor when the Board tab shows and it waits for the human."""
        if self.query_one(TabbedContent).active == "tab-messages":
            return None
        task = self.board.selected()
        if task is None or task.assignee != self.agent or task.state not in ("pending", "claimed"):
            return None
        return task

    def _approve_gate(self, task: Task) -> None:
        def go(yes: bool | None) -> None:
            if yes:
                self._decide_gate(task, "approved")

        facts = approvals.facts_text(approvals.gate_facts(task))
        self.push_screen(Confirm(approvals.gate_question("approve", task), facts), go)

    def _reject_gate(self, task: Task) -> None:
        def reasoned(values: dict[str, str] | None) -> None:
            said = (values or {}).get("reason", "").strip()
            if not said:
                return  # a reason is needed to reject, as on the web

            def go(yes: bool | None) -> None:
                if yes:
                    self._decide_gate(task, "rejected", said)

            facts = approvals.facts_text(approvals.gate_facts(task))
            self.push_screen(Confirm(approvals.gate_question("reject", task, said), facts), go)

        self.push_screen(Ask(f"Reject gate #{task.id}", [("reason", "why (required)")]), reasoned)

    @work(thread=True, group="actions")
    def _decide_gate(self, task: Task, decision: str, reason: str = "") -> None:
        """Claim the gate as the human, complete (approved) or fail it (rejected), then
        message its asker, as `web/acts.py` does."""
        what = f"{'approve' if decision == 'approved' else 'reject'} #{task.id}"
        try:
            with Client(self.socket, timeout_s=10) as client:
                claim = client.claim(task.id, self.agent)
                if not claim.won:
                    holder = claim.task.claimed_by or "someone"
                    raise CoordError(f"#{task.id} is held by {holder} now")
                if decision == "approved":
                    result = approvals.gate_result(self.agent, task)
                    done = client.complete(task.id, self.agent, fence=claim.task.fence,
                                           result=result).task  # fmt: skip
                else:
                    done = client.fail(task.id, self.agent, fence=claim.task.fence,
                                       reason=reason).task  # fmt: skip
                asker = task.created_by
                if asker and asker != self.agent:
                    with contextlib.suppress(CoordError):  # the decision stands regardless
                        client.send_message(
                            approvals.gate_answer(decision, done, reason),
                            to=asker,
                            task_id=task.id,
                            agent=self.agent,
                            project=task.project,
                        )
        except CoordError as exc:
            self.call_from_thread(
                self.notify, f"{what}: {exc.message}", severity="error", markup=False
            )
            return
        self.call_from_thread(self.notify, f"{what}: done", markup=False)
