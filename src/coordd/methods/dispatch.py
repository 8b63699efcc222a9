"""Routing a frame's requests to their methods: lookup, params, batch fan-out, replies.

The connection decides whether a frame may run at all (draining, its
in-flight cap) and how its answer travels; this module decides what runs
and what each request answers. Errors become error responses here, at one
boundary, so a handler only ever raises.
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
    Rejected,
    Request,
    Response,
    decode_params,
    error_object,
    result_object,
)
from coordd_client.protocol.errors import (
    CoordError,
    InternalError,
    MethodNotFound,
    ShuttingDown,
)

log = logging.getLogger(__name__)

#: Work to start once a reply's frame is queued (a subscription's pump).
FollowUpWork = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Reply:
    """What one request produced: its response (None for a notification) and any follow-up."""

    response: Response | None
    follow_up: FollowUpWork | None = None


def lookup(request: Request) -> Method:
    method = METHODS.get(request.method)
    if method is None:
        raise MethodNotFound(f"unknown method {request.method!r}", method=request.method)
    return method


def decoded_direct(request: Request) -> tuple[Method, Any] | None:
    """The method and decoded params of a request the connection answers without a
    task (a write the writer thread answers, or an inline method), else None.

    Raises `CoordError` for bad params: the caller answers it at once, so
    params are never decoded twice.
    """
    method = METHODS.get(request.method)
    if method is None or (method.write_fn is None and method.inline is None):
        return None
    return method, decode_params(request.params, method.decoder)


def run_inline(request: Request, method: Method, params: Any, services: Services) -> Response:
    """An inline method's response, its errors caught at the same boundary as `run_item`'s."""
    assert method.inline is not None
    try:
        return result_object(request.id, method.inline(services, params))
    except CoordError as exc:
        log_refusal(request, exc)
        return error_object(request.id, exc)
    except Exception as exc:
        log.exception("internal error in %s", request.method)
        return error_object(request.id, InternalError(f"internal error: {exc!r}"))


def has_large_answer(items: list[Item]) -> bool:
    return any(
        isinstance(item, Request) and (m := METHODS.get(item.method)) is not None and m.large_answer
        for item in items
    )


def log_refusal(request: Request | None, error: CoordError) -> None:
    """Every error answered to a client is logged once, with its cause."""
    name, request_id = (request.method, request.id) if request else ("-", None)
    log.info("%s (id %r) -> %s: %s", name, request_id, error.kind, error.message)


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
        return Reply(error_object(item.id, item.error))
    try:
        result = await _call(item, services, session, params)
    except CoordError as exc:
        log_refusal(item, exc)
        return Reply(None if item.is_notification else error_object(item.id, exc))
    except Exception as exc:
        log.exception("internal error in %s", item.method)
        error = InternalError(f"internal error: {exc!r}")
        return Reply(None if item.is_notification else error_object(item.id, error))
    follow_up = None
    if isinstance(result, FollowUp):
        result, follow_up = result.result, result.then
    if item.is_notification:
        return Reply(None, follow_up)
    return Reply(result_object(item.id, result), follow_up)


async def _call(request: Request, services: Services, session: Session, params: Any) -> Any:
    method = lookup(request)
    if params is msgspec.UNSET:
        params = decode_params(request.params, method.decoder)
    if not method.blocking:
        return await method.handler(services, params, session)
    with session.while_connected():
        return await method.handler(services, params, session)
    # Only reached when the connection's input ended mid-wait; nobody reads this.
    raise ShuttingDown("the connection ended")
