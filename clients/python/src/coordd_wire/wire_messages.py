"""Wire types of 1.2 section 12 (docs/PROTOCOL-1.2.md): messages, questions, release
requests and their answers, shared by the daemon's tests and every client."""

from __future__ import annotations

from typing import Literal

import msgspec

from coordd_wire.wire import Reservation, Task

MessageKind = Literal["message", "question", "request", "answer"]
#: What `message.send` sends; requests and answers come from their own methods.
SendKind = Literal["message", "question"]
Audience = Literal["agent", "project", "task"]
RequestStatus = Literal["open", "approved", "denied", "narrowed", "expired"]
Decision = Literal["approve", "deny", "narrow"]


class RequestState(msgspec.Struct, frozen=True, kw_only=True):
    """What a release request asks for and where it stands."""

    holder: str
    #: The reservation patterns asked for (None: a claim is asked for).
    patterns: list[str] | None
    #: The claimed task asked for (None: patterns are asked for).
    task_id: int | None
    status: RequestStatus
    expires_at: str
    #: What an approve or narrow handed over (None until then, and for a claim).
    granted: list[str] | None = None
    reason: str | None = None


class Message(msgspec.Struct, frozen=True, kw_only=True):
    """One message (section 12): to an agent, a project or a task's thread."""

    id: int
    project: str
    sender: str
    kind: MessageKind
    audience: Audience
    to: str | None
    task_id: int | None
    reply_to: int | None
    body: str
    created_at: str
    #: Its `message.sent` event.
    seq: int
    answer_id: int | None = None
    #: A question or request nobody has answered yet (and not expired).
    open: bool = False
    request: RequestState | None = None


class MessageEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A `message.sent` event (only to a subscription or `events.since` naming the type)."""

    seq: int
    at: str
    type: Literal["message.sent"]
    task_id: int | None
    agent: str
    message: Message
    recipients: list[str]


class SendResult(msgspec.Struct, frozen=True, kw_only=True):
    message: Message
    created: bool
    recipients: list[str]
    #: Recipients the daemon has never seen (feature `unseen_recipients`; empty from
    #: an older daemon): most likely typos, capped and kept for a week only.
    never_seen: list[str] = msgspec.field(default_factory=list)
    #: Recipients whose tab's end was reported and who have not been seen since
    #: (feature `agent_ended`; empty from an older daemon): the message is kept for
    #: them, but no tab of theirs runs to be woken or to read it.
    ended: list[str] = msgspec.field(default_factory=list)


class InboxResult(msgspec.Struct, frozen=True, kw_only=True):
    """`message.read` and `message.wait`: unread messages, oldest first."""

    messages: list[Message]
    #: The agent's acknowledged position: every message up to it is read.
    cursor: int
    more: bool = False


class AckResult(msgspec.Struct, frozen=True, kw_only=True):
    cursor: int


class MessageResult(msgspec.Struct, frozen=True, kw_only=True):
    message: Message
    recipients: list[str]


class RequestResult(msgspec.Struct, frozen=True, kw_only=True):
    request: Message
    created: bool


class AnswerResult(msgspec.Struct, frozen=True, kw_only=True):
    request: Message
    answer: Message
    #: The requester's new reservations (approve or narrow of patterns).
    reservations: list[Reservation]
    #: The holder's patterns that ended to make room: each overlapped what was handed
    #: over, and a pattern ends whole (re-reserve what you still need).
    released: list[str] = msgspec.field(default_factory=list)
    #: The task as the requester now holds it (approve of a claim).
    task: Task | None = None
