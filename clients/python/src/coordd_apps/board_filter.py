"""Which tasks a board view shows: the one filter `coord top` and `coord web` share."""

from __future__ import annotations

from dataclasses import dataclass

from coordd_wire.wire import Task


@dataclass
class Filter:
    states: frozenset[str] = frozenset({"pending", "claimed", "failed"})
    kind: str | None = None
    text: str = ""
    ready_only: bool = False
    mine: str | None = None  # an agent: held by or assigned to

    def admits(self, task: Task) -> bool:
        if task.state not in self.states:
            return False
        if self.kind is not None and task.kind != self.kind:
            return False
        if self.ready_only and not task.ready:
            return False
        if self.mine is not None and self.mine not in (task.claimed_by, task.assignee):
            return False
        return not self.text or self.text.lower() in task.title.lower()
