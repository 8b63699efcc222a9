"""One builder per 1.2 section 12 RPC (messages and release requests), for both clients.

Beside `methods.py` (which holds sections 6 to 10) in the same shape: each turns
typed arguments into a `Call`; `Client` and `AsyncClient` wrap them.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_client.methods import _to
from coordd_wire import wire_messages
from coordd_wire.method_table import Call, call


def send_message(
    body: str,
    *,
    to: str | None = None,
    task_id: int | None = None,
    reply_to: int | None = None,
    kind: wire_messages.SendKind | None = None,
    agent: str | None = None,
    project: str | None = None,
    idempotency_key: str | None = None,
) -> Call[wire_messages.SendResult]:
    """To `to`; else on task `task_id`'s thread; else (a reply) to `reply_to`'s sender;
    else to every live agent of the project. `kind="question"`: open until answered."""
    params = {
        "body": body,
        "to": _to(to),  # `human` is this user's `human-<user>`, as for an assignee
        "task_id": task_id,
        "reply_to": reply_to,
        "kind": kind,
        "agent": agent,
        "project": project,
        "idempotency_key": idempotency_key,
    }
    return call("message.send", params)


def read_messages(
    *, agent: str | None = None, after_id: int | None = None, limit: int | None = None
) -> Call[wire_messages.InboxResult]:
    """Unread messages (after the agent's cursor, or `after_id`); read, not acknowledged."""
    params = {"agent": agent, "after_id": after_id, "limit": limit}
    return call("message.read", params)


def ack_messages(up_to: int, *, agent: str | None = None) -> Call[wire_messages.AckResult]:
    """Every message of the agent's up to `up_to` is read: never delivered again."""
    return call("message.ack", {"agent": agent, "up_to": up_to})


def wait_messages(
    timeout_s: float, *, agent: str | None = None, after_id: int | None = None
) -> Call[wire_messages.InboxResult]:
    """Block until the agent has an unread message (returned at once if it has one)."""
    params = {"agent": agent, "timeout_s": timeout_s, "after_id": after_id}
    return call("message.wait", params, waits_s=timeout_s)


def get_message(message_id: int) -> Call[wire_messages.MessageResult]:
    return call("message.get", {"id": message_id})


def request_release(
    *,
    patterns: Sequence[str] | None = None,
    task_id: int | None = None,
    to: str | None = None,
    body: str | None = None,
    ttl_s: float | None = None,
    agent: str | None = None,
    project: str | None = None,
    idempotency_key: str | None = None,
) -> Call[wire_messages.RequestResult]:
    """Ask the holder of `patterns` (reservations) or `task_id` (a claim) to hand it over."""
    params = {
        "patterns": list(patterns) if patterns else None,
        "task_id": task_id,
        "to": _to(to),
        "body": body,
        "ttl_s": ttl_s,
        "agent": agent,
        "project": project,
        "idempotency_key": idempotency_key,
    }
    return call("request.release", params)


def answer_request(
    request_id: int,
    decision: wire_messages.Decision,
    *,
    patterns: Sequence[str] | None = None,
    reason: str | None = None,
    agent: str | None = None,
) -> Call[wire_messages.AnswerResult]:
    """Approve (hand it all over now), deny, or narrow (hand over `patterns` only)."""
    params = {
        "agent": agent,
        "id": request_id,
        "decision": decision,
        "patterns": list(patterns) if patterns else None,
        "reason": reason,
    }
    return call("request.answer", params)
