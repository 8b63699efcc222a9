"""The front door: what a frame gets, and what each of its requests answers.

`route` is the one decision a frame meets, returned as a value: refused
(the daemon is draining, the connection's in-flight cap, a lone request
that cannot run), answered inline (a lone inline method), queued on the
writer with a reply callback (a lone write), or spawned as one trio task
(everything else). The connection acts on that value and keeps what is
about bytes and time: the read loop, the frame deadline, the outbox and
backpressure, as hypercorn's `trio/tcp_server.py` feeds its protocol
object and writes what it is told.

Every error response is built by `error_reply`, which logs it there, once,
in one format: docs/OPERATIONS.md's "every error answered to a client is logged
once with its cause" holds because there is no other way to build one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from coordd.methods.registry import METHODS, FollowUp, Method, Services, Session
from coordd.protocol.jsonrpc import (
    Item,
    Message,
    Rejected,
    Request,
    Response,
    decode_params,
    error_object,
    result_object,
)
from coordd_wire.errors import (
    CoordError,
    InternalError,
    MethodNotFound,
    Overloaded,
    ShuttingDown,
)

log = logging.getLogger(__name__)

#: Work to start once a reply's frame is queued (a subscription's pump).
FollowUpWork = Callable[[], Awaitable[None]]

#: The one format of a refusal in the log: method, id, kind, message.
REFUSAL_FORMAT = "%s (id %r) -> %s: %s"


# --- the decision ---------------------------------------------------------------------
#
# Each frame makes one of these, so they are slotted and not frozen: a
# frozen dataclass's __init__ goes through object.__setattr__ per field,
# about three times the cost (1.1 us against 0.3 us here), on the path of
# every claim. Nothing changes one after it is made.


@dataclass(slots=True)
class Refused:
    """Nothing runs: send `responses` now (none when every item was a notification).

    Each was logged by `error_reply` when the decision was made.
    """

    responses: list[Response]
    is_batch: bool


@dataclass(slots=True)
class Inline:
    """A lone inline method, params decoded: answered in the read loop, no task."""

    request: Request
    method: Method
    params: Any


@dataclass(slots=True)
class Queued:
    """A lone write, params decoded: to the writer's queue with a reply callback.

    When the queue cannot admit it at once, the connection spawns it instead
    (`Spawned` with these params): that task waits for admission.
    """

    request: Request
    method: Method
    params: Any

    def waiting(self) -> Spawned:
        """The same write as a task that waits for the writer's admission."""
        return Spawned(Message([self.request], False), self.method.large_answer, self.params)


@dataclass(slots=True)
class Spawned:
    """One trio task runs the frame (a batch's items concurrently)."""

    message: Message
    #: Its answer can be megabytes: the task holds one of the connection's few
    #: large-answer places while it runs and writes.
    large_answer: bool
    #: Decoded already (a queued write the full queue sent here), else UNSET.
    params: Any = msgspec.UNSET


Route = Refused | Inline | Queued | Spawned


def route(message: Message, services: Services, room: int) -> Route:
    """What to do with one frame; `room` is how many more requests its connection may run.

    A lone request is looked up and its params decoded here, once, so a
    bad one is refused without a task and a good one is never decoded twice.
    """
    if services.draining:
        return _refuse(message, ShuttingDown("the daemon is shutting down"))
    # Each batch item counts against the cap: one frame of 256 is 256 requests.
    if len(message.items) > room:
        refusal = Overloaded(
            "too many requests in flight on this connection; retry later",
            reason="connection_inflight",
        )
        return _refuse(message, refusal)
    if message.is_batch:
        return Spawned(message, _has_large_answer(message.items))
    item = message.items[0]
    if isinstance(item, Rejected):
        return _refuse(message, item.error)
    method = METHODS.get(item.method)
    if method is None:
        return _refuse(message, _not_found(item))
    if method.write_fn is None and method.inline is None:
        return Spawned(message, method.large_answer)
    try:
        params = decode_params(item.params, method.decoder)
    except CoordError as exc:
        return _refuse(message, exc)
    if method.inline is not None:
        return Inline(item, method, params)
    return Queued(item, method, params)


def _refuse(message: Message, error: CoordError) -> Refused:
    """Refuse every item with `error` (a rejected item with its own), logging each once."""
    replies = (
        error_reply(item, error if isinstance(item, Request) else item.error)
        for item in message.items
    )
    return Refused([reply for reply in replies if reply is not None], message.is_batch)


def _not_found(request: Request) -> MethodNotFound:
    return MethodNotFound(f"unknown method {request.method!r}", method=request.method)


def _has_large_answer(items: list[Item]) -> bool:
    return any(
        isinstance(item, Request) and (m := METHODS.get(item.method)) is not None and m.large_answer
        for item in items
    )


# --- replies --------------------------------------------------------------------------


def error_reply(
    item: Item | None, error: CoordError, cause: BaseException | None = None
) -> Response | None:
    """The error response to `item`, logged here once; None for a notification.

    `item` None is the frame as a whole (too large, empty): answered with
    id null. A refused notification is logged too, though never answered
    (JSON-RPC 2.0 section 4.1). `cause` is an unexpected exception: logged
    at ERROR with its traceback, in the same format.

    Called on the writer thread too (a queued write's answer): logging is
    thread-safe, and this touches nothing else.
    """
    if isinstance(item, Request):
        name, request_id = item.method, item.id
    else:
        name, request_id = "-", None if item is None else item.id
    if cause is None:
        log.info(REFUSAL_FORMAT, name, request_id, error.kind, error.message)
    else:
        log.error(REFUSAL_FORMAT, name, request_id, error.kind, error.message, exc_info=cause)
    if isinstance(item, Request) and item.is_notification:
        return None
    return error_object(request_id, error)


def write_reply(request: Request, value: Any, error: CoordError | None) -> Response | None:
    """A queued write's response from the writer's outcome (on the writer thread)."""
    if error is not None:
        return error_reply(request, error)
    if request.id is None:
        return None  # a notification: executed, never answered
    return result_object(request.id, value)


def run_inline(
    request: Request, method: Method, params: Any, services: Services
) -> Response | None:
    """An inline method's response, its errors caught at the same boundary as `run_item`'s."""
    assert method.inline is not None
    try:
        result = method.inline(services, params)
    except CoordError as exc:
        return error_reply(request, exc)
    except Exception as exc:
        return error_reply(request, _internal(exc), exc)
    return None if request.is_notification else result_object(request.id, result)


def _internal(exc: Exception) -> InternalError:
    return InternalError(f"internal error: {exc!r}")


# --- spawned frames -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """What one request produced: its response (None for a notification) and any follow-up."""

    response: Response | None
    follow_up: FollowUpWork | None = None


async def run_items(items: list[Item], services: Services, session: Session) -> list[Reply]:
    """Run a frame's items, a batch's concurrently; replies in item order."""
    if len(items) == 1:
        return [await run_item(items[0], services, session)]
    replies: list[Reply] = [Reply(None)] * len(items)

    async def run_one(index: int, item: Item) -> None:
        replies[index] = await run_item(item, services, session)

    async with trio.open_nursery() as batch:
        for index, item in enumerate(items):
            batch.start_soon(run_one, index, item)
    return replies


async def run_item(
    item: Item,
    services: Services,
    session: Session,
    params: Any = msgspec.UNSET,
) -> Reply:
    """One request's reply; `params` when they were decoded already (the write path)."""
    if isinstance(item, Rejected):
        return Reply(error_reply(item, item.error))
    try:
        result = await _call(item, services, session, params)
    except CoordError as exc:
        return Reply(error_reply(item, exc))
    except Exception as exc:
        return Reply(error_reply(item, _internal(exc), exc))
    follow_up = None
    if isinstance(result, FollowUp):
        result, follow_up = result.result, result.then
    if item.is_notification:
        return Reply(None, follow_up)
    return Reply(result_object(item.id, result), follow_up)


async def _call(request: Request, services: Services, session: Session, params: Any) -> Any:
    method = METHODS.get(request.method)
    if method is None:
        raise _not_found(request)
    if params is msgspec.UNSET:
        params = decode_params(request.params, method.decoder)
    if not method.blocking:
        return await method.handler(services, params, session)
    with session.while_connected():
        return await method.handler(services, params, session)
    # Only reached when the connection's input ended mid-wait; nobody reads this.
    raise ShuttingDown("the connection ended")
