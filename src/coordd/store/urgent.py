"""`task.list` in claim order, and its per-state counts (docs/PROTOCOL-1.2.md section 6c).

A board keeps every finished task, so a read whose cost follows the table
grows with the board's history. The open states each have a partial index a
claim already maintains (schema.CLAIM_INDEXES: `tasks_pending` in claim order,
`tasks_lease` over the live claims); a list or a count confined to open states
walks those, named by INDEXED BY so that no planner choice (the project index
would be "more selective") can send it through every finished task of a project.
A filter that admits a finished state reads that state as the planner sees fit:
its cost is the caller's to ask for.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from coordd.store.sql import Db
from coordd.store.transaction import TASK_JSON
from coordd_wire import params as P
from coordd_wire.wire import STATES, ListResult, State, Task

#: The partial index holding each open state's tasks, and nothing else.
OPEN_INDEX: dict[str, str] = {"pending": "tasks_pending", "claimed": "tasks_lease"}
#: Claim order: what `task.claim_next` picks first comes first.
URGENT = "priority DESC, id"
#: Strictly after the task (`:after_priority`, `:after_id`) in claim order; the first
#: term is a range on `tasks_pending`'s leading column.
AFTER = "priority <= :after_priority AND (priority < :after_priority OR id > :after_id)"


def admitted(p: P.ListParams) -> list[State]:
    """The states the filters admit, in `STATES` order (`ready` admits pending only)."""
    if p.ready is not None:
        return ["pending"]
    if p.state is None:
        return list(STATES)
    asked = {p.state} if isinstance(p.state, str) else set(p.state)
    return [state for state in STATES if state in asked]


def _source(state: str, states: list[State]) -> tuple[str, str]:
    """The FROM of one state's arm and its condition on `state`."""
    index = OPEN_INDEX.get(state)
    if index is not None:
        return f"tasks INDEXED BY {index}", f"state = '{state}'"
    finished = [s for s in states if s not in OPEN_INDEX]
    return "tasks", "state IN (" + ", ".join(f"'{s}'" for s in finished) + ")"


def _arms(states: list[State]) -> list[str]:
    """One arm per open state, and one for the finished states together."""
    arms: list[str] = [s for s in states if s in OPEN_INDEX]
    if any(s not in OPEN_INDEX for s in states):
        arms.append("finished")
    return arms


def urgent_tasks(conn: Db, p: P.ListParams, where: list[str], args: dict[str, Any]) -> ListResult:
    """At most `limit` matching tasks in claim order, after the cursor if given.

    `where` and `args`: every filter but the state's (each arm names its own state)."""
    states = admitted(p)
    counts = state_counts(conn, p, list(where), dict(args)) if p.counts else None
    if p.after_id is not None:
        where.append(AFTER)
        args["after_id"], args["after_priority"] = p.after_id, p.after_priority
    limit = p.limit or P.DEFAULT_LIST_LIMIT
    selects = []
    for arm in _arms(states):
        source, condition = _source(arm, states)
        clause = " AND ".join([condition, *where])
        selects.append(
            f"SELECT * FROM (SELECT priority AS p, id AS k FROM {source} WHERE {clause}"
            f" ORDER BY {URGENT} LIMIT {limit + 1}) AS {arm}_arm"
        )
    # Sorted by key alone, each task's JSON made only for the rows answered: the live
    # claims have no index in claim order, and every one of them is sorted.
    union = " UNION ALL ".join(selects)
    rows = conn.execute(
        f"SELECT p, k, {TASK_JSON} FROM ({union} ORDER BY p DESC, k LIMIT {limit + 1}) AS top"
        " JOIN tasks ON tasks.id = top.k ORDER BY p DESC, k",
        args,
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return ListResult(
        tasks=cast(list[Task], [msgspec.Raw(text) for _, _, text in rows]),
        next_after_id=rows[-1][1] if more else None,
        next_after_priority=rows[-1][0] if more else None,
        counts=counts,
    )


def state_counts(
    conn: Db, p: P.ListParams, where: list[str], args: dict[str, Any]
) -> dict[State, int]:
    """How many tasks match the filters `where` holds (not the cursor, not the limit), by
    admitted state: each open state counted on its own partial index."""
    states = admitted(p)
    selects = []
    for arm in _arms(states):
        source, condition = _source(arm, states)
        clause = " AND ".join([condition, *where])
        selects.append(f"SELECT state, count(*) FROM {source} WHERE {clause} GROUP BY state")
    counts: dict[State, int] = dict.fromkeys(states, 0)
    counts.update(conn.execute(" UNION ALL ".join(selects), args).fetchall())
    return counts
