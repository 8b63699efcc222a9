"""Parameter Structs, one per method, with the value ranges of PROTOCOL.md section 4.

Every Struct forbids unknown fields (a typo must not pass silently) and
gives optional fields a default of None, so an explicit `null` equals an
omitted field.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

from coordd.patterns import BadPattern, check_bounds
from coordd.patterns import parse as parse_pattern
from coordd_client.protocol.wire import MAX_CHECK_PATHS, EventType, State

MAX_SQLITE_INT = 2**63 - 1

TaskId = Annotated[int, Meta(ge=1, le=MAX_SQLITE_INT)]
Fence = Annotated[int, Meta(ge=0, le=MAX_SQLITE_INT)]
Seq = Annotated[int, Meta(ge=0, le=MAX_SQLITE_INT)]
# Printable: no control characters; no leading or trailing white space. The
# pattern is the cheap first cut (and `\Z`, unlike `$`, does not match before a
# trailing newline); `Params.__post_init__` then refuses what `str.isprintable`
# refuses (format characters such as U+200B and U+202E, line and paragraph
# separators, other spaces), which no `re` character class can name.
Agent = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=128,
        pattern=r"\A[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?\Z",
    ),
]
Project = Annotated[str, Meta(min_length=1, max_length=256)]
Kind = Annotated[str, Meta(pattern=r"\A[a-z][a-z0-9_-]{0,31}\Z")]
Title = Annotated[str, Meta(min_length=1, max_length=300)]
Text = Annotated[str, Meta(max_length=65536)]
Priority = Annotated[int, Meta(ge=-1000, le=1000)]
Tag = Annotated[str, Meta(min_length=1, max_length=64)]
Tags = Annotated[list[Tag], Meta(max_length=16)]
LeaseSeconds = Annotated[float, Meta(ge=1, le=86400)]
TimeoutSeconds = Annotated[float, Meta(ge=0, le=3600)]
IdempotencyKey = Annotated[str, Meta(min_length=1, max_length=128)]
ListLimit = Annotated[int, Meta(ge=1, le=1000)]
#: PROTOCOL.md section 9: at most 32 dependencies per task.
DependsOn = Annotated[list[TaskId], Meta(max_length=32)]
#: PROTOCOL.md section 10.
PatternText = Annotated[str, Meta(min_length=1, max_length=1024)]
Patterns = Annotated[list[PatternText], Meta(min_length=1, max_length=64)]
CheckPaths = Annotated[
    list[Annotated[str, Meta(min_length=1, max_length=4096)]],
    Meta(min_length=1, max_length=MAX_CHECK_PATHS),
]
TtlSeconds = Annotated[float, Meta(ge=1, le=86400)]
WaitSeconds = Annotated[float, Meta(ge=0, le=600)]
Reason = Annotated[str, Meta(max_length=1024)]
ReservationId = Annotated[int, Meta(ge=1, le=MAX_SQLITE_INT)]
EventsLimit = Annotated[int, Meta(ge=1, le=10000)]
StateFilter = State | Annotated[list[State], Meta(min_length=1, max_length=5)]
PostState = Literal["pending", "done"]

DEFAULT_PROJECT = "default"
DEFAULT_KIND = "task"
DEFAULT_LEASE_S = 600.0
DEFAULT_LIST_LIMIT = 100
DEFAULT_EVENTS_LIMIT = 1000
DEFAULT_TTL_S = 3600.0


#: The fields that hold an agent name, in whichever Struct they appear.
AGENT_FIELDS = ("agent", "claimed_by", "assignee", "of")


class Params(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base: by-name, strict. (Not frozen: mypy's dataclass_transform would then
    demand `frozen=True` repeated on every subclass; nothing mutates params.)"""

    #: Whether `patterns` are new ones, held to the bounds on what a pattern may
    #: contain (patterns.check_bounds). Releasing names stored ones, which may predate
    #: the bounds: they must stay releasable by name.
    NEW_PATTERNS: ClassVar[bool] = False

    def __post_init__(self) -> None:
        # msgspec turns a ValueError here into a ValidationError (-32602).
        for name in AGENT_FIELDS:
            value = getattr(self, name, None)
            if value is not None and not value.isprintable():
                bad = next(c for c in value if not c.isprintable())
                raise ValueError(
                    f"`{name}` must be printable: U+{ord(bad):04X} is not - at `$.{name}`"
                )
        patterns = getattr(self, "patterns", None)
        for index, text in enumerate(patterns or ()):
            try:
                pattern = parse_pattern(text)
                if self.NEW_PATTERNS:
                    check_bounds(pattern)
            except BadPattern as exc:
                raise ValueError(f"{exc} - at `$.patterns[{index}]`") from None
        ready = getattr(self, "ready", None)
        state = getattr(self, "state", None)
        if ready is not None and state is not None:
            states = [state] if isinstance(state, str) else state
            if "pending" not in states:
                # PROTOCOL.md section 9: `ready` implies state pending.
                raise ValueError("`ready` matches pending tasks only - at `$.ready`")


class NoParams(Params):
    pass


class PostParams(Params):
    title: Title
    body: Text | None = None
    kind: Kind | None = None
    project: Project | None = None
    priority: Priority | None = None
    tags: Tags | None = None
    agent: Agent | None = None
    state: PostState | None = None
    idempotency_key: IdempotencyKey | None = None
    depends_on: DependsOn | None = None
    assignee: Agent | None = None


class GetParams(Params):
    id: TaskId


class ListParams(Params):
    project: Project | None = None
    state: StateFilter | None = None
    kind: Kind | None = None
    tag: Tag | None = None
    claimed_by: Agent | None = None
    after_id: Seq | None = None
    limit: ListLimit | None = None
    assignee: Agent | None = None
    ready: bool | None = None


class ClaimParams(Params):
    id: TaskId
    agent: Agent
    lease_s: LeaseSeconds | None = None


class ClaimNextParams(Params):
    agent: Agent
    project: Project | None = None
    kind: Kind | None = None
    tags: Tags | None = None
    lease_s: LeaseSeconds | None = None


class RenewParams(Params):
    id: TaskId
    agent: Agent
    fence: Fence | None = None
    lease_s: LeaseSeconds | None = None


class ReleaseParams(Params):
    id: TaskId
    agent: Agent
    fence: Fence | None = None
    #: 1.1: hand the task to this agent in the same step.
    assignee: Agent | None = None


class AssignParams(Params):
    id: TaskId
    #: Required, and null clears it: here null is not the same as omitting.
    assignee: Agent | None
    agent: Agent | None = None


class CompleteParams(Params):
    id: TaskId
    agent: Agent
    fence: Fence | None = None
    result: Text | None = None
    then_post: PostParams | None = None


class FailParams(Params):
    id: TaskId
    agent: Agent
    fence: Fence | None = None
    reason: Text | None = None
    retry: bool | None = None


class CancelParams(Params):
    id: TaskId
    agent: Agent | None = None
    reason: Text | None = None


class ReopenParams(Params):
    id: TaskId
    agent: Agent | None = None


class WaitParams(Params):
    timeout_s: TimeoutSeconds
    project: Project | None = None
    kind: Kind | None = None
    state: StateFilter | None = None
    tag: Tag | None = None
    title_contains: Title | None = None
    after_seq: Seq | None = None
    assignee: Agent | None = None
    ready: bool | None = None


class HeartbeatParams(Params):
    agent: Agent
    lease_s: LeaseSeconds | None = None


class ReleaseAgentParams(Params):
    """1.2 `agent.release` (docs/PROTOCOL-1.2.md section 2): `agent` lets go of what `of` holds."""

    #: The caller, named in the history (e.g. `human-alice`); may equal `of`.
    agent: Agent
    #: The agent whose claims, reservations and assignments end.
    of: Agent
    #: A filter: omitted, every project.
    project: Project | None = None
    reason: Reason | None = None


class EventsSinceParams(Params):
    after_seq: Seq | None = None
    limit: EventsLimit | None = None
    project: Project | None = None
    types: Annotated[list[EventType], Meta(max_length=8)] | None = None
    task_id: TaskId | None = None


class SubscribeParams(Params):
    after_seq: Seq | None = None
    project: Project | None = None
    types: Annotated[list[EventType], Meta(max_length=8)] | None = None


class UnsubscribeParams(Params):
    subscription: Annotated[int, Meta(ge=1, le=MAX_SQLITE_INT)]


class AcquireParams(Params):
    NEW_PATTERNS: ClassVar[bool] = True

    agent: Agent
    project: Project
    patterns: Patterns
    exclusive: bool | None = None
    ttl_s: TtlSeconds | None = None
    reason: Reason | None = None
    task_id: TaskId | None = None
    wait_s: WaitSeconds | None = None


class ReleaseReservationsParams(Params):
    agent: Agent
    project: Project
    patterns: Patterns | None = None
    ids: Annotated[list[ReservationId], Meta(min_length=1, max_length=256)] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.patterns is not None and self.ids is not None:
            raise ValueError("give `patterns` or `ids`, not both - at `$.ids`")


class CheckParams(Params):
    project: Project
    paths: CheckPaths
    agent: Agent | None = None


class ListReservationsParams(Params):
    project: Project | None = None
    agent: Agent | None = None
