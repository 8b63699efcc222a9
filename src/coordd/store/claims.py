"""Claims and leases (PROTOCOL.md section 5): the claim primitive, claim_next, the reaper,
heartbeats and the restart grace. Run by the writer inside a `Txn`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import msgspec

from coordd.clock import format_time
from coordd.store.reservations import renew_for_agent
from coordd.store.transaction import (
    CLAIMABLE_BY_AGENT,
    CLEAR_CLAIM,
    ROW_COLUMNS,
    TaskRow,
    Txn,
    dedupe,
    in_list,
    one_row,
    require_row,
)
from coordd_wire import params as P
from coordd_wire.errors import Blocked
from coordd_wire.wire import ClaimResult, HeartbeatResult, MaybeTaskResult


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


#: The claim itself. bench/floor_rows.py runs this same statement, to tell what
#: coordd's rows cost apart from what its daemon adds.
CLAIM_PENDING = (
    "UPDATE tasks SET state = 'claimed', claimed_by = :agent, claimed_at = :now,"
    " lease_expires_at = :until, updated_at = :now, fence = fence + 1, attempts = attempts + 1,"
    " claim_key = :key"
    f" WHERE id = :id AND state = 'pending' AND {CLAIMABLE_BY_AGENT} RETURNING {ROW_COLUMNS}"
)


#: CLAIM_PENDING for several claims at once (`WriteStore.claim_ahead`), PostgreSQL
#: only: each claim's id, agent, lease end and request key come in arrays. The tasks
#: are found by their ids (`id = ANY`); 'pending' comes in an array too, so that the
#: planner cannot prefer the pending tasks' index, whose scan grows with the queue.
CLAIM_PENDING_MANY = (
    "UPDATE tasks SET state = 'claimed', claimed_by = ahead.agent_, claimed_at = :now,"
    " lease_expires_at = ahead.until_, updated_at = :now, fence = fence + 1,"
    " attempts = attempts + 1, claim_key = ahead.key_"
    " FROM unnest(:ids::bigint[], :agents::text[], :untils::text[], :keys::text[],"
    " :states::text[]) AS ahead (id_, agent_, until_, key_, state_)"
    " WHERE tasks.id = ANY(:ids::bigint[]) AND tasks.id = ahead.id_"
    " AND tasks.state = ahead.state_"
    f" AND {CLAIMABLE_BY_AGENT.replace(':agent', 'ahead.agent_')} RETURNING {ROW_COLUMNS}"
)


def leading_claims(steps: Sequence[Any]) -> list[P.ClaimParams]:
    """The claims a group starts with, before its first other command, each id's first
    only: the ones whose claim statement can run before the group's commands without
    changing what any command sees (each touches only its own row, and nothing comes
    between them). Steps are `group.Step`s (`fn`, `args`)."""
    found: dict[int, P.ClaimParams] = {}
    for step in steps:
        if step.fn is not claim_task:
            break
        params: P.ClaimParams = step.args[0]
        found.setdefault(params.id, params)
    return list(found.values())


def _not_claimable(tx: Txn, current: TaskRow, agent: str) -> ClaimResult:
    """A task the claim's UPDATE passed over: assigned elsewhere, or blocked.

    Assignment is checked first (PROTOCOL 9): someone else's task answers
    `won: false` whether or not it is blocked; a blocked one is -32002
    `blocked`, not a lost race, since nobody holds it.
    """
    tx.touch_agent(agent)
    if current.assignee is not None and current.assignee != agent:
        return ClaimResult(won=False, task=current.task)
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


def claim_task(tx: Txn, p: P.ClaimParams) -> ClaimResult:
    """The core primitive: one conditional UPDATE decides the single winner."""
    args = {
        "agent": p.agent,
        "now": tx.now_text,
        "until": tx.lease_until(p.lease_s),
        "id": p.id,
        "key": p.request_key,
    }
    # Claimed already by the group's statement for its leading claims (`leading_claims`);
    # one it did not win is run again here and meets the same row.
    row = tx.claimed_ahead.pop(p.id, None) if tx.claimed_ahead else None
    if row is None:
        row = one_row(tx.conn, CLAIM_PENDING, args)
    if row is None:
        current = require_row(tx.conn, p.id)
        if current.state == "pending":
            return _not_claimable(tx, current, p.agent)
        if current.state != "claimed":
            tx.touch_agent(p.agent)
            return ClaimResult(won=False, task=current.task)
        assert current.lease_expires_at is not None
        if current.lease_expires_at <= tx.now_text:
            if current.open_deps and current.assignee in (None, p.agent):
                # Blocked once pending again: refused as it stands. Expiring it
                # here would be undone with the refusal; the reaper does it.
                return _not_claimable(tx, current, p.agent)
            expired = _expire(tx, current)
            row = one_row(tx.conn, CLAIM_PENDING, args)
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
            return ClaimResult(won=True, task=renewed.task)
        else:
            tx.touch_agent(p.agent)
            return ClaimResult(won=False, task=current.task)
    assert row is not None
    tx.emit("task.claimed", row, p.agent)
    tx.touch_agent(p.agent)
    return ClaimResult(won=True, task=row.task)


def reap_expired(tx: Txn) -> int:
    """Return every expired claim to pending in one statement; one `task.expired` each.

    The reaper, the restart grace, heartbeat and agent.list name the live
    claims' partial index (INDEXED BY), so no statistics or schema change can
    turn a reaper tick into a scan of the table.
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


#: The live claim an earlier `claim_next` of this agent won with this `request_key`
#: (docs/PROTOCOL-1.2.md section 5a). Found among the live claims through the lease
#: index, which holds the holder, as a heartbeat finds an agent's claims: a scan of the
#: live claims (0.5 ms at 3,000, 9 ms at 20,000), so it runs for a `repeat` only, which
#: follows a lost answer, never on a first attempt. An index on the key would make every
#: keyed claim write one more B-tree page (docs/PERFORMANCE.md counts them).
_CLAIM_WON_BY_KEY = (
    f"SELECT {ROW_COLUMNS} FROM tasks INDEXED BY tasks_lease WHERE state = 'claimed'"
    " AND lease_expires_at > :now AND claimed_by = :agent AND claim_key = :key"
)


def next_pending_sql(p: P.ClaimNextParams, args: dict[str, Any]) -> str:
    """The statement that picks `claim_next`'s task, its values bound in `args`.

    It walks the pending tasks only, best first, and stops at the first that
    matches: the queue's partial index is named (INDEXED BY), because with a
    project named the planner otherwise prefers `tasks_project` and reads and
    sorts every task of the project, done ones included (89 ms on a board of
    100,000 tasks, 95% done; 0.007 ms through the queue). Its cost is the
    pending tasks passed over before the first match, never the board's
    history. No index of its own: a claim already deletes its queue entry, and
    each further index would be one more B-tree page per claim
    (docs/PERFORMANCE.md). PostgreSQL drops the hint (`sql.to_postgres`); with the
    project compared as an expression its planner too reads the pending tasks
    only, through the same partial index, though it may sort the few that match
    (tests/store/test_claim_plans.py).
    """
    where = ["state = 'pending'", CLAIMABLE_BY_AGENT]
    if p.project is not None:
        # Compared as an expression, so that no store can take the project's index
        # (every task of the project, done ones included) for the walk.
        where.append("project || '' = :project")
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
    return (
        f"SELECT id FROM tasks INDEXED BY tasks_pending WHERE {' AND '.join(where)}"
        " ORDER BY priority DESC, id LIMIT 1"
    )


def claim_next(tx: Txn, p: P.ClaimNextParams) -> MaybeTaskResult:
    """Claim the best claimable match: highest priority, then lowest id.

    A `repeat` of a call that already won (same agent, same `request_key`:
    its answer was lost) gets that task back, as it stands, instead of a
    second one that its caller would never know it holds. Only a claim still
    live counts: one released, finished or lapsed since is no longer the
    caller's, and the repeat claims afresh, as the call asked.
    """
    reap_expired(tx)
    if p.repeat and p.request_key is not None:
        won = one_row(
            tx.conn, _CLAIM_WON_BY_KEY, {"now": tx.now_text, "agent": p.agent, "key": p.request_key}
        )
        if won is not None:
            tx.touch_agent(p.agent)
            return MaybeTaskResult(task=won.task)
    args: dict[str, Any] = {"agent": p.agent}
    found = tx.conn.execute(next_pending_sql(p, args), args).fetchall()
    tx.touch_agent(p.agent)
    if not found:
        return MaybeTaskResult(task=None)
    claim_args = {
        "agent": p.agent,
        "now": tx.now_text,
        "until": tx.lease_until(p.lease_s),
        "id": found[0][0],
        "key": p.request_key,
    }
    row = one_row(tx.conn, CLAIM_PENDING, claim_args)
    assert row is not None  # the writer is the only writer: the row is still pending
    tx.emit("task.claimed", row, p.agent)
    return MaybeTaskResult(task=row.task)


def heartbeat(tx: Txn, p: P.HeartbeatParams) -> HeartbeatResult:
    """Renew the agent's live claims: found among the live claims (the lease index holds
    the holder), which on a real board are a few per agent at work."""
    cursor = tx.conn.execute(
        "UPDATE tasks INDEXED BY tasks_lease SET lease_expires_at = ?, updated_at = ?"
        " WHERE state = 'claimed' AND claimed_by = ? AND lease_expires_at > ?",
        (tx.lease_until(p.lease_s), tx.now_text, p.agent, tx.now_text),
    )
    tx.touch_agent(p.agent, force=True)
    # 1.1: the agent's live reservations too, each to now + its own ttl_s.
    return HeartbeatResult(
        renewed=cursor.rowcount, reservations_renewed=renew_for_agent(tx, p.agent)
    )


def grant_restart_grace(tx: Txn, grace_s: float) -> int:
    """Give leases that lapsed while the daemon was down a short grace (USING.md: restart grace).

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
