"""Slot and port leases (docs/PROTOCOL-1.2.md section 13): acquire, release, list, reap.

A lease lives while its own time has not run out and, when task-bound, while
its task is still held by its agent on a live lease (decided in SQL at each
statement, as reservations are, so a task leaving `claimed` frees its slots
in that very transaction without a statement of its own). Its time is
`max(expires_at, last_seen + ttl_s)`: the agent's heartbeat, which records
the agent as seen, renews it without writing a row here, so heartbeats and
claims do no new work (the reaper moves `expires_at` up lazily).

Slot and landing events are not task events: they carry `task: null`, the
lease (or landing) in a member of their own, and the project (`emit`); like
every event with no task they reach only callers that name their type
(`method_table.OPT_IN_EVENT_TYPES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec

from coordd.clock import format_time, parse_time, time_left
from coordd.store.reservations import require_task_held
from coordd.store.sql import Db
from coordd.store.transaction import Txn, in_list
from coordd_wire import params_slots as S
from coordd_wire.errors import Conflict
from coordd_wire.wire import SlotLease
from coordd_wire.wire_slots import Released, SlotList, SlotResult

#: The task-bound half of liveness, in SQL (the time half is `_end`).
TASK_HELD = (
    "(s.task_id IS NULL OR EXISTS (SELECT 1 FROM tasks AS t WHERE t.id = s.task_id"
    " AND t.state = 'claimed' AND t.claimed_by = s.agent AND t.lease_expires_at > :now))"
)
_COLUMNS = (
    "s.id, s.project, s.name, s.agent, s.capacity, s.port, s.task_id, s.created_at,"
    " s.expires_at, s.ttl_s, a.last_seen"
)
_FROM = "slot_leases AS s LEFT JOIN agents AS a ON a.agent = s.agent"

_encoder = msgspec.json.Encoder()


def _end(expires_at: str, ttl_s: float, last_seen: str | None) -> str:
    """When a lease runs out: its own time, or a call of its agent's + its ttl, if later."""
    if last_seen is None:
        return expires_at
    seen_end = format_time(parse_time(last_seen) + timedelta(seconds=ttl_s))
    return max(expires_at, seen_end)


def _as_wire(values: Sequence[Any]) -> SlotLease:
    rid, project, name, agent, capacity, port, task_id, created_at = values[:8]
    expires_at, ttl_s, last_seen = values[8], float(values[9]), values[10]
    return SlotLease(
        id=rid, project=project, name=name, agent=agent, capacity=capacity, port=port,
        task_id=task_id, created_at=created_at, fence=rid,
        expires_at=_end(expires_at, ttl_s, last_seen),
        ttl_s=int(ttl_s) if ttl_s.is_integer() else ttl_s,
    )  # fmt: skip


@dataclass
class Found:
    """A lease as this module reads it: the wire's, and its liveness now."""

    lease: SlotLease
    live: bool
    #: Why a dead one ended (its task left `claimed`, or its time ran out), or why a
    #: live one is being ended.
    ended: str | None = None


def _leases(conn: Db, now: str, where: str, args: dict[str, Any]) -> list[Found]:
    """Every lease matching `where` (on `s`), ascending id; dead ones too."""
    args = {**args, "now": now}
    rows = conn.execute(
        f"SELECT {_COLUMNS}, {TASK_HELD} FROM {_FROM} WHERE {where} ORDER BY s.id", args
    ).fetchall()
    out = []
    for row in rows:
        lease = _as_wire(row[:11])
        live = bool(row[11]) and lease.expires_at > now
        out.append(Found(lease, live, None if live else ("expired" if row[11] else "task")))
    return out


def live_leases(conn: Db, now: str, where: str, args: dict[str, Any]) -> list[SlotLease]:
    return [found.lease for found in _leases(conn, now, where, args) if found.live]


def emit(tx: Txn, event_type: str, project: str, agent: str | None, **member: Any) -> None:
    """Append a non-task event (`slot.*`, `land.*`): `task: null`, its object by name."""

    def encode(seq: int) -> bytes:
        body = {"seq": seq, "at": tx.now_text, "type": event_type, "task_id": None}
        return _encoder.encode({**body, "agent": agent, "task": None, "project": project, **member})

    tx.emit_untasked(event_type, project, encode)


def _lease_event(tx: Txn, event_type: str, lease: SlotLease, why: str | None) -> None:
    emit(tx, event_type, lease.project, lease.agent, slot=lease, reason=why)


# --- acquire ------------------------------------------------------------------


def _sweep(tx: Txn, project: str, name: str) -> list[SlotLease]:
    """The live leases of a name; dead ones end first (their `slot.released` precedes
    the grant they make room for, so the log replays in order)."""
    found = _leases(
        tx.conn, tx.now_text, "s.project = :project AND s.name = :name",
        {"project": project, "name": name},
    )  # fmt: skip
    _end_leases(tx, [lease for lease in found if not lease.live])
    return [lease.lease for lease in found if lease.live]


def acquire(tx: Txn, p: S.SlotAcquireParams) -> SlotResult:
    """Grant a unit of the slot, renew the caller's, or refuse with who holds it."""
    if p.task_id is not None:
        require_task_held(tx.conn, tx.now_text, p.task_id, p.agent)
    capacity = p.capacity or 1
    held = _sweep(tx, p.project, p.name)
    if any(lease.port is not None for lease in held):
        raise Conflict(
            f"{p.name} is the name of a port lease in this project, not a slot;"
            " choose another name",
            slot=p.name,
        )
    others = [lease for lease in held if lease.agent != p.agent]
    sizes = {lease.capacity for lease in others}
    if sizes and sizes != {capacity}:
        raise Conflict(
            f"slot {p.name} is held with capacity {sizes.pop()}, not {capacity}: every"
            " holder of a slot names the same capacity",
            slot=p.name,
            holders=others,
        )
    mine = next((lease for lease in held if lease.agent == p.agent), None)
    if mine is None and len(others) >= capacity:
        raise busy(p.name, capacity, others, tx.now_text)
    lease = _upsert(
        tx, p.project, p.name, p.agent, capacity=capacity, port=None, task_id=p.task_id,
        ttl_s=p.ttl_s,
    )  # fmt: skip
    if mine is None:
        _lease_event(tx, "slot.granted", lease, None)
    return SlotResult(lease=lease, holders=len(others) + 1)


def busy(name: str, capacity: int, holders: list[SlotLease], now: str) -> Conflict:
    """-32002 `conflict`: the slot is full; `data.retry_at` is when a holder's time ends."""
    first = holders[0]
    left = time_left(first.expires_at, now)
    more = f" (and {len(holders) - 1} more)" if len(holders) > 1 else ""
    return Conflict(
        f"slot {name} is full ({len(holders)} of {capacity}): held by {first.agent}"
        f" until {first.expires_at}{f' ({left})' if left else ''}{more};"
        " wait for it (`wait_s`)",
        slot=name,
        holders=holders,
        retry_at=min(h.expires_at for h in holders),
    )


def _upsert(
    tx: Txn,
    project: str,
    name: str,
    agent: str,
    *,
    capacity: int | None,
    port: int | None,
    task_id: int | None,
    ttl_s: float | None,
) -> SlotLease:
    ttl = S.DEFAULT_SLOT_TTL_S if ttl_s is None else ttl_s
    args = {"project": project, "name": name, "agent": agent, "now": tx.now_text}
    # A dead lease of the same key gives way to a new grant (a new id: a new fence).
    # (A dead lease of the same key was ended by `_sweep`: this grant is a new row,
    # a new id, a new fence; a live one is renewed in place.)
    tx.conn.execute(
        "INSERT INTO slot_leases (project, name, agent, capacity, port, task_id, created_at,"
        " expires_at, ttl_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (project, name, agent) DO UPDATE SET task_id = excluded.task_id,"
        " expires_at = excluded.expires_at, ttl_s = excluded.ttl_s",
        (project, name, agent, capacity, port, task_id, tx.now_text, tx.lease_until(ttl), ttl),
    )
    tx.touch_agent(agent, force=True)
    (lease,) = _leases(
        tx.conn, tx.now_text, "s.project = :project AND s.name = :name AND s.agent = :agent", args
    )
    return lease.lease


# --- ports --------------------------------------------------------------------


def lease_port(tx: Txn, p: S.PortLeaseParams) -> SlotResult:
    """The lowest port of the range that no live lease (in any project) holds."""
    if p.task_id is not None:
        require_task_held(tx.conn, tx.now_text, p.task_id, p.agent)
    name = p.name or S.DEFAULT_PORT_NAME
    low = S.DEFAULT_PORT_LOW if p.low is None else p.low
    high = S.DEFAULT_PORT_HIGH if p.high is None else p.high
    same = _sweep(tx, p.project, name)
    if any(lease.port is None for lease in same):
        raise Conflict(f"{name} is a slot in this project, not a port lease", slot=name)
    mine = next((lease for lease in same if lease.agent == p.agent), None)
    if mine is not None and mine.port is not None and low <= mine.port <= high:
        lease = _upsert(
            tx, p.project, name, p.agent, capacity=None, port=mine.port, task_id=p.task_id,
            ttl_s=p.ttl_s,
        )  # fmt: skip
        return SlotResult(lease=lease)
    if mine is not None:  # a renewal outside the new range: give the old port back first
        _end_leases(tx, [Found(mine, live=True)], "released")
        mine = None
    # Ports are a machine's, not a project's: every project's live leases count
    # (in team mode, every machine's: the store is the team's).
    taken = {
        lease.port
        for lease in live_leases(
            tx.conn, tx.now_text, "s.port BETWEEN :low AND :high", {"low": low, "high": high}
        )
    }
    port = next((n for n in range(low, high + 1) if n not in taken), None)
    if port is None:
        raise Conflict(
            f"no free port in {low}..{high}: all {high - low + 1} are leased; release one,"
            " or ask for a wider range",
            low=low,
            high=high,
        )
    lease = _upsert(
        tx, p.project, name, p.agent, capacity=None, port=port, task_id=p.task_id,
        ttl_s=p.ttl_s,
    )  # fmt: skip
    _lease_event(tx, "slot.granted", lease, None)
    return SlotResult(lease=lease)


# --- release, reap ------------------------------------------------------------


def _end_leases(tx: Txn, leases: list[Found], why: str | None = None) -> None:
    """Delete `leases` with a `slot.released` each: `why`, or why each one died."""
    if not leases:
        return
    args: dict[str, Any] = {}
    tx.conn.execute(
        f"DELETE FROM slot_leases WHERE id IN {in_list('id', [x.lease.id for x in leases], args)}",
        args,
    )
    for found in leases:
        _lease_event(tx, "slot.released", found.lease, why or found.ended or "released")
        tx.freed_projects.add(found.lease.project)


def release(tx: Txn, p: S.SlotReleaseParams) -> Released:
    """End the agent's leases in the project: the named ones, the given ids, or all."""
    args: dict[str, Any] = {"project": p.project, "agent": p.agent}
    where = "s.project = :project AND s.agent = :agent"
    if p.names is not None:
        where += f" AND s.name IN {in_list('name', list(dict.fromkeys(p.names)), args)}"
    elif p.ids is not None:
        where += f" AND s.id IN {in_list('id', list(dict.fromkeys(p.ids)), args)}"
    found = _leases(tx.conn, tx.now_text, where, args)
    live = [lease for lease in found if lease.live]
    _end_leases(tx, live, "released")
    _end_leases(tx, [lease for lease in found if not lease.live])
    tx.touch_agent(p.agent)
    return Released(released=len(live))


def leases_of(tx: Txn, of: str, project: str | None) -> list[Found]:
    """1.2 `agent.release`: `of`'s slot and port leases (in `project`, or every project),
    live or lapsed, ascending id, their liveness as of now: read before the release ends
    `of`'s claims, so a lease bound to one of them is still live. A lease a landing
    holds at the head of its queue (state `landing`) is left to that landing, which ends
    it on `land.finish` or when its time runs out: ending it here would let the next
    landing start while this one is under way. A `land:` slot taken by hand is not a
    landing's, and goes like any other."""
    args: dict[str, Any] = {"agent": of}
    where = (
        "s.agent = :agent AND NOT EXISTS (SELECT 1 FROM landings AS l"
        " WHERE l.lease_id = s.id AND l.state = 'landing')"
    )
    if project is not None:
        where += " AND s.project = :project"
        args["project"] = project
    return _leases(tx.conn, tx.now_text, where, args)


def end_released(tx: Txn, leases: list[Found], why: str) -> int:
    """End `leases` (from `leases_of`) in one id-ordered pass: each live one with a
    `slot.released` that says `why`, a lapsed one with its own reason, as the reaper
    would have. The number that were live."""
    for lease in leases:
        if lease.live:
            lease.ended = why
    _end_leases(tx, leases)
    return sum(1 for lease in leases if lease.live)


def release_landing_slot(tx: Txn, project: str, agent: str, name: str) -> None:
    release(tx, S.SlotReleaseParams(agent=agent, project=project, names=[name]))


def reap(tx: Txn) -> int:
    """Housekeeping: end leases whose time ran out or whose task left `claimed`; move a
    renewed one's `expires_at` up to its agent's last call + ttl (so the look is cheap)."""
    args = {"now": tx.now_text}
    due = _leases(tx.conn, tx.now_text, f"(s.expires_at <= :now OR NOT {TASK_HELD})", args)
    ended = []
    for lease in due:
        if lease.live:
            tx.conn.execute(
                "UPDATE slot_leases SET expires_at = ? WHERE id = ?",
                (lease.lease.expires_at, lease.lease.id),
            )
        else:
            ended.append(lease)
    _end_leases(tx, ended)
    return len(ended)


# --- reads --------------------------------------------------------------------


def list_live(conn: Db, now: str, p: S.SlotListParams) -> SlotList:
    where = ["1 = 1"]
    args: dict[str, Any] = {}
    for column in ("project", "agent", "name"):
        value = getattr(p, column)
        if value is not None:
            where.append(f"s.{column} = :{column}")
            args[column] = value
    return SlotList(leases=live_leases(conn, now, " AND ".join(where), args))
