"""Result types of docs/PROTOCOL-1.2.md sections 13 (slot and port leases) and 14 (landings).

The lease and the landing themselves are in `wire.py`, since events carry them;
these are only what the methods answer, loaded by the clients when first used.
"""

from __future__ import annotations

import msgspec

from coordd_wire.wire import Landing, SlotLease


class SlotResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    lease: SlotLease
    #: `slot.acquire`: how many hold the slot now, the caller included. `port.lease`
    #: answers without it (a port has one holder): absent, not null (1.2 section 13).
    holders: int | None = None


class SlotList(msgspec.Struct, frozen=True, kw_only=True):
    leases: list[SlotLease]


class Released(msgspec.Struct, frozen=True, kw_only=True):
    released: int


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
