"""The tools' input and output shapes, as pydantic models the SDK turns into JSON Schema.

Outputs mirror PROTOCOL.md's result objects and allow extra fields, so a
newer daemon's additions pass through and still validate. Inputs forbid
unknown fields, as the protocol does: a typo is an error naming it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

State = Literal["pending", "claimed", "done", "failed", "cancelled"]
TaskId = Annotated[int, Field(ge=1, description="the task's id")]
Fence = Annotated[int, Field(ge=0, description="the fence your claim returned")]
LeaseSeconds = Annotated[float, Field(ge=1, le=86400, description="seconds (default 600)")]
Kind = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
Agent = Annotated[str, Field(min_length=1, max_length=128)]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(max_length=16)]


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Task(Out):
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
    assignee: str | None = None
    depends_on: list[int] = []
    blocked_by: list[int] = []


class TaskResult(Out):
    task: Task


class MaybeTaskResult(Out):
    task: Task | None


class ClaimResult(Out):
    won: bool
    task: Task


class PostResult(Out):
    task: Task
    created: bool


class CompleteResult(Out):
    task: Task
    posted: Task | None


class ListResult(Out):
    tasks: list[Task]
    next_after_id: int | None


class WaitResult(Out):
    task: Task | None
    seq: int


class HeartbeatResult(Out):
    renewed: int
    reservations_renewed: int = 0


class WhoamiResult(Out):
    agent: str
    agent_source: str
    project: str
    project_source: str
    socket: str


class Reservation(Out):
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


class ReservationsResult(Out):
    reservations: list[Reservation]


class ReleasedResult(Out):
    released: int


class PathConflict(Out):
    path: str
    reservation: Reservation


class CheckResult(Out):
    conflicts: list[PathConflict]


class BoardTask(Out):
    """A task in a few fields: the board must fit a context window."""

    id: int
    kind: str
    title: str
    priority: int
    state: State
    fence: int | None = None
    lease_expires_at: str | None = None
    blocked_by: list[int] = []


class BoardAgent(Out):
    agent: str
    last_seen: str
    holding: list[int]


class BoardResult(Out):
    agent: str
    project: str
    my_claims: list[BoardTask]
    assigned_to_me: list[BoardTask]
    ready: list[BoardTask]
    ready_total: int
    counts: dict[str, int]
    other_agents: list[BoardAgent]
    hint: str


class FollowUp(BaseModel):
    """`then_post`: a task posted in the same transaction as the completion (an ack)."""

    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(min_length=1, max_length=300)]
    body: Annotated[str, Field(max_length=65536)] | None = None
    kind: Kind | None = None
    priority: Annotated[int, Field(ge=-1000, le=1000)] | None = None
    tags: Tags | None = None
    state: Literal["pending", "done"] | None = None
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    depends_on: Annotated[list[TaskId], Field(max_length=32)] | None = None
    assignee: Agent | None = None

    def params(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)
