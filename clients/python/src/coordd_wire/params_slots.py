"""Parameter Structs of docs/PROTOCOL-1.2.md sections 13 (slots, ports) and 14 (landing).

Apart from `params.py` so the four features of milestone 3 each add a module,
not lines to one file; the bounds still come from `coordd_wire.bounds`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from coordd_wire import bounds
from coordd_wire.params import (
    Agent,
    Params,
    Project,
    TaskId,
    TtlSeconds,
    WaitSeconds,
    meta,
)

SlotName = Annotated[str, meta(bounds.SLOT_NAME)]
SlotNames = Annotated[list[SlotName], meta(bounds.SLOT_NAMES)]
Capacity = Annotated[int, meta(bounds.SLOT_CAPACITY)]
LeaseId = Annotated[int, meta(bounds.SLOT_LEASE_ID)]
LeaseIds = Annotated[list[LeaseId], meta(bounds.SLOT_LEASE_IDS)]
Port = Annotated[int, meta(bounds.PORT)]
Branch = Annotated[str, meta(bounds.BRANCH)]
LandingPaths = Annotated[list[Annotated[str, meta(bounds.CHECK_PATH)]], meta(bounds.LANDING_PATHS)]
LandingId = Annotated[int, meta(bounds.LANDING_ID)]
LandingReason = Annotated[str, meta(bounds.LANDING_REASON)]
Commit = Annotated[str, meta(bounds.COMMIT)]

#: A slot lease lasts this long without a call from its agent (section 13).
DEFAULT_SLOT_TTL_S = 600.0
#: The range a port lease picks from when the call names none.
DEFAULT_PORT_LOW = 20000
DEFAULT_PORT_HIGH = 29999
DEFAULT_PORT_NAME = "port"
#: The slot the head of a landing queue holds: one per target branch.
LANDING_SLOT_PREFIX = "land:"


class SlotAcquireParams(Params):
    agent: Agent
    project: Project
    name: SlotName
    capacity: Capacity | None = None
    ttl_s: TtlSeconds | None = None
    task_id: TaskId | None = None
    wait_s: WaitSeconds | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.name.startswith(LANDING_SLOT_PREFIX) and (self.capacity or 1) != 1:
            raise ValueError("a landing slot (`land:...`) has capacity 1 - at `$.capacity`")


class SlotReleaseParams(Params):
    agent: Agent
    project: Project
    names: SlotNames | None = None
    ids: LeaseIds | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.names is not None and self.ids is not None:
            raise ValueError("give `names` or `ids`, not both - at `$.ids`")


class SlotListParams(Params):
    project: Project | None = None
    agent: Agent | None = None
    name: SlotName | None = None


class PortLeaseParams(Params):
    agent: Agent
    project: Project
    name: SlotName | None = None
    low: Port | None = None
    high: Port | None = None
    ttl_s: TtlSeconds | None = None
    task_id: TaskId | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        low = DEFAULT_PORT_LOW if self.low is None else self.low
        high = DEFAULT_PORT_HIGH if self.high is None else self.high
        if low > high:
            raise ValueError(f"`low` ({low}) is above `high` ({high}) - at `$.low`")
        if (self.name or "").startswith(LANDING_SLOT_PREFIX):
            raise ValueError("`land:` names are the landing queue's slots - at `$.name`")


class LandEnqueueParams(Params):
    agent: Agent
    project: Project
    branch: Branch
    onto: Branch
    paths: LandingPaths
    task_id: TaskId | None = None
    ttl_s: TtlSeconds | None = None


class LandStartParams(Params):
    agent: Agent
    project: Project
    id: LandingId
    wait_s: WaitSeconds | None = None


class LandFinishParams(Params):
    agent: Agent
    project: Project
    id: LandingId
    outcome: Literal["landed", "failed"]
    reason: LandingReason | None = None
    commit: Commit | None = None


class LandListParams(Params):
    project: Project | None = None
    onto: Branch | None = None


__all__ = [
    "LandEnqueueParams",
    "LandFinishParams",
    "LandListParams",
    "LandStartParams",
    "PortLeaseParams",
    "SlotAcquireParams",
    "SlotListParams",
    "SlotReleaseParams",
]
