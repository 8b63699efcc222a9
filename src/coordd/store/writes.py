"""Posting, plans and the board-level transitions: post (with dependencies),
assign, cancel, reopen, and trimming the event log.

Like `claims` and `holding`, each function is one command of a group commit
run by the writer inside a `Txn`: it reads and writes through `tx.conn`,
appends its events with `tx.emit`, and returns the wire result (or raises
a `CoordError`, which rolls back its savepoint only).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from coordd.clock import format_time
from coordd.limits import Retention
from coordd.store.reads import last_seq
from coordd.store.transaction import (
    CLEAR_CLAIM,
    ROW_COLUMNS,
    TaskRow,
    Txn,
    dedupe,
    encoder,
    in_list,
    one_row,
    require_row,
)
from coordd_wire import params as P
from coordd_wire.errors import Conflict, NotFound


def post_task(tx: Txn, p: P.PostParams) -> dict[str, Any]:
    row, created = insert_task(tx, p)
    return {"task": row.raw, "created": created}


def insert_task(
    tx: Txn, p: P.PostParams, fallback_agent: str | None = None
) -> tuple[TaskRow, bool]:
    """Insert a task (or find the one its idempotency key already names)."""
    project = p.project or P.DEFAULT_PROJECT
    agent = p.agent or fallback_agent
    if p.idempotency_key is not None:
        existing = one_row(
            tx.conn,
            f"SELECT {ROW_COLUMNS} FROM tasks WHERE project = ? AND idempotency_key = ?",
            (project, p.idempotency_key),
        )
        if existing is not None:
            return existing, False
    depends_on, open_deps = _dependencies(tx, p.depends_on)
    row = one_row(
        tx.conn,
        "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_by,"
        " created_at, updated_at, idempotency_key, depends_on, open_deps, assignee)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {ROW_COLUMNS}",
        (
            project,
            p.kind or P.DEFAULT_KIND,
            p.title,
            p.body or "",
            p.state or "pending",
            p.priority or 0,
            encoder.encode(dedupe(p.tags)).decode(),
            agent,
            tx.now_text,
            tx.now_text,
            p.idempotency_key,
            encoder.encode(depends_on).decode(),
            open_deps,
            p.assignee,
        ),
    )
    assert row is not None
    if depends_on:
        tx.conn.executemany(
            "INSERT INTO task_deps (dependency, dependent) VALUES (?, ?)",
            [(dependency, row.id) for dependency in depends_on],
        )
    if p.budget is not None:  # section 15: checked by `usage.report` as charges arrive
        tx.conn.execute(
            "INSERT INTO task_budgets (task_id, tokens, release) VALUES (?, ?, ?)",
            (row.id, p.budget, 1 if p.budget_release else 0),
        )
    tx.emit("task.posted", row, agent)
    tx.touch_agent(agent)
    return row, True


def _dependencies(tx: Txn, wanted: list[int] | None) -> tuple[list[int], int]:
    """The distinct dependency ids, ascending, and how many are not done yet.

    An unknown id refuses the post (-32001 naming the first unknown one in
    the order given), so nothing is posted with a dangling edge.
    """
    if not wanted:
        return [], 0
    distinct = list(dict.fromkeys(wanted))
    args: dict[str, Any] = {}
    states = dict(
        tx.conn.execute(
            f"SELECT id, state FROM tasks WHERE id IN {in_list('dep', distinct, args)}", args
        ).fetchall()
    )
    for task_id in distinct:
        if task_id not in states:
            raise NotFound(f"no task with id {task_id} (in depends_on)", id=task_id)
    return sorted(distinct), sum(1 for state in states.values() if state != "done")


def dependents_changed(tx: Txn, dependency: int, delta: int, agent: str | None) -> None:
    """A dependency left or re-entered `done`: count it in its dependents (PROTOCOL 9).

    Done (`delta` -1): every pending dependent whose last open dependency it
    was becomes ready: one `task.unblocked` each. Reopened (+1): every
    pending dependent that was ready is blocked again: one `task.blocked`
    each. `updated_at` does not change for either.
    """
    rows = tx.conn.execute(
        f"UPDATE tasks SET open_deps = open_deps + :delta WHERE id IN"
        f" (SELECT dependent FROM task_deps WHERE dependency = :dependency)"
        f" RETURNING {ROW_COLUMNS}",
        {"delta": delta, "dependency": dependency},
    ).fetchall()
    for values in sorted(rows):
        row = TaskRow(*values)
        if row.state != "pending":
            continue
        if delta < 0 and row.open_deps == 0:
            tx.emit("task.unblocked", row, agent)
        elif delta > 0 and row.open_deps == 1:
            tx.emit("task.blocked", row, agent)


def assign_task(tx: Txn, p: P.AssignParams) -> dict[str, Any]:
    """Set or clear a pending task's assignee (PROTOCOL 9); the same one again is a no-op."""
    current = require_row(tx.conn, p.id)
    if current.state != "pending":
        raise Conflict(
            f"task {p.id} is {current.state}; only a pending task can be assigned",
            task=current.raw,
        )
    tx.touch_agent(p.agent)
    if current.assignee == p.assignee:
        return {"task": current.raw}
    row = one_row(
        tx.conn,
        f"UPDATE tasks SET assignee = ?, updated_at = ? WHERE id = ? RETURNING {ROW_COLUMNS}",
        (p.assignee, tx.now_text, p.id),
    )
    assert row is not None
    tx.emit("task.assigned", row, p.agent)
    return {"task": row.raw}


def cancel_task(tx: Txn, p: P.CancelParams) -> dict[str, Any]:
    row = one_row(
        tx.conn,
        f"UPDATE tasks SET state = 'cancelled', {CLEAR_CLAIM}, result = ?, updated_at = ?"
        f" WHERE id = ? AND state IN ('pending', 'claimed') RETURNING {ROW_COLUMNS}",
        (p.reason, tx.now_text, p.id),
    )
    if row is None:
        current = require_row(tx.conn, p.id)
        raise Conflict(f"task {p.id} is {current.state} and cannot be cancelled", task=current.raw)
    tx.emit("task.cancelled", row, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def reopen_task(tx: Txn, p: P.ReopenParams) -> dict[str, Any]:
    before = require_row(tx.conn, p.id)
    row = one_row(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, result = NULL, posted_id = NULL,"
        " updated_at = ? WHERE id = ? AND state IN ('done', 'failed', 'cancelled')"
        f" RETURNING {ROW_COLUMNS}",
        (tx.now_text, p.id),
    )
    if row is None:
        current = require_row(tx.conn, p.id)
        raise Conflict(
            f"task {p.id} is {current.state}; only done, failed or cancelled tasks reopen",
            task=current.raw,
        )
    tx.emit("task.reopened", row, p.agent)
    if before.state == "done":
        dependents_changed(tx, row.id, +1, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def trim_events(txn: Txn, retention: Retention, keep_after: int) -> int:
    """Delete old events in one bounded batch; never those after `keep_after`."""
    cutoff_time = format_time(txn.now - timedelta(seconds=retention.max_age_s))
    newest = last_seq(txn.conn)
    count_cutoff = newest - retention.max_events
    (by_age,) = txn.conn.execute(
        "SELECT coalesce(max(seq), 0) FROM events WHERE at < ?", (cutoff_time,)
    ).fetchone()
    limit = min(max(by_age, count_cutoff), keep_after)
    if limit <= 0:
        return 0
    cursor = txn.conn.execute(
        "DELETE FROM events WHERE seq IN"
        " (SELECT seq FROM events WHERE seq <= ? ORDER BY seq LIMIT ?)",
        (limit, retention.batch),
    )
    return cursor.rowcount
