"""The landing queue (docs/PROTOCOL-1.2.md section 14): join, start, finish, list, reap.

One queue per project and target branch, in id order. An entry lives as a
slot lease does (`slots._end`: its own time, renewed by any call of its
agent's). The head, the oldest live entry, may start: it takes the target's
landing slot (`land:<onto>`, capacity 1), whose lease id is the landing's
fence. The git work is the client's; the daemon only orders and leases.
"""

from __future__ import annotations

import json
from typing import Any

from coordd.store import reservations, slots
from coordd.store.sql import Db
from coordd.store.transaction import Txn
from coordd_wire import params as P
from coordd_wire import params_slots as S
from coordd_wire.bounds import path_chunks
from coordd_wire.errors import Conflict, LeaseLost, NotFound

_COLUMNS = (
    "l.id, l.project, l.onto, l.branch, l.agent, l.task_id, l.state, l.paths, l.created_at,"
    " l.updated_at, l.lease_id, l.reason, l.landed_commit, l.expires_at, l.ttl_s, a.last_seen"
)
_FROM = "landings AS l LEFT JOIN agents AS a ON a.agent = l.agent"
_KEYS = (
    "id", "project", "onto", "branch", "agent", "task_id", "state", "paths", "created_at",
    "updated_at", "lease_id", "reason", "commit",
)  # fmt: skip
OPEN = "l.state IN ('queued', 'landing')"


def _rows(conn: Db, now: str, where: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in conn.execute(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE {where} ORDER BY l.id", args
    ).fetchall():
        landing = dict(zip(_KEYS, row[:13], strict=True))
        landing["paths"] = json.loads(landing["paths"])
        ttl_s = float(row[14])
        landing["expires_at"] = slots._end(row[13], ttl_s, row[15])
        landing["ttl_s"] = int(ttl_s) if ttl_s.is_integer() else ttl_s
        landing["live"] = landing["state"] in ("queued", "landing") and (
            landing["expires_at"] > now
        )
        out.append(landing)
    return out


def _open(conn: Db, now: str, project: str, onto: str) -> list[dict[str, Any]]:
    """The queue for `onto`: its live entries, in order."""
    found = _rows(
        conn, now, f"l.project = :project AND l.onto = :onto AND {OPEN}",
        {"project": project, "onto": onto},
    )  # fmt: skip
    return [_wire(x) for x in found if x["live"]]


def _wire(landing: dict[str, Any]) -> dict[str, Any]:
    landing.pop("live", None)
    return landing


def _mine(tx: Txn, project: str, agent: str, landing_id: int) -> dict[str, Any]:
    found = _rows(tx.conn, tx.now_text, "l.id = :id", {"id": landing_id})
    if not found or found[0]["project"] != project:
        raise NotFound(f"no landing with id {landing_id} in {project}", id=landing_id)
    landing = found[0]
    if landing["agent"] != agent:
        raise LeaseLost(
            f"landing #{landing_id} is {landing['agent']}'s, not yours ({agent})",
            landing=_wire(dict(landing)),
        )
    return landing


# --- join ---------------------------------------------------------------------


def enqueue(tx: Txn, p: S.LandEnqueueParams) -> dict[str, Any]:
    """Join the queue (or renew the caller's live entry for the branch) and say what is
    in the way: exclusive reservations of others on its paths, overlaps with entries ahead."""
    if p.task_id is not None:
        reservations.require_task_held(tx.conn, tx.now_text, p.task_id, p.agent)
    paths = sorted(dict.fromkeys(p.paths))
    queue = _open(tx.conn, tx.now_text, p.project, p.onto)
    mine = next((x for x in queue if x["agent"] == p.agent and x["branch"] == p.branch), None)
    ttl = S.DEFAULT_SLOT_TTL_S if p.ttl_s is None else p.ttl_s
    values = (json.dumps(paths), p.task_id, tx.now_text, tx.lease_until(ttl), ttl)
    if mine is not None:
        tx.conn.execute(
            "UPDATE landings SET paths = ?, task_id = ?, updated_at = ?, expires_at = ?,"
            " ttl_s = ? WHERE id = ?",
            (*values, mine["id"]),
        )
        landing_id = mine["id"]
    else:
        (landing_id,) = tx.conn.execute(
            "INSERT INTO landings (project, onto, branch, agent, paths, task_id, updated_at,"
            " expires_at, ttl_s, created_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " 'queued') RETURNING id",
            (p.project, p.onto, p.branch, p.agent, *values, tx.now_text),
        ).fetchall()[0]
    tx.touch_agent(p.agent, force=True)
    landing = _wire(_rows(tx.conn, tx.now_text, "l.id = :id", {"id": landing_id})[0])
    ahead = [x for x in queue if x["id"] < landing_id]
    mine_paths = set(paths)
    overlaps = [
        {"landing": x["id"], "branch": x["branch"], "agent": x["agent"],
         "paths": sorted(mine_paths.intersection(x["paths"]))}
        for x in ahead
        if mine_paths.intersection(x["paths"])
    ]  # fmt: skip
    reserved = _reserved(tx.conn, tx.now_text, p.project, p.agent, paths)
    if mine is None:
        slots.emit(tx, "land.queued", p.project, p.agent, landing=landing,
                   ahead=[x["id"] for x in ahead])  # fmt: skip
    if reserved or overlaps:
        slots.emit(tx, "land.blocked", p.project, p.agent, landing=landing, reserved=reserved,
                   overlaps=overlaps)  # fmt: skip
    return {"landing": landing, "ahead": ahead, "reserved": reserved, "overlaps": overlaps}


def _reserved(conn: Db, now: str, project: str, agent: str, paths: list[str]) -> list[Any]:
    """`[{"path", "reservation"}]`: live exclusive reservations of others covering a path."""
    found: list[Any] = []
    for chunk in path_chunks(paths):  # each a check's worth (1.2 section 10a)
        p = P.CheckParams(project=project, paths=chunk, agent=agent)
        found += [
            c for c in reservations.check(conn, now, p)["conflicts"]
            if c["reservation"]["exclusive"]
        ]  # fmt: skip
    return found


# --- start, finish ------------------------------------------------------------


def start(tx: Txn, p: S.LandStartParams) -> dict[str, Any]:
    """The head of its queue takes the landing slot; anyone else is refused, naming who
    is ahead (`data.retry_at`: when the first of them lapses unless renewed)."""
    landing = _mine(tx, p.project, p.agent, p.id)
    if not landing.pop("live"):
        raise LeaseLost(
            f"landing #{p.id} is {landing['state']}"
            + (" (its time ran out)" if landing["state"] in ("queued", "landing") else "")
            + ": join the queue again",
            landing=landing,
        )
    queue = _rows(
        tx.conn, tx.now_text, f"l.project = :project AND l.onto = :onto AND {OPEN}",
        {"project": p.project, "onto": landing["onto"]},
    )  # fmt: skip
    for dead in queue:
        if not dead["live"]:
            _lapse(tx, dead)  # its land.failed precedes this start in the log
    ahead = [_wire(x) for x in queue if x["live"] and x["id"] < p.id]
    if ahead:
        first = ahead[0]
        raise Conflict(
            f"landing #{p.id} is queued behind #{first['id']} ({first['branch']} of"
            f" {first['agent']}) and {len(ahead) - 1} more; wait for your turn (`wait_s`)",
            landing=landing,
            ahead=ahead,
            retry_at=min(x["expires_at"] for x in ahead),
        )
    granted = slots.acquire(
        tx,
        S.SlotAcquireParams(
            agent=p.agent, project=p.project, name=S.LANDING_SLOT_PREFIX + landing["onto"],
            capacity=1, ttl_s=landing["ttl_s"],
        ),
    )  # fmt: skip
    lease = granted["lease"]
    if landing["state"] == "landing" and lease["id"] != landing["lease_id"]:
        # Its slot lease ended (released by hand, or by a session's end) and this call
        # would take a new one: the fence the lander holds is no longer current, and a
        # lander asking again before it moves the target must hear so. (The new grant
        # rolls back with this error.)
        raise LeaseLost(
            f"landing #{p.id} no longer holds its landing slot (fence {landing['lease_id']}"
            " ended): it is fenced out, and must not move the target",
            landing=landing,
        )
    if landing["state"] == "queued":
        tx.conn.execute(
            "UPDATE landings SET state = 'landing', lease_id = ?, updated_at = ? WHERE id = ?",
            (lease["id"], tx.now_text, p.id),
        )
        landing.update(state="landing", lease_id=lease["id"], updated_at=tx.now_text)
        slots.emit(tx, "land.started", p.project, p.agent, landing=landing)
    return {"landing": landing, "lease": lease}


def finish(tx: Txn, p: S.LandFinishParams) -> dict[str, Any]:
    """Record the outcome, give the landing slot back, and let the next one go."""
    landing = _mine(tx, p.project, p.agent, p.id)
    live = landing.pop("live")
    if landing["state"] == p.outcome:
        return {"landing": landing}  # a retry of a finish that took effect
    if not live:
        raise LeaseLost(
            f"landing #{p.id} is {landing['state']}: it cannot be marked {p.outcome}",
            landing=landing,
        )
    if p.outcome == "landed" and landing["state"] != "landing":
        raise Conflict(f"landing #{p.id} is queued, not landing: start it first", landing=landing)
    tx.conn.execute(
        "UPDATE landings SET state = ?, reason = ?, landed_commit = ?, updated_at = ? WHERE id = ?",
        (p.outcome, p.reason, p.commit, tx.now_text, p.id),
    )
    held = landing["state"] == "landing"
    landing.update(state=p.outcome, reason=p.reason, commit=p.commit, updated_at=tx.now_text)
    if held:  # a queued entry holds no slot: the agent's lease may be another landing's
        slots.release_landing_slot(tx, p.project, p.agent, S.LANDING_SLOT_PREFIX + landing["onto"])
    slots.emit(tx, f"land.{p.outcome}", p.project, p.agent, landing=landing)
    tx.freed_projects.add(p.project)
    return {"landing": landing}


def reap(tx: Txn) -> int:
    """Housekeeping: an open entry whose time ran out fails (`land.failed`, "lapsed");
    a renewed one's `expires_at` moves up to its agent's last call + ttl."""
    lapsed = 0
    for landing in _rows(tx.conn, tx.now_text, f"{OPEN} AND l.expires_at <= :now",
                         {"now": tx.now_text}):  # fmt: skip
        if landing.pop("live"):
            tx.conn.execute(
                "UPDATE landings SET expires_at = ? WHERE id = ?",
                (landing["expires_at"], landing["id"]),
            )
            continue
        _lapse(tx, landing)
        lapsed += 1
    return lapsed


def _lapse(tx: Txn, landing: dict[str, Any]) -> None:
    """An open entry whose time ran out fails, with a `land.failed` that says so."""
    landing = _wire(dict(landing))
    reason = "lapsed: its lander stopped calling (killed, or lost) before it finished"
    tx.conn.execute(
        "UPDATE landings SET state = 'failed', reason = ?, updated_at = ? WHERE id = ?",
        (reason, tx.now_text, landing["id"]),
    )
    landing.update(state="failed", reason=reason, updated_at=tx.now_text)
    slots.emit(tx, "land.failed", landing["project"], landing["agent"], landing=landing)
    tx.freed_projects.add(landing["project"])


def list_open(conn: Db, now: str, p: S.LandListParams) -> dict[str, Any]:
    where = [OPEN]
    args: dict[str, Any] = {}
    if p.project is not None:
        where.append("l.project = :project")
        args["project"] = p.project
    if p.onto is not None:
        where.append("l.onto = :onto")
        args["onto"] = p.onto
    found = _rows(conn, now, " AND ".join(where), args)
    return {"landings": [_wire(x) for x in found if x["live"]]}


def reap_all(tx: Txn) -> int:
    """The reaper's one call for this feature: slot leases, then landings."""
    return slots.reap(tx) + reap(tx)
