"""The holder operations (PROTOCOL.md section 5): renew, release, complete and fail,
each allowed only to the agent holding a live lease, and all of one shape; and
1.2 `agent.release`, where another agent lets go of everything one agent holds."""

from __future__ import annotations

from typing import Any, Protocol

from coordd.store import slots
from coordd.store.reservation_rows import LIVE
from coordd.store.transaction import (
    CLEAR_CLAIM,
    LIVE_HOLDER,
    ROW_COLUMNS,
    TaskRow,
    Txn,
    get_row,
    one_row,
    require_row,
)
from coordd.store.writes import dependents_changed, insert_task
from coordd_wire import params as P
from coordd_wire.errors import LeaseLost


def _repeat_of(tx: Txn, p: _HeldParams, state: str) -> TaskRow | None:
    """The task, if a holder operation that matched nothing had already taken effect."""
    current = require_row(tx.conn, p.id)
    same_holder = current.claimed_by == p.agent and (p.fence is None or current.fence == p.fence)
    return current if current.state == state and same_holder else None


def _lease_lost(tx: Txn, p: _HeldParams) -> LeaseLost:
    """Why a holder operation matched no row, with the current task (PROTOCOL 5)."""
    task_id, agent, fence = p.id, p.agent, p.fence
    current = require_row(tx.conn, task_id)
    # Each refusal says what to do next: an agent told only "you lost" drops
    # work it holds under another name, or retries what it never held.
    if current.state == "pending":
        reason = f"task {task_id} is pending: nobody holds it; claim it first"
    elif current.state != "claimed":
        reason = f"task {task_id} is {current.state}, not claimed; pick other work"
    elif current.claimed_by != agent:
        reason = (
            f"task {task_id} is held by {current.claimed_by}, not by you ({agent}): if"
            f" {current.claimed_by} is you, pin your name with"
            f" `export COORD_AGENT={current.claimed_by}`; otherwise pick other work"
        )
    elif fence is not None and current.fence != fence:
        reason = (
            f"fence {fence} is stale; the task's fence is {current.fence}: it was claimed"
            " again since your claim, so your work on it is superseded"
        )
    else:
        reason = f"the lease on task {task_id} has expired; claim it again"
    return LeaseLost(reason, task=current.raw)


class _HeldParams(Protocol):
    """What every holder operation names: the task, who holds it, and their fence."""

    id: int
    agent: str
    fence: int | None


def _change_held(
    tx: Txn,
    p: _HeldParams,
    assignments: str,
    *,
    event: str | None,
    extra: dict[str, Any] | None = None,
    repeat_state: str | None = None,
) -> tuple[TaskRow, bool]:
    """The one shape of every holder operation (PROTOCOL.md section 5).

    `UPDATE ... SET {assignments}` only while `p.agent` holds a live lease
    (and `p.fence`, if given, is current); then the event and the agent's
    last-seen. When nothing matched: the task as it stands if the same
    operation already took effect (a repeat: `repeat_state` is what it left
    behind), else `LeaseLost` saying why. Returns (row, repeated).
    """
    args = {"id": p.id, "agent": p.agent, "now": tx.now_text, "fence": p.fence, **(extra or {})}
    row = one_row(
        tx.conn,
        f"UPDATE tasks SET {assignments}, updated_at = :now WHERE {LIVE_HOLDER}"
        f" RETURNING {ROW_COLUMNS}",
        args,
    )
    if row is not None:
        if event is not None:
            tx.emit(event, row, p.agent)
        tx.touch_agent(p.agent)
        return row, False
    repeat = None if repeat_state is None else _repeat_of(tx, p, repeat_state)
    if repeat is None:
        raise _lease_lost(tx, p)
    return repeat, True


def renew_task(tx: Txn, p: P.RenewParams) -> dict[str, Any]:
    until = {"until": tx.lease_until(p.lease_s)}
    row, _ = _change_held(tx, p, "lease_expires_at = :until", event=None, extra=until)
    return {"task": row.raw}


def release_task(tx: Txn, p: P.ReleaseParams) -> dict[str, Any]:
    assignments = f"state = 'pending', {CLEAR_CLAIM}"
    if p.assignee is not None:  # 1.1: hand it over in the same step
        assignments += ", assignee = :assignee"
    row, _ = _change_held(tx, p, assignments, event="task.released", extra={"assignee": p.assignee})
    return {"task": row.raw}


def complete_task(tx: Txn, p: P.CompleteParams) -> dict[str, Any]:
    row, repeated = _change_held(
        tx,
        p,
        "state = 'done', lease_expires_at = NULL, result = :result",
        event="task.completed",
        extra={"result": p.result},
        repeat_state="done",
    )
    if repeated:
        posted = get_row(tx.conn, row.posted_id) if row.posted_id else None
        return {"task": row.raw, "posted": posted.raw if posted else None}
    dependents_changed(tx, row.id, -1, p.agent)
    if p.then_post is None:
        return {"task": row.raw, "posted": None}
    posted, _created = insert_task(tx, p.then_post, fallback_agent=p.agent)
    tx.conn.execute("UPDATE tasks SET posted_id = ? WHERE id = ?", (posted.id, p.id))
    return {"task": row.raw, "posted": posted.raw}


def fail_task(tx: Txn, p: P.FailParams) -> dict[str, Any]:
    if p.retry:
        # A repeated fail with retry cannot be recognised: the task is pending again.
        assignments, repeat_state = f"state = 'pending', {CLEAR_CLAIM}, result = :reason", None
    else:
        assignments = "state = 'failed', lease_expires_at = NULL, result = :reason"
        repeat_state = "failed"
    row, _ = _change_held(
        tx,
        p,
        assignments,
        event="task.failed",
        extra={"reason": p.reason},
        repeat_state=repeat_state,
    )
    return {"task": row.raw}


def release_agent(tx: Txn, p: P.ReleaseAgentParams) -> dict[str, int]:
    """1.2 `agent.release` (docs/PROTOCOL-1.2.md section 2), in one transaction.

    `p.agent` lets go of what `p.of` holds in `p.project` (omitted: every
    project): each claim is released as `task.release` would (pending, the
    claim cleared, the fence kept, so the old holder's later calls are
    refused), its reservations end, its assignment of pending tasks is
    cleared, and its slot and port leases end. Each task event names `p.agent`
    as its agent, and carries `of` and `reason`; each `slot.released` says who
    released it, and why. An agent holding nothing gets zeros.
    """
    args: dict[str, Any] = {"of": p.of, "project": p.project, "now": tx.now_text}
    in_project = "" if p.project is None else " AND project = :project"
    # Counted before the claims go: a task-bound reservation ends with its
    # task's `task.released` (Txn.emit), and it is one of theirs that ended.
    live = tx.conn.execute(
        f"SELECT r.project, count(*) FROM reservations AS r WHERE r.agent = :of"
        f"{'' if p.project is None else ' AND r.project = :project'} AND {LIVE}"
        " GROUP BY r.project",
        args,
    ).fetchall()
    # Their slot and port leases as they are now: one bound to a claim released
    # below is live until then, and is one of theirs that ended.
    leases = slots.leases_of(tx, p.of, p.project)
    # Every claim of theirs, a lapsed one too: the reaper would only expire it.
    released = _updated_rows(
        tx,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, updated_at = :now"
        f" WHERE state = 'claimed' AND claimed_by = :of{in_project}",
        args,
    )
    for row in released:
        tx.emit("task.released", row, p.agent, of=p.of, reason=p.reason)
    tx.conn.execute(
        f"DELETE FROM reservations WHERE agent = :of{in_project}",
        {"of": p.of, "project": p.project},
    )
    tx.freed_projects.update(project for project, _ in live)
    # After the claims: a task it held claimed and assigned ends unassigned too.
    unassigned = _updated_rows(
        tx,
        f"UPDATE tasks SET assignee = NULL, updated_at = :now"
        f" WHERE state = 'pending' AND assignee = :of{in_project}",
        args,
    )
    for row in unassigned:
        tx.emit("task.assigned", row, p.agent, of=p.of, reason=p.reason)
    why = f"released by {p.agent}" + ("" if p.reason is None else f": {p.reason}")
    ended_slots = slots.end_released(tx, leases, why)
    tx.touch_agent(p.agent)
    return {
        "claims": len(released),
        "reservations": sum(n for _, n in live),
        "unassigned": len(unassigned),
        "slots": ended_slots,
    }


def _updated_rows(tx: Txn, update: str, args: dict[str, Any]) -> list[TaskRow]:
    """The rows an UPDATE changed, in id order (events are appended in that order)."""
    rows = tx.conn.execute(f"{update} RETURNING {ROW_COLUMNS}", args).fetchall()
    return sorted((TaskRow(*values) for values in rows), key=lambda row: row.id)
