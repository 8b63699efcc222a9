"""What a method handler is, and what it may use."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from coordd.clock import Clock
from coordd.events import EventHub, Subscription
from coordd.store.readers import ReaderPool
from coordd.store.writer import WriteFn, Writer


@dataclass
class Services:
    """Everything a handler may touch; built once by the daemon."""

    writer: Writer
    readers: ReaderPool
    hub: EventHub
    clock: Clock
    db_path: Path
    started_at: str
    version: str
    pid: int = field(default_factory=os.getpid)
    draining: bool = False


class Session(Protocol):
    """The connection a request arrived on, as far as handlers need it."""

    subscriptions: dict[int, Subscription]
    #: This connection's share of the reader pool (pass as `share=`).
    reads: trio.CapacityLimiter

    async def send_notification(self, method: str, params: Any) -> None: ...

    @property
    def nursery(self) -> trio.Nursery: ...


@dataclass(frozen=True)
class FollowUp:
    """A result plus work to start only after the response frame is queued.

    `events.subscribe` needs this: its notifications must follow its answer.
    """

    result: Any
    then: Callable[[], Awaitable[None]]


Handler = Callable[[Services, Any, Session], Awaitable[Any]]


@dataclass(frozen=True)
class Method:
    name: str
    decoder: msgspec.json.Decoder[Any]
    handler: Handler
    #: For a write: the function the writer runs, so a connection can queue it
    #: directly (answered from the writer thread) instead of via `handler`.
    write_fn: WriteFn | None = None


METHODS: dict[str, Method] = {}


def method(
    name: str, params_type: type[Any], write_fn: WriteFn | None = None
) -> Callable[[Handler], Handler]:
    """Register a handler for `name`, decoding params as `params_type`."""

    def register(handler: Handler) -> Handler:
        METHODS[name] = Method(name, msgspec.json.Decoder(params_type), handler, write_fn)
        return handler

    return register
