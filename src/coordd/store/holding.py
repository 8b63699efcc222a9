"""The holder operations (PROTOCOL.md section 5): renew, release, complete and fail,
each allowed only to the agent holding a live lease, and all of one shape; and
1.2 `agent.release`, where another agent lets go of everything one agent holds."""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

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
from coordd_wire.wire import CompleteResult, ReleaseAgentResult, TaskResult


def _repeat_of(tx: Txn, p: _HeldParams, state: str) -> TaskRow | None:
    """The task, if a holder operation that matched nothing had already taken effect."""
    current = require_row(tx.conn, p.id)
    same_holder = current.claimed_by == p.agent and (p.fence is None or current.fence == p.fence)
    return current if current.state == state and same_holder else None


#: How far back a repeated release or retried fail looks in the task's history for
#: its first attempt: a bounded walk in the writer, whatever the task's past.
_REPEAT_LOOKBACK = 64


class _Fenced(msgspec.Struct):
    fence: int


class _Actor(msgspec.Struct):
    """What a repeat's look-back reads of an event: who made it, at which fence."""

    agent: str | None = None
    task: _Fenced | None = None


_actor = msgspec.json.Decoder(_Actor)


def _let_go_already(tx: Txn, p: _LettingGoParams, event_type: str) -> TaskRow | None:
    """The task, if `p.agent` already let go of it with `event_type` (a release, or a
    fail with retry) at `p.fence` (if given) and has not claimed it since: the first
    attempt of a repeated call (docs/PROTOCOL-1.2.md section 5b). The task's own
    history is walked back from its newest event, at most `_REPEAT_LOOKBACK` events."""
    current = require_row(tx.conn, p.id)
    seq = current.event_seq
    for _ in range(_REPEAT_LOOKBACK):
        if seq is None:
            return None
        row = tx.conn.execute(
            "SELECT type, data, prev_seq FROM events WHERE seq = ?", (seq,)
        ).fetchone()
        if row is None:
            return None  # trimmed by retention: not known, so not a repeat
        kind, data, seq = row
        actor = _actor.decode(data)
        if actor.agent != p.agent or actor.task is None:
            continue
        if kind == event_type:
            return current if p.fence is None or actor.task.fence == p.fence else None
        if kind == "task.claimed":
            return None  # claimed again since: this call is not a repeat of that one
    return None


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


class _LettingGoParams(_HeldParams, Protocol):
    """A holder operation that leaves the task pending, which a caller may ask again."""

    repeat: bool | None


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


def renew_task(tx: Txn, p: P.RenewParams) -> TaskResult:
    until = {"until": tx.lease_until(p.lease_s)}
    row, _ = _change_held(tx, p, "lease_expires_at = :until", event=None, extra=until)
    return TaskResult(task=row.task)


def release_task(tx: Txn, p: P.ReleaseParams) -> TaskResult:
    assignments = f"state = 'pending', {CLEAR_CLAIM}"
    if p.assignee is not None:  # 1.1: hand it over in the same step
        assignments += ", assignee = :assignee"
    row, _ = _let_go(tx, p, assignments, "task.released", {"assignee": p.assignee})
    return TaskResult(task=row.task)


def _let_go(
    tx: Txn, p: _LettingGoParams, assignments: str, event: str, extra: dict[str, Any]
) -> tuple[TaskRow, bool]:
    """`_change_held` for an operation that leaves the task pending: its result names
    no holder, so a repeat (`p.repeat`) is found in the task's history instead."""
    try:
        return _change_held(tx, p, assignments, event=event, extra=extra)
    except LeaseLost:
        first = _let_go_already(tx, p, event) if p.repeat else None
        if first is None:
            raise
        return first, True


def complete_task(tx: Txn, p: P.CompleteParams) -> CompleteResult:
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
        return CompleteResult(task=row.task, posted=posted.task if posted else None)
    dependents_changed(tx, row.id, -1, p.agent)
    if p.then_post is None:
        return CompleteResult(task=row.task, posted=None)
    posted, _created = insert_task(tx, p.then_post, fallback_agent=p.agent)
    tx.conn.execute("UPDATE tasks SET posted_id = ? WHERE id = ?", (posted.id, p.id))
    return CompleteResult(task=row.task, posted=posted.task)


def fail_task(tx: Txn, p: P.FailParams) -> TaskResult:
    if p.retry:
        # The task is pending again: a repeat is found in its history, when asked for.
        assignments = f"state = 'pending', {CLEAR_CLAIM}, result = :reason"
        row, _ = _let_go(tx, p, assignments, "task.failed", {"reason": p.reason})
        return TaskResult(task=row.task)
    assignments = "state = 'failed', lease_expires_at = NULL, result = :reason"
    row, _ = _change_held(
        tx,
        p,
        assignments,
        event="task.failed",
        extra={"reason": p.reason},
        repeat_state="failed",
    )
    return TaskResult(task=row.task)


def release_agent(tx: Txn, p: P.ReleaseAgentParams) -> ReleaseAgentResult:
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
    return ReleaseAgentResult(
        claims=len(released),
        reservations=sum(n for _, n in live),
        unassigned=len(unassigned),
        slots=ended_slots,
    )


def _updated_rows(tx: Txn, update: str, args: dict[str, Any]) -> list[TaskRow]:
    """The rows an UPDATE changed, in id order (events are appended in that order)."""
    rows = tx.conn.execute(f"{update} RETURNING {ROW_COLUMNS}", args).fetchall()
    return sorted((TaskRow(*values) for values in rows), key=lambda row: row.id)
