"""Reservations (PROTOCOL.md section 10): acquire, release, check, list, renew, end.

Writes run in the writer's `Txn` like every other command; `check` and
`list` run on a reader. Liveness is decided in SQL at the instant of the
statement (`LIVE`), so a reservation whose time ran out, or whose task's
lease lapsed, stops counting at once, before any housekeeping deletes it.

Candidates come from the prefix index (`coordd_wire.patterns`): a path looks up
each of its leading runs of segments; a pattern looks up the prefixes above
its own and ranges over those below. Only the candidates are matched in
Python, in linear time (`coordd_wire.wildmatch`). Each request parses a
candidate's pattern once, whatever the size of the shared parse cache, and
prepares each path it checks once for every pattern asked about it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from coordd.clock import time_left
from coordd.limits import Limits
from coordd.pattern_verdicts import Verdicts
from coordd.store.reservation_rows import (
    COLUMNS,
    LIVE,
    MATCHED,
    PATTERN,
    ByPrefix,
    Row,
    as_wire,
    read_whole,
    rows_of,
)
from coordd.store.sql import Db
from coordd.store.transaction import Txn, in_list, require_row
from coordd_wire import params as P
from coordd_wire.errors import InvalidParams, LeaseLost, Reserved
from coordd_wire.patterns import (
    Pattern,
    candidate_prefixes,
    parse,
    prefix_upper_bound,
    relative_path,
)
from coordd_wire.wire import (
    CheckResult,
    PathConflict,
    PatternConflict,
    ReleasedResult,
    ReservationsResult,
)

# --- acquire ------------------------------------------------------------------


def acquire(tx: Txn, p: P.AcquireParams, verdicts: Verdicts | None = None) -> ReservationsResult:
    """Grant every pattern or none (PROTOCOL.md section 10); renew the ones already held.

    `verdicts`: what a reader already matched for this request (`file.guard`)."""
    if p.task_id is not None:
        require_task_held(tx.conn, tx.now_text, p.task_id, p.agent)
    patterns = [parse(text) for text in dict.fromkeys(p.patterns)]
    exclusive = True if p.exclusive is None else p.exclusive
    conflicts = find_conflicts(
        tx.conn,
        tx.now_text,
        p.project,
        p.agent,
        patterns=patterns,
        exclusive=exclusive,
        verdicts=verdicts,
    )
    if conflicts:
        raise refusal(conflicts, tx.now_text)
    ttl_s = P.DEFAULT_TTL_S if p.ttl_s is None else p.ttl_s
    expires_at = tx.lease_until(ttl_s)
    args: dict[str, Any] = {"project": p.project, "agent": p.agent, "now": tx.now_text}
    granted = []
    for pattern in patterns:
        args["pattern"] = pattern.text
        # A dead reservation of the same pattern gives way to a new one (new id);
        # a live one is renewed in place (same id), as the protocol says.
        tx.conn.execute(
            "DELETE FROM reservations AS r WHERE r.project = :project AND r.agent = :agent"
            f" AND r.pattern = :pattern AND NOT ({LIVE})",
            args,
        )
        row = tx.conn.execute(
            "INSERT INTO reservations (project, agent, pattern, prefix, exclusive, reason,"
            " task_id, created_at, expires_at, ttl_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (project, agent, pattern) DO UPDATE SET exclusive = excluded.exclusive,"
            " reason = excluded.reason, task_id = excluded.task_id,"
            " expires_at = excluded.expires_at, ttl_s = excluded.ttl_s"
            " RETURNING id, project, agent, pattern, exclusive, reason, task_id, created_at,"
            " expires_at, ttl_s",
            (
                p.project,
                p.agent,
                pattern.text,
                pattern.prefix,
                exclusive,
                p.reason,
                p.task_id,
                tx.now_text,
                expires_at,
                ttl_s,
            ),
        ).fetchall()
        granted.append(as_wire(row[0]))
    tx.touch_agent(p.agent)
    return ReservationsResult(reservations=granted)


def require_task_held(conn: Db, now: str, task_id: int, agent: str) -> None:
    """-32001 if the task does not exist, -32003 unless `agent` holds it on a live lease."""
    task = require_row(conn, task_id)
    held = (
        task.state == "claimed"
        and task.claimed_by == agent
        and task.lease_expires_at is not None
        and task.lease_expires_at > now
    )
    if not held:
        holder = f"held by {task.claimed_by}" if task.state == "claimed" else task.state
        raise LeaseLost(
            f"task {task_id} is {holder}, not held by you ({agent}): a reservation can be"
            " bound only to a task you hold; claim it first, or reserve without a task",
            task=task.raw,
        )


def find_conflicts(
    conn: Db,
    now: str,
    project: str,
    agent: str,
    *,
    patterns: Iterable[Pattern],
    exclusive: bool,
    verdicts: Verdicts | None = None,
) -> list[PatternConflict]:
    """Each pair of one of `patterns` and a live reservation
    of another agent in its way, in pattern order, then reservation id."""
    pairs: list[tuple[str, int]] = []
    verdicts = Verdicts() if verdicts is None else verdicts
    for pattern in patterns:
        rows = _candidates(conn, now, project, agent, pattern=pattern, exclusive=exclusive)
        overlapping = [int(r[0]) for r in rows if verdicts.overlaps(pattern, r[PATTERN])]
        verdicts.overlapped_all(pattern)
        pairs += [(pattern.text, rid) for rid in sorted(overlapping)]
        if len(pairs) >= Limits.max_reported_conflicts:
            break
    pairs = pairs[: Limits.max_reported_conflicts]
    whole = read_whole(conn, list({rid for _, rid in pairs}))
    return [PatternConflict(pattern=text, reservation=whole[rid]) for text, rid in pairs]


def in_the_way(
    conn: Db,
    now: str,
    project: str,
    agent: str,
    *,
    pattern: Pattern,
    verdicts: Verdicts,
    above: ByPrefix | None = None,
) -> bool:
    """Whether any live reservation of another agent overlaps `pattern` (exclusive or
    not): `find_conflicts`'s answer for one exclusive pattern, as a yes or no, looking
    first at what a reader already found in the way. `above`: `others_above`'s rows,
    shared by the patterns of one request."""
    rows = _candidates(conn, now, project, agent, pattern=pattern, exclusive=True, above=above)
    if verdicts.any_overlapping(pattern, rows):
        return True
    verdicts.overlapped_all(pattern)
    return False


def others_above(conn: Db, now: str, project: str, agent: str) -> ByPrefix:
    """Other agents' live reservations by key: what `in_the_way` reads above a pattern."""
    where = f"r.project = :project AND r.agent <> :agent AND {LIVE}"
    return ByPrefix(conn, where, {"project": project, "agent": agent, "now": now})


def _candidates(
    conn: Db,
    now: str,
    project: str,
    agent: str,
    *,
    pattern: Pattern,
    exclusive: bool,
    above: ByPrefix | None = None,
) -> list[Row]:
    """The live reservations of other agents the prefix index cannot rule out for
    `pattern`, as (id, pattern) rows: matched first, read whole only if they overlap."""
    args: dict[str, Any] = {"project": project, "agent": agent, "now": now}
    where = f"r.project = :project AND r.agent <> :agent AND {LIVE}"
    if not exclusive:
        where += " AND r.exclusive"  # shared with shared never conflicts
    prefix = pattern.prefix
    if not prefix:
        # Mine starts with a wildcard: every reservation in the project is a candidate.
        sql = f"SELECT {MATCHED} FROM reservations AS r WHERE {where}"
        return list(conn.execute(sql, args).fetchall())
    # Above: a prefix of mine (a shorter literal run); below: mine is a prefix of theirs.
    keys = [p for p in candidate_prefixes(prefix[:-1]) if p != prefix]
    if above is not None and exclusive:
        found = above.rows(keys)
    else:
        found = list(
            conn.execute(
                f"SELECT {MATCHED} FROM reservations AS r WHERE {where}"
                f" AND r.prefix IN {in_list('above', keys, args)}",
                args,
            ).fetchall()
        )
    args.update(low=prefix, high=prefix_upper_bound(prefix))
    found += conn.execute(
        f"SELECT {MATCHED} FROM reservations AS r WHERE {where}"
        " AND r.prefix >= :low AND r.prefix < :high",
        args,
    ).fetchall()
    return found


def refusal(conflicts: list[PatternConflict], now: str) -> Reserved:
    """The -32002 `reserved` error, naming who holds what, until when (and how long that
    is from now), for which task."""
    first = conflicts[0].reservation
    left = time_left(first.expires_at, now)
    task = f" for task #{first.task_id}" if first.task_id is not None else ""
    others = len({c.reservation.id for c in conflicts}) - 1
    more = f" (and {others} more)" if others else ""
    return Reserved(
        f"reserved: {conflicts[0].pattern!r} overlaps {first.pattern!r}, held by"
        f" {first.agent} until {first.expires_at}{f' ({left})' if left else ''}{task}"
        f"{more}; work elsewhere,"
        " or wait for it (`wait_s`)",
        conflicts=conflicts,
    )


# --- release, renew, purge ------------------------------------------------------


def release(tx: Txn, p: P.ReleaseReservationsParams) -> ReleasedResult:
    """Delete the agent's reservations in the project (`of`'s, when given: a person frees
    an ended tab's): the named patterns or ids, or all."""
    whose = p.agent if p.of is None else p.of
    args: dict[str, Any] = {"project": p.project, "agent": whose, "now": tx.now_text}
    where = "r.project = :project AND r.agent = :agent"
    if p.patterns is not None:
        where += f" AND r.pattern IN {in_list('pattern', list(dict.fromkeys(p.patterns)), args)}"
    elif p.ids is not None:
        where += f" AND r.id IN {in_list('id', list(dict.fromkeys(p.ids)), args)}"
    released = tx.conn.execute(
        f"DELETE FROM reservations AS r WHERE {where} AND {LIVE}", args
    ).rowcount
    tx.conn.execute(f"DELETE FROM reservations AS r WHERE {where}", args)  # dead ones too
    if released:
        tx.freed_projects.add(p.project)
    tx.touch_agent(p.agent)
    return ReleasedResult(released=released)


def renew_for_agent(tx: Txn, agent: str) -> int:
    """`agent.heartbeat`: each live reservation of the agent to now + its own `ttl_s`."""
    live = tx.conn.execute(
        f"SELECT r.id, r.ttl_s FROM reservations AS r INDEXED BY reservations_agent"
        f" WHERE r.agent = :agent AND {LIVE}",
        {"agent": agent, "now": tx.now_text},
    ).fetchall()
    tx.conn.executemany(
        "UPDATE reservations SET expires_at = ? WHERE id = ?",
        [(tx.lease_until(ttl_s), reservation_id) for reservation_id, ttl_s in live],
    )
    return len(live)


def purge_expired(tx: Txn) -> int:
    """Housekeeping: delete reservations whose time ran out (they stopped counting already)."""
    return tx.conn.execute(
        "DELETE FROM reservations WHERE expires_at <= ?", (tx.now_text,)
    ).rowcount


# --- reads --------------------------------------------------------------------


def check(conn: Db, now: str, p: P.CheckParams, verdicts: Verdicts | None = None) -> CheckResult:
    """For each path, every live reservation of another agent that covers it.

    `verdicts`: what a reader already matched for this request (`file.guard`)."""
    pairs: list[tuple[str, int]] = []
    verdicts = Verdicts() if verdicts is None else verdicts
    args: dict[str, Any] = {"project": p.project, "now": now}
    where = f"r.project = :project AND {LIVE}"
    if p.agent is not None:
        where += " AND r.agent <> :agent"
        args["agent"] = p.agent
    candidates = ByPrefix(conn, where, args)
    for index, given in enumerate(p.paths):
        try:
            path = relative_path(given, p.project)
        except ValueError as exc:
            raise InvalidParams(f"{exc} - at `$.paths[{index}]`", field="paths") from None
        rows = candidates.rows(candidate_prefixes(path))
        covering = verdicts.covering(rows, path)
        verdicts.covered_all(path)
        pairs += [(given, rid) for rid in covering]
        if len(pairs) >= Limits.max_reported_conflicts:
            break
    pairs = pairs[: Limits.max_reported_conflicts]
    whole = read_whole(conn, list({rid for _, rid in pairs}))
    return CheckResult(
        conflicts=[PathConflict(path=given, reservation=whole[rid]) for given, rid in pairs]
    )


def list_live(conn: Db, now: str, p: P.ListReservationsParams) -> ReservationsResult:
    args: dict[str, Any] = {"now": now}
    where = [LIVE]
    if p.project is not None:
        where.append("r.project = :project")
        args["project"] = p.project
    if p.agent is not None:
        where.append("r.agent = :agent")
        args["agent"] = p.agent
    sql = f"SELECT {COLUMNS} FROM reservations AS r WHERE {' AND '.join(where)} ORDER BY r.id"
    return ReservationsResult(reservations=rows_of(conn, sql, args))


def earliest_end(conflicts: Sequence[PatternConflict]) -> str | None:
    """When the first reservation in the way runs out of time (a waiter's next look)."""
    return min((c.reservation.expires_at for c in conflicts), default=None)
