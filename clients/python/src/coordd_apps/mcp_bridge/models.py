"""The tools' input and output shapes, as pydantic models the SDK turns into JSON Schema.

Outputs are twins of the wire module's result Structs (`from_wire`), allowing
extra fields, so a newer daemon's additions pass through and still validate. Inputs forbid
unknown fields, as the protocol does: a typo is an error naming it.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any

import msgspec
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from coordd_wire import bounds, wire
from coordd_wire.bounds import Bound


def field(bound: Bound, description: str | None = None, *, le: float | None = None) -> Any:
    """`bound` as a pydantic `Field` (and so in the tool's JSON Schema): the numbers of
    `coordd_wire.bounds`, never typed here again. `le` narrows the upper
    limit for a tool that must answer sooner than the protocol allows (a host times a
    tool call out); it may only narrow it."""
    if le is not None and bound.le is not None and le > bound.le:
        raise ValueError(f"le={le} widens the protocol's limit of {bound.le}")
    info: FieldInfo = Field(
        ge=bound.ge,
        le=bound.le if le is None else le,
        min_length=bound.min_length,
        max_length=bound.max_length,
        pattern=bound.schema_pattern(),
        description=description,
    )
    return info


State = wire.State
TaskId = Annotated[int, field(bounds.TASK_ID, "the task's id")]
Fence = Annotated[int, field(bounds.FENCE, "the fence your claim returned")]
Seq = Annotated[int, field(bounds.SEQ)]
LeaseSeconds = Annotated[float, field(bounds.LEASE_S, "seconds (default 600)")]
Kind = Annotated[str, field(bounds.KIND)]
Agent = Annotated[str, field(bounds.AGENT)]
Tag = Annotated[str, field(bounds.TAG)]
Tags = Annotated[list[Tag], field(bounds.TAGS)]
States = State | Annotated[list[State], field(bounds.STATE_LIST)]
Title = Annotated[str, field(bounds.TITLE)]
Text = Annotated[str, field(bounds.TEXT)]
Priority = Annotated[int, field(bounds.PRIORITY)]
IdempotencyKey = Annotated[str, field(bounds.IDEMPOTENCY_KEY)]
RequestKey = Annotated[
    str,
    field(
        bounds.REQUEST_KEY,
        "only to learn what an earlier claim won when its answer was lost: the key its"
        " error named (each claim gets a fresh one otherwise)",
    ),
]
DependsOn = Annotated[list[TaskId], field(bounds.DEPENDS_ON)]
ListLimit = Annotated[int, field(bounds.LIST_LIMIT)]
Patterns = Annotated[
    list[Annotated[str, field(bounds.PATTERN)]],
    field(bounds.PATTERNS, "gitignore patterns from the repo root"),
]
CheckPaths = Annotated[list[Annotated[str, field(bounds.CHECK_PATH)]], field(bounds.CHECK_PATHS)]
ReservationIds = Annotated[
    list[Annotated[int, field(bounds.RESERVATION_ID)]], field(bounds.RESERVATION_IDS)
]
TtlSeconds = Annotated[float, field(bounds.TTL_S)]
Reason = Annotated[str, field(bounds.REASON)]


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


def from_wire(struct: type[msgspec.Struct]) -> type[BaseModel]:
    """The pydantic twin of a wire Struct (`coordd_wire.wire`): the same
    fields and defaults, nested Structs twinned too, extra fields allowed. The result
    shapes are declared once, in the wire module; the SDK needs pydantic to publish
    them as output schemas."""
    return _twins(struct)


@functools.cache
def _twins(struct: type[msgspec.Struct]) -> type[BaseModel]:
    hints = typing.get_type_hints(struct)
    fields: dict[str, Any] = {}
    for spec in msgspec.structs.fields(struct):
        annotation = _twin(hints[spec.name])
        if spec.required:
            fields[spec.name] = (annotation, ...)
        elif spec.default_factory is not msgspec.NODEFAULT:
            fields[spec.name] = (annotation, Field(default_factory=spec.default_factory))
        else:
            fields[spec.name] = (annotation, spec.default)
    model: type[BaseModel] = create_model(struct.__name__, __base__=Out, **fields)
    return model


def _twin(annotation: Any) -> Any:
    """`annotation` with every wire Struct in it replaced by its twin."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return _twins(annotation)
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is list:
        return list[_twin(args[0])]  # type: ignore[misc]
    if origin in (types.UnionType, typing.Union):
        return typing.Union[tuple(_twin(arg) for arg in args)]  # noqa: UP007
    return annotation  # plain types, Literal, dict[str, int]


TaskResult = from_wire(wire.TaskResult)
MaybeTaskResult = from_wire(wire.MaybeTaskResult)
ClaimResult = from_wire(wire.ClaimResult)
PostResult = from_wire(wire.PostResult)
CompleteResult = from_wire(wire.CompleteResult)
ListResult = from_wire(wire.ListResult)
WaitResult = from_wire(wire.WaitResult)
HeartbeatResult = from_wire(wire.HeartbeatResult)
ReservationsResult = from_wire(wire.ReservationsResult)
ReleasedResult = from_wire(wire.ReleasedResult)
CheckResult = from_wire(wire.CheckResult)


class WhoamiResult(Out):
    agent: str
    agent_source: str
    project: str
    project_source: str
    socket: str
    #: The board the daemon on `socket` serves (docs/PROTOCOL-1.2.md section 1b); None
    #: when no daemon was reached, or one from before board ids. Optional, so a client
    #: validating against an older schema, or an older server's answer, still passes.
    board_id: str | None = None
    #: Why no board was reached, as `kind: message` (daemon_unavailable, several_boards,
    #: wrong_board, ...); None when one was.
    board_unreached: str | None = None


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


class BoardReservation(Out):
    """One of the caller's own reservations, as the board shows it."""

    pattern: str
    exclusive: bool
    task_id: int | None = None
    expires_at: str


class BoardEdit(Out):
    """Another live agent's edit, in another worktree, of a file the caller edited too."""

    path: str
    agent: str
    worktree: str
    at: str


class BoardResult(Out):
    agent: str
    project: str
    my_claims: list[BoardTask]
    my_reservations: list[BoardReservation] = []
    edited_elsewhere: list[BoardEdit] = []
    assigned_to_me: list[BoardTask]
    ready: list[BoardTask]
    ready_total: int
    counts: dict[str, int]
    other_agents: list[BoardAgent]
    #: Issue 47: the person at this machine is no other agent; what they hold, when they
    #: hold anything (`The human (human-ada) holds 1 reservation`), as the session-start
    #: context says it.
    the_human: list[str] = []
    #: Issue 34: the first unread messages, one line each (read_messages reads them).
    unread_messages: list[str] = []
    hint: str


class FollowUp(BaseModel):
    """`then_post`: a task posted in the same transaction as the completion: the ack
    (`coordd_client.acks.follow_up`) unless `kind` names another."""

    model_config = ConfigDict(extra="forbid")

    title: Title
    body: Text | None = None
    kind: Annotated[
        Kind | None,
        Field(
            description="ack when left out: posted done and tagged re:<id>; another kind"
            " (task, bug...) posts follow-up work instead"
        ),
    ] = None
    priority: Priority | None = None
    tags: Tags | None = None
    state: wire.PostState | None = None
    idempotency_key: IdempotencyKey | None = None
    depends_on: DependsOn | None = None
    assignee: Agent | None = None
    #: Issue 48: tokens the follow-up may cost, as `post_task`'s `budget`.
    budget: Annotated[int, field(bounds.BUDGET)] | None = None
    budget_release: bool | None = None

    def params(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)
