"""Parameter Structs, one per method, with the value ranges of PROTOCOL.md section 4
(declared once, in `coordd_wire.bounds`).

Every Struct forbids unknown fields (a typo must not pass silently) and
gives optional fields a default of None, so an explicit `null` equals an
omitted field.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from msgspec import Meta

from coordd_wire import bounds
from coordd_wire.bounds import Bound
from coordd_wire.patterns import BadPattern, check_bounds
from coordd_wire.patterns import parse as parse_pattern
from coordd_wire.wire import EventType, ListOrder, PostState, State


def meta(bound: Bound) -> Meta:
    """`bound` as msgspec checks it: the numbers of `coordd_wire.bounds`,
    never typed here again."""
    if bound.numeric:
        return Meta(ge=bound.ge, le=bound.le)
    return Meta(
        min_length=bound.min_length,
        max_length=bound.max_length,
        pattern=bound.python_pattern(),
    )


TaskId = Annotated[int, meta(bounds.TASK_ID)]
Fence = Annotated[int, meta(bounds.FENCE)]
Seq = Annotated[int, meta(bounds.SEQ)]
# Printable: the pattern is the cheap first cut; `Params.__post_init__` then refuses
# what `str.isprintable` refuses (format characters such as U+200B and U+202E, line
# and paragraph separators, other spaces), which no `re` character class can name.
Agent = Annotated[str, meta(bounds.AGENT)]
Project = Annotated[str, meta(bounds.PROJECT)]
Kind = Annotated[str, meta(bounds.KIND)]
Title = Annotated[str, meta(bounds.TITLE)]
Text = Annotated[str, meta(bounds.TEXT)]
Priority = Annotated[int, meta(bounds.PRIORITY)]
Tag = Annotated[str, meta(bounds.TAG)]
Tags = Annotated[list[Tag], meta(bounds.TAGS)]
LeaseSeconds = Annotated[float, meta(bounds.LEASE_S)]
TimeoutSeconds = Annotated[float, meta(bounds.TIMEOUT_S)]
IdempotencyKey = Annotated[str, meta(bounds.IDEMPOTENCY_KEY)]
RequestKey = Annotated[str, meta(bounds.REQUEST_KEY)]
ListLimit = Annotated[int, meta(bounds.LIST_LIMIT)]
DependsOn = Annotated[list[TaskId], meta(bounds.DEPENDS_ON)]
PatternText = Annotated[str, meta(bounds.PATTERN)]
Patterns = Annotated[list[PatternText], meta(bounds.PATTERNS)]
CheckPaths = Annotated[list[Annotated[str, meta(bounds.CHECK_PATH)]], meta(bounds.CHECK_PATHS)]
TtlSeconds = Annotated[float, meta(bounds.TTL_S)]
WaitSeconds = Annotated[float, meta(bounds.WAIT_S)]
Reason = Annotated[str, meta(bounds.REASON)]
ReservationId = Annotated[int, meta(bounds.RESERVATION_ID)]
ReservationIds = Annotated[list[ReservationId], meta(bounds.RESERVATION_IDS)]
SubscriptionId = Annotated[int, meta(bounds.SUBSCRIPTION_ID)]
EventsLimit = Annotated[int, meta(bounds.EVENTS_LIMIT)]
EventTypes = Annotated[list[EventType], meta(bounds.EVENT_TYPE_LIST)]
StateFilter = State | Annotated[list[State], meta(bounds.STATE_LIST)]
#: docs/PROTOCOL-1.2.md section 15: a task's token budget.
Budget = Annotated[int, meta(bounds.BUDGET)]

DEFAULT_PROJECT = "default"
DEFAULT_KIND = "task"
DEFAULT_LEASE_S = 600.0
DEFAULT_LIST_LIMIT = 100
DEFAULT_EVENTS_LIMIT = 1000
DEFAULT_TTL_S = 3600.0


#: The fields that hold an agent name, in whichever Struct they appear.
AGENT_FIELDS = ("agent", "claimed_by", "assignee", "of", "to", "open_to")


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
        keyed = "request_key" in self.__struct_fields__  # a claim's; 5b's repeat has none
        if keyed and getattr(self, "repeat", None) and getattr(self, "request_key", None) is None:
            # 1.2 section 5a: a claim's repeat names the call it repeats.
            raise ValueError(
                "`repeat` needs the `request_key` of the call it repeats - at `$.repeat`"
            )
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
    #: docs/PROTOCOL-1.2.md section 15 (feature `token_budgets`): tokens the task may cost,
    #: and whether its holder's claim is released once they are spent.
    budget: Budget | None = None
    budget_release: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.budget_release and self.budget is None:
            raise ValueError("`budget_release` needs a `budget` - at `$.budget_release`")


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
    #: docs/PROTOCOL-1.2.md section 6c (feature `urgent_lists`): the order, its cursor's
    #: priority, the per-state totals, and "unassigned or assigned to this agent".
    order: ListOrder | None = None
    after_priority: Priority | None = None
    counts: bool | None = None
    open_to: Agent | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        urgent = self.order == "urgent"
        if self.after_priority is not None and not urgent:
            raise ValueError(
                '`after_priority` is the cursor of `order: "urgent"` - at `$.after_priority`'
            )
        if urgent and (self.after_id is None) != (self.after_priority is None):
            field = "after_priority" if self.after_priority is None else "after_id"
            raise ValueError(
                '`order: "urgent"` resumes after a task named by both `after_id` and'
                f" `after_priority` - at `$.{field}`"
            )


class ClaimParams(Params):
    id: TaskId
    agent: Agent
    lease_s: LeaseSeconds | None = None
    request_key: RequestKey | None = None
    repeat: bool | None = None


class ClaimNextParams(Params):
    agent: Agent
    project: Project | None = None
    kind: Kind | None = None
    tags: Tags | None = None
    lease_s: LeaseSeconds | None = None
    request_key: RequestKey | None = None
    repeat: bool | None = None


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
    #: 1.2 section 5b (feature `holder_repeat`): this call may repeat one that took effect.
    repeat: bool | None = None


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
    #: 1.2 section 5b (feature `holder_repeat`): with `retry`, as on `task.release`.
    repeat: bool | None = None


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


class EndAgentParams(Params):
    """1.2 `agent.end` (docs/PROTOCOL-1.2.md section 2a): `of` (default: the caller) has
    ended; its host process exited, as its session-end hook or a client that found its
    tab record dead says."""

    #: The caller: the ended agent itself, or whoever found it gone.
    agent: Agent
    #: The agent that ended; omitted, the caller.
    of: Agent | None = None


class EventsSinceParams(Params):
    after_seq: Seq | None = None
    limit: EventsLimit | None = None
    project: Project | None = None
    types: EventTypes | None = None
    task_id: TaskId | None = None


class SubscribeParams(Params):
    after_seq: Seq | None = None
    project: Project | None = None
    types: EventTypes | None = None


class UnsubscribeParams(Params):
    subscription: SubscriptionId


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
    ids: ReservationIds | None = None
    #: 1.2 (flag `release_reservations_of`): whose reservations end (omitted: the caller's);
    #: a person frees an ended tab's, as `agent.release` frees all it holds.
    of: Agent | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.patterns is not None and self.ids is not None:
            raise ValueError("give `patterns` or `ids`, not both - at `$.ids`")


def check_path_segments(paths: list[str]) -> None:
    """Refuse a request whose paths hold more than `MAX_PATH_SEGMENTS` segments in all
    (docs/PROTOCOL-1.2.md section 10a): the bound on what one request's paths cost."""
    total = sum(map(bounds.path_segments, paths))
    if total > bounds.MAX_PATH_SEGMENTS:
        raise ValueError(
            f"the paths hold {total} segments in all: a request may hold at most"
            f" {bounds.MAX_PATH_SEGMENTS} (MAX_PATH_SEGMENTS; each path counts one plus its"
            " `/`s): ask in smaller requests - at `$.paths`"
        )


class CheckParams(Params):
    project: Project
    paths: CheckPaths
    agent: Agent | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_path_segments(self.paths)


class ListReservationsParams(Params):
    project: Project | None = None
    agent: Agent | None = None
