"""`coord top`'s pieces without a screen: its board model, and its absence when Textual is.

Beside test_top.py (the app in Textual's harness), these need no app running.
"""

from __future__ import annotations

from typing import Any

import msgspec

from coordd_apps.tui import demo
from coordd_apps.tui.model import BoardModel
from coordd_wire.wire import Event, Task
from support import coord_without


def test_without_textual_coord_top_says_what_to_install() -> None:
    result = coord_without("textual", "top")
    assert result.returncode == 1
    assert "pip install 'coordd-client[tui]'" in result.stderr


def test_the_model_updates_a_dependent_no_event_names() -> None:
    """The rule on its own: #2 done takes #2 out of #3's blocked_by, #2 reopened puts
    it back, with only #2's events (PROTOCOL.md section 9 appends none for #3)."""
    base = demo.TASKS[0]

    def task(task_id: int, state: str, **fields: Any) -> Task:
        return msgspec.structs.replace(base, id=task_id, state=state, claimed_by=None, **fields)

    model = BoardModel()
    model.load([task(1, "pending"), task(2, "pending"),
                task(3, "pending", depends_on=[1, 2], blocked_by=[1, 2])], 10)  # fmt: skip

    def event(seq: int, changed: Task) -> Event:
        return Event(seq=seq, at=base.updated_at, type="task.completed", task_id=changed.id,
                     agent="w", task=changed)  # fmt: skip

    assert model.apply([event(11, task(2, "done"))]) == {2, 3}
    assert model.tasks[3].blocked_by == [1]
    assert model.apply([event(12, task(2, "pending"))]) == {2, 3}
    assert model.tasks[3].blocked_by == [1, 2]
