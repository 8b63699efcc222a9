"""`task.list` in claim order or newest first, and its per-state counts
(docs/PROTOCOL-1.2.md section 6c).

A board keeps every finished task, so a read whose cost follows the table
grows with the board's history. Each state has a partial index a claim or a
completion already maintains (schema.CLAIM_INDEXES: `tasks_pending` in claim
order, `tasks_lease` over the live claims, `tasks_finished` by state), so a
list or a count reads each admitted state on its own index, named by INDEXED
BY so that no planner choice (the project index looks "more selective") can
send it through every finished task of a project. A read confined to open
states then costs what the open tasks cost; admitting a finished state reads
that state's tasks, which is the caller's to ask for.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from coordd.store.sql import Db
from coordd.store.transaction import TASK_JSON, in_list
from coordd_wire import params as P
from coordd_wire.wire import STATES, ListResult, State, Task

#: The partial index holding each state's tasks: the open states' hold nothing else, and
#: a finished state is one seek into the finished tasks' index.
STATE_INDEX: dict[str, str] = {
    "pending": "tasks_pending",
    "claimed": "tasks_lease",
    "done": "tasks_finished",
    "failed": "tasks_finished",
    "cancelled": "tasks_finished",
}
#: The finished tasks' index's own condition, said word for word: SQLite uses a partial
#: index only for a query whose WHERE has its terms (`state = 'done'` alone would not do).
FINISHED = " AND state IN ('done', 'failed', 'cancelled')"


def _in_state(state: str) -> str:
    """The condition that puts an arm on `state` and on its index."""
    return f"state = '{state}'" + (FINISHED if STATE_INDEX[state] == "tasks_finished" else "")


#: Each order: inside an arm (on the table's columns), and over the arms' keys.
ORDERS: dict[str, tuple[str, str]] = {
    "urgent": ("priority DESC, id", "p DESC, k"),  # as `task.claim_next` picks
    "newest": ("id DESC", "k DESC"),
    "id": ("id", "k"),
}
#: Strictly after the cursor in each order; the urgent one's first term is a range on
#: `tasks_pending`'s leading column.
AFTER: dict[str, str] = {
    "urgent": "priority <= :after_priority AND (priority < :after_priority OR id > :after_id)",
    "newest": "id < :after_id",
    "id": "id > :after_id",
}


def by_state(p: P.ListParams) -> bool:
    """Whether an id-ordered list is read state by state too: when its filter admits no
    `done`, the state every board accumulates. Each page then sorts the keys of the
    matching tasks of the states admitted (few, or the caller's to ask for), where the
    planner's project index would walk every task of the project between two open ones."""
    return (p.state is not None or p.ready is not None) and "done" not in admitted(p)


def admitted(p: P.ListParams) -> list[State]:
    """The states the filters admit, in `STATES` order (`ready` admits pending only)."""
    if p.ready is not None:
        return ["pending"]
    if p.state is None:
        return list(STATES)
    asked = {p.state} if isinstance(p.state, str) else set(p.state)
    return [state for state in STATES if state in asked]


def ordered_tasks(conn: Db, p: P.ListParams, where: list[str], args: dict[str, Any]) -> ListResult:
    """At most `limit` matching tasks in `p.order` (urgent or newest), after the cursor
    if given, each state read on its own index.

    `where` and `args`: every filter but the state's (each arm names its own state)."""
    order = p.order or "id"
    inner, outer = ORDERS[order]
    counts = state_counts(conn, p, list(where), dict(args)) if p.counts else None
    if p.after_id is not None:
        where.append(AFTER[order])
        args["after_id"], args["after_priority"] = p.after_id, p.after_priority
    limit = p.limit or P.DEFAULT_LIST_LIMIT
    selects = []
    for state in admitted(p):
        clause = " AND ".join([_in_state(state), *where])
        selects.append(
            f"SELECT * FROM (SELECT priority AS p, id AS k FROM tasks INDEXED BY"
            f" {STATE_INDEX[state]} WHERE {clause} ORDER BY {inner} LIMIT {limit + 1})"
            f" AS {state}_arm"
        )
    # Sorted by key alone, each task's JSON made only for the rows answered: the live
    # claims have no index in claim order, and every one of them is sorted.
    union = " UNION ALL ".join(selects)
    rows = conn.execute(
        f"SELECT p, k, {TASK_JSON} FROM ({union} ORDER BY {outer} LIMIT {limit + 1}) AS top"
        f" JOIN tasks ON tasks.id = top.k ORDER BY {outer}",
        args,
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return ListResult(
        tasks=cast(list[Task], [msgspec.Raw(text) for _, _, text in rows]),
        next_after_id=rows[-1][1] if more else None,
        next_after_priority=rows[-1][0] if more and order == "urgent" else None,
        counts=counts,
    )


#: The one filter the kept counters answer for (`reads.open_filters` spells it so).
PROJECT_ONLY = "project || '' = :project"


def state_counts(
    conn: Db, p: P.ListParams, where: list[str], args: dict[str, Any]
) -> dict[State, int]:
    """How many tasks match the filters `where` holds (not the cursor, not the limit), by
    admitted state: from the kept counters when nothing but the project narrows them
    (`task_counts_schema`), else each state counted on its own partial index."""
    states = admitted(p)
    if set(where) <= {PROJECT_ONLY}:
        project = " AND project = :project" if where else ""
        kept = conn.execute(
            f"SELECT state, CAST(sum(n) AS BIGINT) FROM task_counts WHERE state IN"
            f" {in_list('counted', list(states), args)}{project} GROUP BY state",
            args,
        ).fetchall()
        return {**dict.fromkeys(states, 0), **dict(kept)}
    selects = []
    for state in states:
        clause = " AND ".join([_in_state(state), *where])
        selects.append(
            f"SELECT '{state}', count(*) FROM tasks INDEXED BY {STATE_INDEX[state]} WHERE {clause}"
        )
    counts: dict[State, int] = dict.fromkeys(states, 0)
    counts.update(conn.execute(" UNION ALL ".join(selects), args).fetchall())
    return counts
