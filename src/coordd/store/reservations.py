"""Reservations (PROTOCOL.md section 10): acquire, release, check, list, renew, end.

Writes run in the writer's `Txn` like every other command; `check` and
`list` run on a reader. Liveness is decided in SQL at the instant of the
statement (`LIVE`), so a reservation whose time ran out, or whose task's
lease lapsed, stops counting at once, before any housekeeping deletes it.

Candidates come from the prefix index (`coordd.patterns`): a path looks up
each of its leading runs of segments; a pattern looks up the prefixes above
its own and ranges over those below. Only the candidates are matched in
Python, in linear time (`coordd.wildmatch`). Each request parses a
candidate's pattern once, whatever the size of the shared parse cache, and
prepares each path it checks once for every pattern asked about it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from coordd.clock import time_left
from coordd.limits import Limits
from coordd.patterns import (
    Pattern,
    candidate_prefixes,
    overlap,
    parse,
    prefix_upper_bound,
    relative_path,
)
from coordd.protocol import params as P
from coordd.store.sql import Db
from coordd.store.transaction import Txn, in_list, require_row
from coordd.wildmatch import PathBits
from coordd_client.protocol.errors import InvalidParams, LeaseLost, Reserved

#: Live now (`:now`): not expired and, when task-bound, its task still held on a live lease.
LIVE = (
    "r.expires_at > :now AND (r.task_id IS NULL OR EXISTS (SELECT 1 FROM tasks AS t"
    " WHERE t.id = r.task_id AND t.state = 'claimed' AND t.claimed_by = r.agent"
    " AND t.lease_expires_at > :now))"
)
_COLUMNS = (
    "r.id, r.project, r.agent, r.pattern, r.exclusive, r.reason, r.task_id,"
    " r.created_at, r.expires_at, r.ttl_s"
)
_KEYS = (
    "id",
    "project",
    "agent",
    "pattern",
    "exclusive",
    "reason",
    "task_id",
    "created_at",
    "expires_at",
    "ttl_s",
)


def _as_wire(values: Sequence[Any]) -> dict[str, Any]:
    reservation = dict(zip(_KEYS, values, strict=True))
    reservation["exclusive"] = bool(reservation["exclusive"])
    ttl = reservation["ttl_s"]
    reservation["ttl_s"] = int(ttl) if float(ttl).is_integer() else ttl
    return reservation


def _rows(conn: Db, sql: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [_as_wire(values) for values in conn.execute(sql, args).fetchall()]


# --- acquire ------------------------------------------------------------------


def acquire(tx: Txn, p: P.AcquireParams) -> dict[str, Any]:
    """Grant every pattern or none (PROTOCOL.md section 10); renew the ones already held."""
    if p.task_id is not None:
        require_task_held(tx.conn, tx.now_text, p.task_id, p.agent)
    patterns = [parse(text) for text in dict.fromkeys(p.patterns)]
    exclusive = True if p.exclusive is None else p.exclusive
    conflicts = find_conflicts(
        tx.conn, tx.now_text, p.project, p.agent, patterns=patterns, exclusive=exclusive
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
        granted.append(_as_wire(row[0]))
    tx.touch_agent(p.agent)
    return {"reservations": granted}


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
) -> list[dict[str, Any]]:
    """`[{"pattern", "reservation"}]`: each pair of one of `patterns` and a live reservation
    of another agent in its way, in pattern order, then reservation id."""
    conflicts: list[dict[str, Any]] = []
    parsed: dict[str, Pattern] = {}  # this request's candidates, each parsed once
    for pattern in patterns:
        for reservation in _overlapping(
            conn, now, project, agent, pattern=pattern, exclusive=exclusive, parsed=parsed
        ):
            conflicts.append({"pattern": pattern.text, "reservation": reservation})
            if len(conflicts) >= Limits.max_reported_conflicts:
                return conflicts
    return conflicts


def _overlapping(
    conn: Db,
    now: str,
    project: str,
    agent: str,
    *,
    pattern: Pattern,
    exclusive: bool,
    parsed: dict[str, Pattern],
) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"project": project, "agent": agent, "now": now}
    where = f"r.project = :project AND r.agent <> :agent AND {LIVE}"
    if not exclusive:
        where += " AND r.exclusive"  # shared with shared never conflicts
    prefix = pattern.prefix
    if prefix:
        # Above: a prefix of mine (a shorter literal run); below: mine is a prefix of theirs.
        above = [p for p in candidate_prefixes(prefix[:-1]) if p != prefix]
        found = _rows(
            conn,
            f"SELECT {_COLUMNS} FROM reservations AS r WHERE {where}"
            f" AND r.prefix IN {in_list('above', above, args)}",
            args,
        )
        args.update(low=prefix, high=prefix_upper_bound(prefix))
        found += _rows(
            conn,
            f"SELECT {_COLUMNS} FROM reservations AS r WHERE {where}"
            " AND r.prefix >= :low AND r.prefix < :high",
            args,
        )
    else:
        # Mine starts with a wildcard: every reservation in the project is a candidate.
        found = _rows(conn, f"SELECT {_COLUMNS} FROM reservations AS r WHERE {where}", args)
    found.sort(key=lambda r: r["id"])
    return [r for r in found if overlap(pattern, _parsed(parsed, r["pattern"]))]


def _parsed(parsed: dict[str, Pattern], text: str) -> Pattern:
    found = parsed.get(text)
    if found is None:
        found = parsed[text] = parse(text)
    return found


def refusal(conflicts: list[dict[str, Any]], now: str) -> Reserved:
    """The -32002 `reserved` error, naming who holds what, until when (and how long that
    is from now), for which task."""
    first = conflicts[0]["reservation"]
    left = time_left(first["expires_at"], now)
    task = f" for task #{first['task_id']}" if first["task_id"] is not None else ""
    others = len({c["reservation"]["id"] for c in conflicts}) - 1
    more = f" (and {others} more)" if others else ""
    return Reserved(
        f"reserved: {conflicts[0]['pattern']!r} overlaps {first['pattern']!r}, held by"
        f" {first['agent']} until {first['expires_at']}{f' ({left})' if left else ''}{task}"
        f"{more}; work elsewhere,"
        " or wait for it (`wait_s`)",
        conflicts=conflicts,
    )


# --- release, renew, purge ------------------------------------------------------


def release(tx: Txn, p: P.ReleaseReservationsParams) -> dict[str, Any]:
    """Delete the agent's reservations in the project: the named patterns or ids, or all."""
    args: dict[str, Any] = {"project": p.project, "agent": p.agent, "now": tx.now_text}
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
    return {"released": released}


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


def check(conn: Db, now: str, p: P.CheckParams) -> dict[str, Any]:
    """For each path, every live reservation of another agent that covers it."""
    conflicts: list[dict[str, Any]] = []
    parsed: dict[str, Pattern] = {}  # this request's candidates, each parsed once
    for index, given in enumerate(p.paths):
        try:
            path = relative_path(given, p.project)
        except ValueError as exc:
            raise InvalidParams(f"{exc} - at `$.paths[{index}]`", field="paths") from None
        args: dict[str, Any] = {"project": p.project, "now": now}
        where = f"r.project = :project AND {LIVE}"
        if p.agent is not None:
            where += " AND r.agent <> :agent"
            args["agent"] = p.agent
        keys = in_list("prefix", candidate_prefixes(path), args)
        bits = PathBits(path)
        for reservation in _rows(
            conn,
            f"SELECT {_COLUMNS} FROM reservations AS r WHERE {where} AND r.prefix IN {keys}"
            " ORDER BY r.id",
            args,
        ):
            if _parsed(parsed, reservation["pattern"]).covers_bits(bits):
                conflicts.append({"path": given, "reservation": reservation})
                if len(conflicts) >= Limits.max_reported_conflicts:
                    return {"conflicts": conflicts}
    return {"conflicts": conflicts}


def list_live(conn: Db, now: str, p: P.ListReservationsParams) -> dict[str, Any]:
    args: dict[str, Any] = {"now": now}
    where = [LIVE]
    if p.project is not None:
        where.append("r.project = :project")
        args["project"] = p.project
    if p.agent is not None:
        where.append("r.agent = :agent")
        args["agent"] = p.agent
    sql = f"SELECT {_COLUMNS} FROM reservations AS r WHERE {' AND '.join(where)} ORDER BY r.id"
    return {"reservations": _rows(conn, sql, args)}


def earliest_end(conflicts: list[dict[str, Any]]) -> str | None:
    """When the first reservation in the way runs out of time (a waiter's next look)."""
    return min((c["reservation"]["expires_at"] for c in conflicts), default=None)
