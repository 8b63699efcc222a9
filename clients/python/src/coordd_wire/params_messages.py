"""Params of 1.2 section 12 (docs/PROTOCOL-1.2.md): messages, questions and release
requests. Kept beside `params.py`, which they would push past its size, with the
same rules: strict, bounds from `coordd_wire.bounds`, null = omitted."""

from __future__ import annotations

from typing import Annotated, Literal

from coordd_wire import bounds
from coordd_wire.params import (
    Agent,
    IdempotencyKey,
    Params,
    Patterns,
    Project,
    Reason,
    TaskId,
    TimeoutSeconds,
    meta,
)

MessageId = Annotated[int, meta(bounds.MESSAGE_ID)]
MessageBody = Annotated[str, meta(bounds.MESSAGE_BODY)]
RequestTtl = Annotated[float, meta(bounds.REQUEST_TTL_S)]
MessageLimit = Annotated[int, meta(bounds.MESSAGE_LIMIT)]

#: What `message.send` may send; `request` and `answer` come from their own methods.
SendKind = Literal["message", "question"]
Decision = Literal["approve", "deny", "narrow"]

DEFAULT_REQUEST_TTL_S = 900.0
DEFAULT_MESSAGE_LIMIT = 100


class SendParams(Params):
    """`message.send`: to `to`; else on task `task_id`'s thread; else to the project."""

    agent: Agent
    project: Project
    body: MessageBody
    to: Agent | None = None
    task_id: TaskId | None = None
    reply_to: MessageId | None = None
    kind: SendKind | None = None
    idempotency_key: IdempotencyKey | None = None


class ReadParams(Params):
    """`message.read`: the agent's unread messages (after its cursor, or `after_id`)."""

    agent: Agent
    after_id: MessageId | None = None
    limit: MessageLimit | None = None


class AckParams(Params):
    """`message.ack`: every message of the agent's up to `up_to` is read."""

    agent: Agent
    up_to: MessageId


class MessageWaitParams(Params):
    """`message.wait`: block until the agent has an unread message, or `timeout_s`."""

    agent: Agent
    timeout_s: TimeoutSeconds
    after_id: MessageId | None = None


class MessageGetParams(Params):
    id: MessageId


class RequestReleaseParams(Params):
    """`request.release`: ask the holder of `patterns` (reservations) or `task_id` (a claim)."""

    agent: Agent
    project: Project
    patterns: Patterns | None = None
    task_id: TaskId | None = None
    to: Agent | None = None
    body: MessageBody | None = None
    ttl_s: RequestTtl | None = None
    idempotency_key: IdempotencyKey | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.patterns is None) == (self.task_id is None):
            raise ValueError("give `patterns` or `task_id`, exactly one - at `$.patterns`")


class AnswerParams(Params):
    """`request.answer`: the holder approves, denies or narrows request `id`."""

    agent: Agent
    id: MessageId
    decision: Decision
    patterns: Patterns | None = None
    reason: Reason | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.decision == "narrow") != (self.patterns is not None):
            raise ValueError("`patterns` goes with `narrow`, and only with it - at `$.patterns`")
