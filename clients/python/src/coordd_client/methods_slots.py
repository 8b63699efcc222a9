"""The builders of docs/PROTOCOL-1.2.md sections 13 (slots, ports) and 14 (landing queue).

Written like `methods.py`'s and re-exported by it, so both clients wrap them
the same way; apart only to keep each module small (issue 35).
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_wire import wire_slots as W
from coordd_wire.method_table import Call, call


def acquire_slot(
    name: str,
    *,
    agent: str | None = None,
    project: str | None = None,
    capacity: int | None = None,
    ttl_s: float | None = None,
    task_id: int | None = None,
    wait_s: float | None = None,
) -> Call[W.SlotResult]:
    """A unit of the slot (capacity 1: a lock), or `Conflict` naming its holders; `wait_s`
    waits that long, first come first served. Feature `slots`."""
    params = {
        "name": name,
        "agent": agent,
        "project": project,
        "capacity": capacity,
        "ttl_s": ttl_s,
        "task_id": task_id,
        "wait_s": wait_s,
    }
    return call("slot.acquire", params, waits_s=wait_s or 0.0)


def release_slots(
    names: Sequence[str] | None = None,
    *,
    ids: Sequence[int] | None = None,
    agent: str | None = None,
    project: str | None = None,
) -> Call[W.Released]:
    """End my leases in the project (slots and ports): these names, these ids, or all."""
    params = {
        "names": list(names) if names else None,
        "ids": list(ids) if ids else None,
        "agent": agent,
        "project": project,
    }
    return call("slot.release", params)


def slots(
    *, project: str | None = None, agent: str | None = None, name: str | None = None
) -> Call[W.SlotList]:
    """Live slot and port leases; `agent` is a filter here."""
    params = {"project": project, "agent": agent, "name": name}
    return call("slot.list", {k: v for k, v in params.items() if v is not None})


def lease_port(
    name: str | None = None,
    *,
    agent: str | None = None,
    project: str | None = None,
    low: int | None = None,
    high: int | None = None,
    ttl_s: float | None = None,
    task_id: int | None = None,
) -> Call[W.SlotResult]:
    """A port in `low..high` that no other live lease holds (the same one again for the
    same name and agent)."""
    params = {
        "name": name,
        "agent": agent,
        "project": project,
        "low": low,
        "high": high,
        "ttl_s": ttl_s,
        "task_id": task_id,
    }
    return call("port.lease", params)


def enqueue_landing(
    branch: str,
    onto: str,
    paths: Sequence[str],
    *,
    agent: str | None = None,
    project: str | None = None,
    task_id: int | None = None,
    ttl_s: float | None = None,
) -> Call[W.Enqueued]:
    """Join `onto`'s landing queue; the answer says who is ahead and what is in the way.
    Feature `landing_queue`."""
    params = {
        "branch": branch,
        "onto": onto,
        "paths": list(paths),
        "agent": agent,
        "project": project,
        "task_id": task_id,
        "ttl_s": ttl_s,
    }
    return call("land.enqueue", params)


def start_landing(
    landing_id: int,
    *,
    agent: str | None = None,
    project: str | None = None,
    wait_s: float | None = None,
) -> Call[W.Started]:
    """Take the landing slot once this landing heads its queue (`wait_s`: wait for that)."""
    params = {"id": landing_id, "agent": agent, "project": project, "wait_s": wait_s}
    return call("land.start", params, waits_s=wait_s or 0.0)


def finish_landing(
    landing_id: int,
    outcome: str,
    *,
    agent: str | None = None,
    project: str | None = None,
    reason: str | None = None,
    commit: str | None = None,
) -> Call[W.Finished]:
    """`landed` (with the target's new `commit`) or `failed` (with why); frees the slot."""
    params = {
        "id": landing_id,
        "outcome": outcome,
        "agent": agent,
        "project": project,
        "reason": reason,
        "commit": commit,
    }
    return call("land.finish", params)


def landings(*, project: str | None = None, onto: str | None = None) -> Call[W.LandingList]:
    """The live landing queues (queued and landing), in order."""
    params = {"project": project, "onto": onto}
    return call("land.list", {k: v for k, v in params.items() if v is not None})
