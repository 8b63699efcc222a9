"""docs/PROTOCOL-1.2.md section 6c on the store (`store/urgent.py`): `task.list` in claim
order with its cursor, per-state counts and `open_to`, answered alike by both stores;
and a 1.1 call's answer byte for byte what it was.

The query plans (only open tasks' partial indexes walked) are checked on SQLite in
tests/integration/test_query_plans.py.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from coordd_client import InvalidParams
from coordd_wire.wire import Task
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends


def _board(client: Seat) -> list[Task]:
    """Tasks of every state over two projects and kinds, priorities tied and not,
    some assigned; every task as it stands at the end."""
    rng = random.Random(59)
    ids = []
    for n in range(60):
        project = "/a" if n % 3 else "/b"
        kind = "bug" if n % 4 == 0 else "task"
        assignee = ("x", "y", None, None)[n % 4]
        task = client.post(f"t{n}", project=project, kind=kind, priority=rng.choice([-5, 0, 3, 9]),
                           assignee=assignee).task  # fmt: skip
        ids.append(task.id)
    for n, task_id in enumerate(ids):
        agent = client.get(task_id).task.assignee or "z"
        if n % 5 in (1, 2):
            assert client.claim(task_id, agent).won
        if n % 5 == 2:
            client.complete(task_id, agent)
        if n % 10 == 3:
            client.cancel(task_id)
    return [client.get(task_id).task for task_id in ids]


def _urgent(tasks: list[Task]) -> list[int]:
    return [t.id for t in sorted(tasks, key=lambda t: (-t.priority, t.id))]


def _paged(client: Seat, limit: int, order: str = "urgent", **filters: Any) -> list[int]:
    found: list[int] = []
    after: tuple[int | None, int] | None = None
    while True:
        cursor = {} if after is None else {"after_priority": after[0], "after_id": after[1]}
        page = client.list_tasks(order=order, limit=limit, **cursor, **filters)  # type: ignore[arg-type]
        found += [t.id for t in page.tasks]
        if page.next_after_id is None:
            assert page.next_after_priority is None
            return found
        assert (page.next_after_priority is not None) == (order == "urgent")
        after = (page.next_after_priority, page.next_after_id)


def test_urgent_order_pages_in_claim_order_with_every_filter(board: Board) -> None:
    with board.seat() as client:
        tasks = _board(client)
        cases: list[dict[str, Any]] = [
            {},
            {"state": ["pending", "claimed"]},
            {"state": "pending", "project": "/a"},
            {"state": ["claimed", "done"], "kind": "task"},
            {"ready": True, "open_to": "x"},
            {"state": "claimed", "claimed_by": "z", "project": "/b"},
            {"state": ["pending", "cancelled"], "assignee": "y"},
        ]
        for filters in cases:
            states = filters.get("state")
            states = [states] if isinstance(states, str) else states

            def admits(t: Task, f: dict[str, object] = filters, s: object = states) -> bool:
                return (
                    (s is None or t.state in s)  # type: ignore[operator]
                    and (not f.get("ready") or (t.state == "pending" and t.ready))
                    and f.get("project", t.project) == t.project
                    and f.get("kind", t.kind) == t.kind
                    and f.get("claimed_by", t.claimed_by) == t.claimed_by
                    and f.get("assignee", t.assignee) == t.assignee
                    and t.assignee in (None, f.get("open_to", t.assignee))
                )

            expected = _urgent([t for t in tasks if admits(t)])
            assert expected, filters
            newest = sorted(expected, reverse=True)
            for limit in (1, 4, 1000):
                assert _paged(client, limit, **filters) == expected, (filters, limit)
                assert _paged(client, limit, order="newest", **filters) == newest, limit
                # By id, as 1.1 pages (by state when no `done` is admitted).
                assert _paged(client, limit, order="id", **filters) == newest[::-1], limit
            counted = client.list_tasks(order="urgent", limit=1, counts=True, **filters).counts
            by_id = client.list_tasks(limit=1, counts=True, **filters).counts
            assert counted == by_id
            assert counted is not None and sum(counted.values()) == len(expected), filters
            for state, count in counted.items():
                assert count == sum(1 for t in tasks if admits(t) and t.state == state)
        # The counts name exactly the states the filter admits, zeros included.
        none_failed = client.list_tasks(state=["pending", "failed"], counts=True).counts
        assert none_failed is not None and set(none_failed) == {"pending", "failed"}
        assert none_failed["failed"] == 0


def test_a_list_without_the_new_params_answers_as_in_1_1(board: Board) -> None:
    with board.seat() as client:
        for n in range(3):
            client.post(f"t{n}", priority=n)
        answer = msgspec.json.decode(board.answer("task.list", {"limit": 2}))
        assert list(answer) == ["tasks", "next_after_id"]
        assert [t["priority"] for t in answer["tasks"]] == [0, 1]
        urgent = msgspec.json.decode(board.answer("task.list", {"limit": 2, "order": "urgent"}))
        assert list(urgent) == ["tasks", "next_after_id", "next_after_priority"]
        assert [t["priority"] for t in urgent["tasks"]] == [2, 1]
        last = msgspec.json.decode(board.answer("task.list", {"order": "urgent"}))
        assert list(last) == ["tasks", "next_after_id"]  # no more: no cursor


def test_the_urgent_cursor_needs_both_halves(client: Seat) -> None:
    with pytest.raises(InvalidParams, match="after_priority"):
        client.list_tasks(order="urgent", after_id=3)
    with pytest.raises(InvalidParams, match="after_id"):
        client.list_tasks(order="urgent", after_priority=3)
    with pytest.raises(InvalidParams, match="after_priority"):
        client.list_tasks(after_priority=3, after_id=3)
