"""Whole answers from paged methods: every matching task, every event of a task; and the
few most urgent tasks with the counts of the rest (docs/PROTOCOL-1.2.md section 6c)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from coordd_client import methods
from coordd_client.client import Client
from coordd_wire.errors import InvalidParams, ProtocolError
from coordd_wire.wire import Event, ListOrder, ListResult, State, Task

#: The feature that lets a daemon answer the most urgent tasks and their counts.
URGENT_LISTS = "urgent_lists"

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


def most_urgent(
    client: Client,
    limit: int,
    order: ListOrder = "urgent",
    *,
    counted: bool = True,
    **filters: Any,
) -> tuple[list[Task], dict[State, int]]:
    """The first `limit` tasks matching `filters` in `order` (claim order: priority
    descending, then id; or newest first), and how many match in each state the filters
    admit. The filters may include `open_to` (unassigned or assigned to that agent).

    Asked of the daemon, which reads only what it answers (section 6c); a daemon older
    than the feature is paged through by id and sorted and counted here. `counted`: False
    when the counts are not wanted (the daemon reads every match to count them)."""
    # Asked at once, not after a `server.info` round trip to learn the features: a daemon
    # without the feature refuses the params, and is read as before.
    try:
        page = client.list_tasks(**filters, order=order, limit=_page(limit),
                                 counts=True if counted else None)  # fmt: skip
    except InvalidParams:
        return ordered_here(all_tasks(client, **_no_open_to(filters)), limit, order, filters)
    counts = page.counts or {}
    return more_ordered(client, page, limit, order=order, **filters), counts


def _page(limit: int) -> int:
    return max(1, min(limit, TASK_PAGE))


def more_ordered(client: Client, page: ListResult, limit: int, **filters: Any) -> list[Task]:
    """`page`'s tasks (a section 6c order's, `order` among `filters`) and those of the
    pages after it, up to `limit`."""
    found = list(page.tasks)
    while page.next_after_id is not None and len(found) < limit:
        page = client.list_tasks(**filters, limit=_page(limit - len(found)),
                                 after_id=page.next_after_id,
                                 after_priority=page.next_after_priority)  # fmt: skip
        found += page.tasks
    return found[: max(0, limit)]


def _no_open_to(filters: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in filters.items() if k != "open_to"}


def ordered_here(
    tasks: list[Task], limit: int, order: ListOrder, filters: dict[str, Any]
) -> tuple[list[Task], dict[State, int]]:
    """`most_urgent` from every matching task, read by id (a daemon without the feature):
    `open_to` applied, ordered, cut and counted here."""
    open_to = filters.get("open_to")
    if open_to is not None:
        tasks = [t for t in tasks if t.assignee in (None, open_to)]
    if order == "urgent":
        tasks = sorted(tasks, key=lambda t: (-t.priority, t.id))
    elif order == "newest":
        tasks = sorted(tasks, key=lambda t: -t.id)
    counts: Counter[State] = Counter(t.state for t in tasks)
    state: State | list[State] | None = filters.get("state")
    admitted = [state] if isinstance(state, str) else list(state or ())
    pending: list[State] = ["pending"]
    for name in pending if filters.get("ready") is not None else admitted:
        counts.setdefault(name, 0)
    return tasks[: max(0, limit)], dict(counts)


def every_urgent(client: Client, **filters: Any) -> list[Task]:
    """Every task matching `filters` (which may include `open_to`), in id order: read in
    claim order from a daemon with the feature, whose open states it reads from their own
    indexes (an agent's claims or assignments, however many tasks the project finished)."""
    tasks, _ = most_urgent(client, 1 << 62, counted=False, **filters)
    return sorted(tasks, key=lambda t: t.id)


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
