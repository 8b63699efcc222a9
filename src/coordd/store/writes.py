"""Every state transition of PROTOCOL.md section 5, run by the writer inside a `Txn`.

Each function is one command of a group commit: it reads and writes
through `tx.conn`, appends its events with `tx.emit`, and returns the wire
result (or raises a `CoordError`, which rolls back its savepoint only).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

import msgspec

from coordd.clock import format_time
from coordd.limits import Retention
from coordd.protocol import params as P
from coordd.store.reads import last_seq
from coordd.store.transaction import (
    CLAIMABLE_BY_AGENT,
    CLEAR_CLAIM,
    LIVE_HOLDER,
    ROW_COLUMNS,
    TaskRow,
    Txn,
    dedupe,
    encoder,
    get_row,
    in_list,
    one_row,
    require_row,
)
from coordd_client.protocol.errors import Blocked, Conflict, LeaseLost, NotFound


def post_task(tx: Txn, p: P.PostParams) -> dict[str, Any]:
    row, created = _post(tx, p)
    return {"task": row.raw, "created": created}


def _post(tx: Txn, p: P.PostParams, fallback_agent: str | None = None) -> tuple[TaskRow, bool]:
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


def _dependents_changed(tx: Txn, dependency: int, delta: int, agent: str | None) -> None:
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


def _expire(tx: Txn, row: TaskRow) -> TaskRow:
    """Return one expired claim to pending, emitting `task.expired` for its old holder."""
    expired = one_row(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, updated_at = ? WHERE id = ?"
        f" RETURNING {ROW_COLUMNS}",
        (tx.now_text, row.id),
    )
    assert expired is not None
    tx.emit("task.expired", expired, row.claimed_by)
    return expired


_CLAIM_PENDING = (
    "UPDATE tasks SET state = 'claimed', claimed_by = :agent, claimed_at = :now,"
    " lease_expires_at = :until, updated_at = :now, fence = fence + 1, attempts = attempts + 1"
    f" WHERE id = :id AND state = 'pending' AND {CLAIMABLE_BY_AGENT} RETURNING {ROW_COLUMNS}"
)


def _not_claimable(tx: Txn, current: TaskRow, agent: str) -> dict[str, Any]:
    """A pending task the claim's UPDATE passed over: assigned elsewhere, or blocked.

    Assignment is checked first (PROTOCOL 9): someone else's task answers
    `won: false` whether or not it is blocked; a blocked one is -32002
    `blocked`, not a lost race, since nobody holds it.
    """
    tx.touch_agent(agent)
    if current.assignee is not None and current.assignee != agent:
        return {"won": False, "task": current.raw}
    blocked_by = _blocked_by_decoder.decode(current.json).blocked_by
    names = ", ".join(f"#{i}" for i in blocked_by)
    raise Blocked(
        f"task {current.id} is blocked: its dependencies {names} are not done yet;"
        " finish them first, or pick ready work (`coord next`)",
        task=current.raw,
    )


class _BlockedBy(msgspec.Struct):
    blocked_by: list[int]


_blocked_by_decoder = msgspec.json.Decoder(_BlockedBy)


def claim_task(tx: Txn, p: P.ClaimParams) -> dict[str, Any]:
    """The core primitive: one conditional UPDATE decides the single winner."""
    args = {"agent": p.agent, "now": tx.now_text, "until": tx.lease_until(p.lease_s), "id": p.id}
    row = one_row(tx.conn, _CLAIM_PENDING, args)
    if row is None:
        current = require_row(tx.conn, p.id)
        if current.state == "pending":
            return _not_claimable(tx, current, p.agent)
        if current.state != "claimed":
            tx.touch_agent(p.agent)
            return {"won": False, "task": current.raw}
        assert current.lease_expires_at is not None
        if current.lease_expires_at <= tx.now_text:
            expired = _expire(tx, current)
            row = one_row(tx.conn, _CLAIM_PENDING, args)
            if row is None:
                return _not_claimable(tx, expired, p.agent)
        elif current.claimed_by == p.agent:
            # The holder retrying (it may have lost our reply): same fence, lease renewed.
            renewed = one_row(
                tx.conn,
                "UPDATE tasks SET lease_expires_at = :until, updated_at = :now WHERE id = :id"
                f" RETURNING {ROW_COLUMNS}",
                args,
            )
            assert renewed is not None
            tx.touch_agent(p.agent)
            return {"won": True, "task": renewed.raw}
        else:
            tx.touch_agent(p.agent)
            return {"won": False, "task": current.raw}
    assert row is not None
    tx.emit("task.claimed", row, p.agent)
    tx.touch_agent(p.agent)
    return {"won": True, "task": row.raw}


def reap_expired(tx: Txn) -> int:
    """Return every expired claim to pending in one statement; one `task.expired` each.

    Without ANALYZE statistics SQLite answers "state = 'claimed' AND ..." from
    tasks_queue (state, ...), scanning every claimed task; this, the restart
    grace, heartbeat and agent.list name their partial index (INDEXED BY).
    """
    holders = dict(
        tx.conn.execute(
            "SELECT id, claimed_by FROM tasks INDEXED BY tasks_lease"
            " WHERE state = 'claimed' AND lease_expires_at <= ?",
            (tx.now_text,),
        ).fetchall()
    )
    if not holders:
        return 0
    rows = tx.conn.execute(
        f"UPDATE tasks INDEXED BY tasks_lease SET state = 'pending', {CLEAR_CLAIM},"
        f" updated_at = :now WHERE state = 'claimed' AND lease_expires_at <= :now"
        f" RETURNING {ROW_COLUMNS}",
        {"now": tx.now_text},
    ).fetchall()
    for values in sorted(rows):
        row = TaskRow(*values)
        tx.emit("task.expired", row, holders.get(row.id))
    return len(rows)


def claim_next(tx: Txn, p: P.ClaimNextParams) -> dict[str, Any]:
    """Claim the best claimable match: highest priority, then lowest id."""
    reap_expired(tx)
    where = ["state = 'pending'", CLAIMABLE_BY_AGENT]
    args: dict[str, Any] = {"agent": p.agent}
    if p.project is not None:
        where.append("project = :project")
        args["project"] = p.project
    if p.kind is not None:
        where.append("kind = :kind")
        args["kind"] = p.kind
    wanted = dedupe(p.tags)
    if wanted:
        where.append(
            "(SELECT count(DISTINCT value) FROM json_each(tasks.tags)"
            f" WHERE value IN {in_list('tag', wanted, args)}) = {len(wanted)}"
        )
    found = tx.conn.execute(
        f"SELECT id FROM tasks WHERE {' AND '.join(where)} ORDER BY priority DESC, id LIMIT 1",
        args,
    ).fetchall()
    tx.touch_agent(p.agent)
    if not found:
        return {"task": None}
    claim_args = {
        "agent": p.agent,
        "now": tx.now_text,
        "until": tx.lease_until(p.lease_s),
        "id": found[0][0],
    }
    row = one_row(tx.conn, _CLAIM_PENDING, claim_args)
    assert row is not None  # the writer is the only writer: the row is still pending
    tx.emit("task.claimed", row, p.agent)
    return {"task": row.raw}


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
    _dependents_changed(tx, row.id, -1, p.agent)
    if p.then_post is None:
        return {"task": row.raw, "posted": None}
    posted, _created = _post(tx, p.then_post, fallback_agent=p.agent)
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
        _dependents_changed(tx, row.id, +1, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def heartbeat(tx: Txn, p: P.HeartbeatParams) -> dict[str, Any]:
    cursor = tx.conn.execute(
        "UPDATE tasks INDEXED BY tasks_holder SET lease_expires_at = ?, updated_at = ?"
        " WHERE state = 'claimed' AND claimed_by = ? AND lease_expires_at > ?",
        (tx.lease_until(p.lease_s), tx.now_text, p.agent, tx.now_text),
    )
    tx.touch_agent(p.agent, force=True)
    return {"renewed": cursor.rowcount}


def grant_restart_grace(tx: Txn, grace_s: float) -> int:
    """Give leases that lapsed while the daemon was down a short grace (README: restart grace).

    The reaper runs every second while the daemon is up, so a claim still
    present but expired at start was live when the daemon stopped.
    """
    until = format_time(tx.now + timedelta(seconds=grace_s))
    cursor = tx.conn.execute(
        "UPDATE tasks INDEXED BY tasks_lease SET lease_expires_at = ?"
        " WHERE state = 'claimed' AND lease_expires_at < ?",
        (until, until),
    )
    return cursor.rowcount


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
