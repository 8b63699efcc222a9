"""Every read of the board, run on a reader connection (or inline for point reads).

Each function takes a connection inside one read transaction (see
`readers.ReaderPool`) and returns wire-ready values: tasks and events stay
the JSON SQLite encoded, wrapped in `msgspec.Raw`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec

from coordd.limits import Limits
from coordd.store import urgent
from coordd.store.sql import Db
from coordd.store.transaction import (
    TASK_JSON,
    CommittedEvent,
    in_list,
    require_row,
    wire_task,
)
from coordd_wire import params as P
from coordd_wire.errors import InvalidParams
from coordd_wire.method_table import OPT_IN_EVENT_TYPES
from coordd_wire.wire import (
    STATES,
    AgentInfo,
    AgentsResult,
    ListResult,
    Task,
    TaskResult,
)


def read_task(conn: Db, task_id: int) -> TaskResult:
    return TaskResult(task=require_row(conn, task_id).task)


def list_tasks(conn: Db, p: P.ListParams) -> ListResult:
    if p.order in ("urgent", "newest") or urgent.by_state(p):
        return urgent.ordered_tasks(conn, p, *open_filters(p))
    where = ["id > :after_id"]
    args: dict[str, Any] = {"after_id": p.after_id or 0}
    task_filters(where, args, p)
    _list_filters(where, args, p)
    limit = p.limit or P.DEFAULT_LIST_LIMIT
    condition = " AND ".join(where)
    rows = conn.execute(
        f"SELECT id, {TASK_JSON} FROM tasks WHERE {condition} ORDER BY id LIMIT {limit + 1}", args
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    counts = urgent.state_counts(conn, p, *open_filters(p)) if p.counts else None
    return ListResult(
        # Each the JSON SQLite made, as `wire_task` says: no Task decoded per row.
        tasks=cast(list[Task], [msgspec.Raw(text) for _, text in rows]),
        next_after_id=rows[-1][0] if more else None,
        counts=counts,
    )


#: 1.2 section 6c: the tasks `:open_to` may claim by assignment.
OPEN_TO = "(assignee IS NULL OR assignee = :open_to)"


def open_filters(p: P.ListParams) -> tuple[list[str], dict[str, Any]]:
    """`task.list`'s filters but the state's and the cursor's, for `store.urgent`'s
    arms, each of which names its own state."""
    where: list[str] = []
    args: dict[str, Any] = {}
    task_filters(where, args, msgspec.structs.replace(p, state=None))
    _list_filters(where, args, p)
    # Compared as expressions, so that no store (PostgreSQL drops INDEXED BY) can take
    # the project's or the assignee's index, which hold every finished task too.
    return [_AS_EXPRESSION.get(term, term) for term in where], args


_AS_EXPRESSION = {
    "project = :project": urgent.PROJECT_ONLY,
    "assignee = :assignee": "assignee || '' = :assignee",
}


def _list_filters(where: list[str], args: dict[str, Any], p: P.ListParams) -> None:
    """The filters `task.list` has and `task.wait` does not."""
    if p.claimed_by is not None:
        where.append("claimed_by = :claimed_by")
        args["claimed_by"] = p.claimed_by
    if p.open_to is not None:
        where.append(OPEN_TO)
        args["open_to"] = p.open_to


def task_filters(where: list[str], args: dict[str, Any], p: P.ListParams | P.WaitParams) -> None:
    """The SQL of the filters `task.list` and `task.wait` share (and `events.WaitFilter`
    matches in memory: a property test keeps the two in agreement)."""
    project, kind, state, tag = p.project, p.kind, p.state, p.tag
    title_contains = p.title_contains if isinstance(p, P.WaitParams) else None
    assignee, ready = p.assignee, p.ready
    if project is not None:
        where.append("project = :project")
        args["project"] = project
    if kind is not None:
        where.append("kind = :kind")
        args["kind"] = kind
    if state is not None:
        states = [state] if isinstance(state, str) else list(dict.fromkeys(state))
        where.append(f"state IN {in_list('state', states, args)}")
    if tag is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE value = :tag)")
        args["tag"] = tag
    if title_contains is not None:
        # instr, not LIKE: '%' and '_' in the needle stay literal. unicode_lower
        # (connections.py) folds like the in-memory filter of live events.
        where.append("instr(unicode_lower(title), :needle) > 0")
        args["needle"] = title_contains.lower()
    if assignee is not None:
        where.append("assignee = :assignee")
        args["assignee"] = assignee
    if ready is not None:
        # PROTOCOL 9: ready is pending with every dependency done.
        where.append("state = 'pending' AND " + ("open_deps = 0" if ready else "open_deps > 0"))


def first_matching_task(conn: Db, p: P.WaitParams) -> tuple[Task | None, int]:
    """The oldest task matching a wait filter now, and the newest seq at that read."""
    where = ["TRUE"]
    args: dict[str, Any] = {}
    task_filters(where, args, p)
    rows = conn.execute(
        f"SELECT {TASK_JSON} FROM tasks WHERE {' AND '.join(where)} ORDER BY id LIMIT 1", args
    ).fetchall()
    seq = last_seq(conn)
    return (wire_task(msgspec.Raw(rows[0][0])) if rows else None), seq


def board_id(conn: Db) -> str:
    """The store's id, given once when its schema was made (`store/board_schema.py`)."""
    row = conn.execute("SELECT board_id FROM board WHERE only_row = 1").fetchone()
    return str(row[0])


def last_seq(conn: Db) -> int:
    row = conn.execute(conn.last_seq_sql).fetchone()
    return int(row[0]) if row else 0


def require_known_seq(after_seq: int, newest: int) -> None:
    """Refuse a resume point from the future: it means the board is not the one it came from.

    A client holding a seq from before a restore (or from another database)
    would otherwise be told "nothing new" for every event until the log
    caught up with it, silently.
    """
    if after_seq > newest:
        raise InvalidParams(
            f"after_seq {after_seq} is beyond the newest event ({newest}): this board was"
            " restored or replaced since that seq was read; resume from 0 or a seq it gave",
            field="after_seq",
            last_seq=newest,
        )


#: The same counts from the tasks themselves, one covering scan of each state's
#: partial index (schema.CLAIM_INDEXES): what `coordd check` holds the counters to.
_COUNTED_STATES = (
    "SELECT 'pending', count(*) FROM tasks WHERE state = 'pending'"
    " UNION ALL SELECT 'claimed', count(*) FROM tasks WHERE state = 'claimed'"
    " UNION ALL SELECT state, count(*) FROM tasks"
    " WHERE state IN ('done', 'failed', 'cancelled') GROUP BY state"
)


def counted_states(conn: Db) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(STATES, 0)
    counts.update(conn.execute(_COUNTED_STATES).fetchall())
    return counts


_KEPT_STATES = "SELECT state, CAST(sum(n) AS BIGINT) FROM task_counts GROUP BY state"


def state_counts(conn: Db) -> dict[str, int]:
    """The board's tasks by state, from the counters the database keeps
    (`task_counts_schema`): the number of projects, never the board's history."""
    counts: dict[str, int] = dict.fromkeys(STATES, 0)
    counts.update(conn.execute(_KEPT_STATES).fetchall())
    return counts


def list_agents(conn: Db, now_text: str) -> AgentsResult:
    # One pass over the live claims (the lease index), not one per agent.
    rows = conn.execute(
        "SELECT agents.agent, agents.last_seen, coalesce(live.held, 0), agents.ended_at"
        " FROM agents"
        " LEFT JOIN (SELECT claimed_by, count(*) AS held FROM tasks INDEXED BY tasks_lease"
        " WHERE state = 'claimed' AND lease_expires_at > ? GROUP BY claimed_by) AS live"
        " ON live.claimed_by = agents.agent ORDER BY agents.last_seen DESC, agents.agent",
        (now_text,),
    ).fetchall()
    return AgentsResult(
        agents=[
            AgentInfo(agent=agent, last_seen=seen, holding=holding, ended_at=ended)
            for agent, seen, holding, ended in rows
        ]
    )


#: The seqs of one task's events after `:after`, newest first.
_TASK_HISTORY = (
    "WITH RECURSIVE history (seq) AS (SELECT event_seq FROM tasks WHERE id = :task_id"
    " UNION ALL SELECT events.prev_seq FROM events JOIN history ON events.seq = history.seq"
    " WHERE events.prev_seq > :after) SELECT seq FROM history"
)


def events_since(
    conn: Db,
    after_seq: int,
    limit: int,
    project: str | None,
    types: list[str] | None,
    *,
    task_id: int | None = None,
) -> tuple[list[msgspec.Raw], int]:
    """Stored events after `after_seq`, and the `last_seq` to resume from (PROTOCOL 6).

    With `task_id`, one task's history: the walk back along its chain from the
    task's newest event to `after_seq` (schema.EVENT_CHAIN), as many steps as
    the task has events after it; it ends where retention cut the log.
    """
    where = ["seq > :after"]
    args: dict[str, Any] = {"after": after_seq}
    if task_id is not None:
        where.append(f"seq IN ({_TASK_HISTORY})")
        args["task_id"] = task_id
    if project is not None:
        where.append("project = :project")
        args["project"] = project
    if types:
        where.append(f"type IN {in_list('type', list(dict.fromkeys(types)), args)}")
    else:  # section 11: events with no task only for who names them
        where.append(f"type NOT IN {in_list('hidden', sorted(OPT_IN_EVENT_TYPES), args)}")
    newest = last_seq(conn)
    require_known_seq(after_seq, newest)
    rows = conn.execute(
        f"SELECT seq, data FROM events WHERE {' AND '.join(where)} ORDER BY seq LIMIT {limit}",
        args,
    ).fetchall()
    if len(rows) == limit:
        return [msgspec.Raw(data) for _, data in rows], rows[-1][0]
    return [msgspec.Raw(data) for _, data in rows], newest


class StoredEvent(msgspec.Struct):
    """The two members of a stored event the daemon itself reads (a 1.2 message has no
    task)."""

    seq: int
    #: Empty for a 1.2 message (msgspec cannot decode `Raw | None`).
    task: msgspec.Raw = msgspec.Raw()


stored_event_decoder = msgspec.json.Decoder(StoredEvent)


def first_matching_event(
    conn: Db,
    matches: Callable[[bytes], bool],
    project: str | None,
    after_seq: int,
) -> tuple[Task | None, int]:
    """The task of the first stored event after `after_seq` that `matches`; else the newest seq.

    `task.wait`'s edge-triggered read: filtered in Python, the same filter
    that matches live events, so stored and live can never disagree.
    """
    newest = last_seq(conn)
    require_known_seq(after_seq, newest)
    position = after_seq
    # Only task events: one with no task (section 11) matches no wait.
    project_clause = " AND task_id IS NOT NULL"
    project_clause += "" if project is None else " AND project = :project"
    while position < newest:
        rows = conn.execute(
            f"SELECT seq, data FROM events WHERE seq > :after AND seq <= :newest{project_clause}"
            " ORDER BY seq LIMIT :page",
            {"after": position, "newest": newest, "project": project, "page": Limits.event_page},
        ).fetchall()
        if not rows:
            break
        for seq, data in rows:
            stored = stored_event_decoder.decode(data)
            if stored.task and matches(bytes(stored.task)):
                return wire_task(stored.task), seq
            position = seq
    return None, newest


def committed_events_after(conn: Db, after_seq: int, limit: int) -> list[CommittedEvent]:
    """Stored events after `after_seq` as the hub publishes them (team mode: other
    daemons' commits, read from the log in seq order)."""
    rows = conn.execute(
        "SELECT seq, type, project, data, task_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit),
    ).fetchall()
    events = []
    for seq, event_type, project, data, task_id in rows:
        encoded = data.encode() if isinstance(data, str) else bytes(data)
        if task_id is None:  # an event with no task (section 11)
            events.append(CommittedEvent(seq, event_type, project, "", encoded))
            continue
        task = stored_event_decoder.decode(encoded).task
        task_json = bytes(task).decode()
        events.append(CommittedEvent(seq, event_type, project, task_json, encoded))
    return events


def anything_lapsed(conn: Db, now_text: str) -> bool:
    """Has a claim's lease or a reservation run out by `now_text`? (The reaper's look.)"""
    (lapsed,) = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM tasks INDEXED BY tasks_lease WHERE state = 'claimed'"
        " AND lease_expires_at <= :now) OR EXISTS (SELECT 1 FROM reservations"
        " WHERE expires_at <= :now)"
        # issue 35: a slot lease or an open landing whose stored time ran out
        " OR EXISTS (SELECT 1 FROM slot_leases WHERE expires_at <= :now) OR EXISTS (SELECT 1"
        " FROM landings WHERE state IN ('queued', 'landing') AND expires_at <= :now)",
        {"now": now_text},
    ).fetchone()
    return bool(lapsed)
