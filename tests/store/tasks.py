"""The lifecycle cases' shorthands: a fresh task, a claimed one, a task's event types."""

from __future__ import annotations

from typing import Any

from store.board import Seat


def fresh(client: Seat, **kwargs: Any) -> int:
    return client.post("work", **kwargs).task.id


def claimed(client: Seat, agent: str = "a", lease_s: float = 60) -> tuple[int, int]:
    task_id = fresh(client)
    result = client.claim(task_id, agent, lease_s=lease_s)
    assert result.won
    return task_id, result.task.fence


def event_types(client: Seat, task_id: int) -> list[str]:
    events = client.events_since().events
    return [e.type for e in events if e.task_id == task_id]
