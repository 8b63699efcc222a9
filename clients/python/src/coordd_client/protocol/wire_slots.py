"""Wire types of docs/PROTOCOL-1.2.md sections 13 (slot and port leases) and 14 (landings).

Apart from `wire.py`, which imports them for the events that carry them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

LandingState = Literal["queued", "landing", "landed", "failed"]


class SlotLease(msgspec.Struct, frozen=True, kw_only=True):
    """One grant of a slot (`capacity` set) or of a port (`port` set)."""

    id: int
    project: str
    name: str
    agent: str
    capacity: int | None
    port: int | None
    task_id: int | None
    #: The grant's fence: larger for every later grant of the same name.
    fence: int
    created_at: str
    #: When it runs out unless its agent calls again (a heartbeat renews it).
    expires_at: str
    ttl_s: float


class SlotResult(msgspec.Struct, frozen=True, kw_only=True):
    lease: SlotLease
    #: `slot.acquire`: how many hold the slot now, the caller included.
    holders: int | None = None


class SlotList(msgspec.Struct, frozen=True, kw_only=True):
    leases: list[SlotLease]


class Released(msgspec.Struct, frozen=True, kw_only=True):
    released: int


class Landing(msgspec.Struct, frozen=True, kw_only=True):
    """One branch in a target's landing queue."""

    id: int
    project: str
    onto: str
    branch: str
    agent: str
    task_id: int | None
    state: LandingState
    paths: list[str]
    created_at: str
    updated_at: str
    #: The landing slot's lease while it lands (its id is the fence).
    lease_id: int | None
    reason: str | None
    #: The commit the target was moved to, once landed.
    commit: str | None
    expires_at: str
    ttl_s: float


class PathHolder(msgspec.Struct, frozen=True, kw_only=True):
    """A path the branch changes that another agent holds exclusively."""

    path: str
    reservation: dict[str, object]


class Overlap(msgspec.Struct, frozen=True, kw_only=True):
    """Paths this branch and a branch queued ahead of it both change."""

    landing: int
    branch: str
    agent: str
    paths: list[str]


class Enqueued(msgspec.Struct, frozen=True, kw_only=True):
    landing: Landing
    ahead: list[Landing]
    reserved: list[PathHolder]
    overlaps: list[Overlap]


class Started(msgspec.Struct, frozen=True, kw_only=True):
    landing: Landing
    lease: SlotLease


class Finished(msgspec.Struct, frozen=True, kw_only=True):
    landing: Landing


class LandingList(msgspec.Struct, frozen=True, kw_only=True):
    landings: list[Landing]
