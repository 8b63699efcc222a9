"""Wire types of PROTOCOL.md sections 4 and 7, shared by the daemon and clients.

Frozen, keyword-only msgspec Structs; the clients decode results into them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import ClassVar, Literal, get_args

import msgspec

State = Literal["pending", "claimed", "done", "failed", "cancelled"]
STATES: tuple[State, ...] = get_args(State)

#: An agent seen within this long counts as at work, on every surface and in the
#: daemon's answers that name "live" agents. A tab heartbeats its claims and calls
#: in at each turn; a quarter of an hour with neither is a tab that is idle or gone.
LIVE_HORIZON = timedelta(minutes=15)

EventType = Literal[
    "task.posted",
    "task.claimed",
    "task.released",
    "task.expired",
    "task.completed",
    "task.failed",
    "task.cancelled",
    "task.reopened",
    # 1.1 (PROTOCOL.md section 9)
    "task.assigned",
    "task.blocked",
    "task.unblocked",
    # 1.2 section 11 (issue 33): file edits; delivered only where `types` names it
    "file.edited",
    # 1.2 section 12 (issue 34): messages, questions, release requests and answers
    "message.sent",
    # 1.2 issue 35 (docs/PROTOCOL-1.2.md sections 13 and 14): not task events
    "slot.granted",
    "slot.released",
    "land.queued",
    "land.blocked",
    "land.started",
    "land.landed",
    "land.failed",
    # docs/PROTOCOL-1.2.md section 15 (issue 48): one per usage report that recorded anything
    "usage.reported",
    # section 15: a task's charged tokens crossed 80% or 100% of its budget
    "usage.budget",
]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)
#: The 1.2 event types a daemon appends only with a feature (`server.info.features`);
#: a daemon without it refuses the type in a `types` filter.
FEATURE_OF_EVENT: dict[str, str] = {
    "file.edited": "file_edits",
    "message.sent": "messages",
    **{t: "slots" for t in ("slot.granted", "slot.released")},
    **{t: "landing_queue" for t in EVENT_TYPES if t.startswith("land.")},
    # Appended by `usage.report`, so the ledger's feature: a daemon with `token_budgets`
    # serves both (a flag that brings no method names no event type).
    "usage.reported": "token_ledger",
    "usage.budget": "token_ledger",
}


def served_event_types(features: Sequence[str]) -> list[EventType]:
    """Every event type a daemon serving `features` appends: what a caller names in
    `types` to get them all, since with `types` omitted it gets task events only."""
    return [t for t in EVENT_TYPES if FEATURE_OF_EVENT.get(t, "") in ("", *features)]


#: What `task.post` may start a task as: pending, or done for an announcement (an ack).
PostState = Literal["pending", "done"]
#: `task.list`'s orders (docs/PROTOCOL-1.2.md section 6c): ascending id, as
#: `task.claim_next` picks (priority descending, then id), or descending id.
ListOrder = Literal["id", "urgent", "newest"]


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """A task on the board (PROTOCOL.md section 4)."""

    id: int
    project: str
    kind: str
    title: str
    body: str
    state: State
    priority: int
    tags: list[str]
    created_by: str | None
    created_at: str
    updated_at: str
    claimed_by: str | None
    claimed_at: str | None
    lease_expires_at: str | None
    fence: int
    attempts: int
    result: str | None
    #: 1.1's members (section 9): absent only from a 1.0 daemon, whose meaning the
    #: defaults are; the TS client, which needs 1.1, types them as always there.
    SINCE_1_1: ClassVar[frozenset[str]] = frozenset({"assignee", "depends_on", "blocked_by"})
    assignee: str | None = None
    depends_on: list[int] = msgspec.field(default_factory=list)
    blocked_by: list[int] = msgspec.field(default_factory=list)

    @property
    def ready(self) -> bool:
        """Pending with every dependency done: claimable (by its assignee, if it has one)."""
        return self.state == "pending" and not self.blocked_by


LandingState = Literal["queued", "landing", "landed", "failed"]


# 1.2, issue 35 (docs/PROTOCOL-1.2.md sections 13, 14); their results are in wire_slots.
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


class MessageRef(msgspec.Struct, frozen=True, kw_only=True):
    """What an event line shows of a `message.sent` event's message."""

    id: int
    sender: str
    kind: str
    to: str | None = None
    body: str


class UsageRef(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 `usage.reported` (section 15): what one report added to the ledger."""

    host: str
    session: str | None = None
    #: Entries new to the ledger (duplicates are not in the event).
    recorded: int
    #: Their tokens, all four kinds summed.
    tokens: int
    #: The tasks charged, ascending; None for tokens spent holding nothing.
    task_ids: list[int | None]


class BudgetCrossing(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 `usage.budget` (section 15): a task's charged tokens crossed a threshold."""

    task_id: int
    #: The task's budget, and the tokens charged to it so far (all kinds).
    tokens: int
    spent: int
    #: 80 or 100: the percentage crossed.
    threshold: int
    #: At 100%, the task asked for it (`budget_release`) and its holder's claim was
    #: released in the same transaction.
    released: bool = False


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """One committed state change (PROTOCOL.md section 7)."""

    seq: int
    at: str
    type: EventType
    #: None on 1.2's events with no task (edits, messages off a thread, slots,
    #: landings), which reach only a caller that names their types.
    task_id: int | None
    agent: str | None
    #: None (or absent) on those events.
    task: Task | None = None
    #: 1.2 `agent.release` (feature `agent_release`): `agent` let go of what this
    #: agent held, and why. None on every other event.
    of: str | None = None
    reason: str | None = None
    #: 1.2 slot and landing events (issue 35): their project, and what changed.
    project: str | None = None
    slot: SlotLease | None = None
    landing: Landing | None = None
    #: 1.2 `file.edited` (section 11): what was edited, where.
    paths: list[str] | None = None
    worktree: str | None = None
    #: 1.2 `message.sent` (section 12): the message, as far as one line shows it
    #: (`wire_messages.MessageEvent` has all of it).
    message: MessageRef | None = None
    #: 1.2 `usage.reported` (section 15): what the report recorded.
    usage: UsageRef | None = None
    #: 1.2 `usage.budget` (section 15): the budget crossed, and how far.
    budget: BudgetCrossing | None = None


class PostResult(msgspec.Struct, frozen=True, kw_only=True):
    task: Task
    created: bool


class ClaimResult(msgspec.Struct, frozen=True, kw_only=True):
    won: bool
    task: Task


class TaskResult(msgspec.Struct, frozen=True, kw_only=True):
    task: Task


class MaybeTaskResult(msgspec.Struct, frozen=True, kw_only=True):
    task: Task | None


class CompleteResult(msgspec.Struct, frozen=True, kw_only=True):
    task: Task
    posted: Task | None


class ListResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The 1.2 members are left out unless asked for (section 6a), so a 1.1 call's
    answer is what it always was."""

    tasks: list[Task]
    next_after_id: int | None
    #: With `order: "urgent"` and more rows: the priority half of the cursor.
    next_after_priority: int | None = None
    #: With `counts: true`: how many tasks match the filters, by state.
    counts: dict[State, int] | None = None


class WaitResult(msgspec.Struct, frozen=True, kw_only=True):
    task: Task | None
    seq: int


class EventsResult(msgspec.Struct, frozen=True, kw_only=True):
    events: list[Event]
    last_seq: int


class AgentInfo(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    last_seen: str
    holding: int
    #: 1.2 (flag `agent_ended`): when its end was reported (`agent.end`), if it has not
    #: been seen since; None for an agent that may still run (and from an older daemon).
    ended_at: str | None = None


class EndAgentResult(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 `agent.end`: whether the board knew the agent (an unknown name is not recorded)."""

    ended: bool


class AgentsResult(msgspec.Struct, frozen=True, kw_only=True):
    agents: list[AgentInfo]


class ReleaseAgentResult(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 `agent.release`: what ended of the agent's holdings."""

    claims: int
    reservations: int
    unassigned: int
    #: Its slot and port leases ended (docs/PROTOCOL-1.2.md section 13); 0 from a
    #: daemon older than issue 35's, which leaves them to their time.
    slots: int = 0


class HeartbeatResult(msgspec.Struct, frozen=True, kw_only=True):
    renewed: int
    #: 1.1: live reservations renewed too (0 from a 1.0 daemon).
    reservations_renewed: int = 0


class Reservation(msgspec.Struct, frozen=True, kw_only=True):
    """A reservation of paths in a project (PROTOCOL.md section 10)."""

    id: int
    project: str
    agent: str
    pattern: str
    exclusive: bool
    reason: str | None
    task_id: int | None
    created_at: str
    expires_at: str
    ttl_s: float


class ReservationsResult(msgspec.Struct, frozen=True, kw_only=True):
    reservations: list[Reservation]


class ReleasedResult(msgspec.Struct, frozen=True, kw_only=True):
    released: int


class PatternConflict(msgspec.Struct, frozen=True, kw_only=True):
    """One of my patterns and a live reservation in its way (a refused acquire)."""

    pattern: str
    reservation: Reservation


class PathConflict(msgspec.Struct, frozen=True, kw_only=True):
    """A checked path and a live reservation that covers it."""

    path: str
    reservation: Reservation


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    conflicts: list[PathConflict]


class PingResult(msgspec.Struct, frozen=True, kw_only=True):
    pong: bool


class SubscribeResult(msgspec.Struct, frozen=True, kw_only=True):
    subscription: int
    last_seq: int
