"""Whole answers from paged methods: every matching task, every event of a task."""

from __future__ import annotations

from typing import Any

from coordd_client import methods
from coordd_client.client import Client
from coordd_wire.errors import ProtocolError
from coordd_wire.wire import Event, ListResult, Task

#: Items asked for per page: the protocol's maxima are 1,000 tasks and 10,000 events.
TASK_PAGE = 1000
EVENT_PAGE = 1000


def all_tasks(client: Client, **filters: Any) -> list[Task]:
    """Every task `task.list` matches with `filters`, in id order, page by page."""
    return first_tasks(client, None, **filters)[0]


def first_tasks(client: Client, pages: int | None, **filters: Any) -> tuple[list[Task], bool]:
    """The tasks of at most `pages` pages (None: all), in id order; and whether more
    were left unread (a summary then says "at least")."""
    if pages is not None and pages <= 0:
        return [], True
    return more_tasks(client, client.list_tasks(**filters, limit=TASK_PAGE), pages, **filters)


def first_page(**filters: Any) -> methods.Call[ListResult]:
    """The call for the first page `first_tasks` would read (to send it beside others:
    `gather`), whose answer `more_tasks` goes on from."""
    return methods.list_tasks(**filters, limit=TASK_PAGE)


def more_tasks(
    client: Client, page: ListResult, pages: int | None, **filters: Any
) -> tuple[list[Task], bool]:
    """`first_tasks`, its first page already read."""
    found = list(page.tasks)
    after = page.next_after_id
    left = None if pages is None else pages - 1
    while after is not None:
        if left is not None and left <= 0:
            return found, True
        page = client.list_tasks(**filters, after_id=after, limit=TASK_PAGE)
        found += page.tasks
        after = page.next_after_id
        left = None if left is None else left - 1
    return found, False


def task_history(client: Client, task_id: int, *, budgets: bool = False) -> list[Event]:
    """Every stored event of one task (`events.since` with the 1.1 `task_id` filter), in
    log order. `budgets`: its `usage.budget` crossings too, which are opt-in (a caller
    gets them only by naming the type) and so are asked for apart and merged in."""
    if not client.supports("task_history"):
        raise ProtocolError("this coordd keeps no task history (protocol 1.1); upgrade it")
    events = _task_events(client, task_id, None)
    if budgets and client.supports("token_budgets"):
        events = sorted(events + _task_events(client, task_id, ["usage.budget"]),
                        key=lambda event: event.seq)  # fmt: skip
    return events


def _task_events(client: Client, task_id: int, types: list[str] | None) -> list[Event]:
    events: list[Event] = []
    after = 0
    while True:
        page = client.events_since(after_seq=after, task_id=task_id, types=types,
                                   limit=EVENT_PAGE)  # fmt: skip
        events += page.events
        if len(page.events) < EVENT_PAGE:
            return events
        after = page.last_seq
