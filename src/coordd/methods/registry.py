"""What a method handler is, and what it may use."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec
import trio

from coordd.clock import Clock
from coordd.events import EventHub, Subscription
from coordd.lifecycle import Lifecycle
from coordd.limits import Limits
from coordd.reservation_queue import ReservationQueue
from coordd.slot_queue import SlotQueue
from coordd.stalls import Stalls
from coordd.store.commands import WriteFn
from coordd.store.readers import Readers
from coordd.store.writer import Writer
from coordd_wire.method_table import TABLE, Rpc

if TYPE_CHECKING:
    from coordd.store.backend import Backend


@dataclass
class Services:
    """Everything a handler may touch; built once by the daemon."""

    writer: Writer
    readers: Readers
    hub: EventHub
    clock: Clock
    #: The store served: its name, location, node and peers (`server.info`).
    store: Backend
    started_at: str
    version: str
    lifecycle: Lifecycle
    reservation_queue: ReservationQueue
    #: Waiting slot acquires and landing starts (issue 35).
    slot_queue: SlotQueue
    #: The store's id (docs/PROTOCOL-1.2.md section 1b), read once at start: it never changes.
    board_id: str
    #: The code this daemon loaded (`coordd_wire.build`, 1.2 section 1c), taken at start.
    build: str | None = None
    pid: int = field(default_factory=os.getpid)
    #: Taken by a bulk path match (more than `Limits.bulk_match_paths` paths) before
    #: its reader: one at a time daemon-wide, so bulk matches can never fill the
    #: reader pool and starve small reads (a hook's guard) of every other project.
    bulk_matching: trio.CapacityLimiter = field(default_factory=lambda: trio.CapacityLimiter(1))
    #: Connections not read while their clients are behind on reading (`server.info.stalled`).
    stalls: Stalls = field(default_factory=Stalls)
    #: Reader-pool connections one client connection may hold (`Session.reads`'s size).
    read_share: int = Limits.reader_share_per_connection

    def matching(self, paths: int) -> AbstractAsyncContextManager[object]:
        """What a path match over `paths` paths holds while it runs on a reader."""
        return self.bulk_matching if paths > Limits.bulk_match_paths else nullcontext()

    @property
    def draining(self) -> bool:
        return self.lifecycle.draining


class Session(Protocol):
    """The connection a request arrived on, as far as handlers need it."""

    subscriptions: dict[int, Subscription]
    #: This connection's share of the reader pool (pass as `share=`).
    reads: trio.CapacityLimiter

    async def send_notification(self, method: str, params: Any) -> None: ...

    def while_connected(self) -> AbstractContextManager[None]:
        """Run a blocking request until it returns or the connection's input ends."""
        ...

    @property
    def nursery(self) -> trio.Nursery: ...


R = TypeVar("R")


@dataclass(frozen=True)
class FollowUp(Generic[R]):
    """A result plus work to start only after the response frame is queued.

    `events.subscribe` needs this: its notifications must follow its answer.
    """

    result: R
    then: Callable[[], Awaitable[None]]


Handler = Callable[[Services, Any, Session], Awaitable[Any]]
#: A handler that never waits: its answer is computed where the frame was read.
InlineHandler = Callable[[Services, Any], Any]


@dataclass(frozen=True)
class Method:
    """One RPC method (PROTOCOL.md section 6) and the traits its dispatch depends on."""

    name: str
    decoder: msgspec.json.Decoder[Any]
    handler: Handler
    #: For a write: the function the writer runs, so a connection can queue it
    #: directly (answered from the writer thread) instead of via `handler`.
    write_fn: WriteFn | None = None
    #: It may wait for a long time: it ends when its connection's input does.
    blocking: bool = False
    #: Its answer can be megabytes (up to 1,000 tasks of 64 KiB bodies): a
    #: connection holds only a few such answers at once.
    large_answer: bool = False
    #: It never waits: a lone request is answered in the connection's read
    #: loop, with no trio task (`inline_method`).
    inline: InlineHandler | None = None


METHODS: dict[str, Method] = {}


def _entry(name: str, *, writes: bool = False, inline: bool = False) -> Rpc:
    """`name`'s entry in the method table, refusing a second handler or a way of
    registering that its traits do not declare."""
    if name in METHODS:
        raise ValueError(f"method {name} is registered twice")
    entry = TABLE.get(name)
    if entry is None:
        raise ValueError(f"method {name} is not in coordd_wire.method_table")
    if (entry.writes, entry.inline) != (writes, inline):
        raise ValueError(
            f"method {name} is registered as writes={writes}, inline={inline}; the"
            f" method table says writes={entry.writes}, inline={entry.inline}"
        )
    return entry


def method(name: str, write_fn: WriteFn | None = None) -> Callable[[Handler], Handler]:
    """Register a handler for `name`, decoding params as its table entry's Struct, with
    the entry's traits (`waits`: blocking; `large`: a large answer)."""

    def register(handler: Handler) -> Handler:
        entry = _entry(name, writes=write_fn is not None)
        decoder = msgspec.json.Decoder(entry.params_type())
        METHODS[name] = Method(name, decoder, handler, write_fn, entry.waits, entry.large)
        return handler

    return register


def write(name: str, fn: WriteFn) -> None:
    """Register a plain write: `fn` runs in the writer and its result is the answer,
    with nothing before or after it on the trio side. Registered this way, a lone
    request is queued to the writer where its frame was read and answered from the
    writer thread (the fast path, `dispatch.Queued`), with no trio task."""

    async def handler(services: Services, p: Any, session: Session) -> Any:
        return await services.writer.submit(fn, p)

    method(name, fn)(handler)


def inline_method(name: str) -> Callable[[InlineHandler], InlineHandler]:
    """Register a handler that never waits (no I/O, no lock): a lone request for it is
    answered where its frame was read, without spawning a task (in a batch it runs
    like any other)."""

    def register(fn: InlineHandler) -> InlineHandler:
        entry = _entry(name, inline=True)

        async def handler(services: Services, p: Any, session: Session) -> Any:
            return fn(services, p)

        decoder = msgspec.json.Decoder(entry.params_type())
        METHODS[name] = Method(name, decoder, handler, inline=fn)
        return fn

    return register


def check_complete() -> None:
    """Fail unless every entry of the method table has a handler: `coordd.methods` calls
    it once every noun's module has registered its methods, so a daemon missing one
    never starts (and tests/unit/test_method_table.py fails)."""
    missing = sorted(set(TABLE) - set(METHODS))
    if missing:
        raise RuntimeError(f"methods in the method table with no handler: {missing}")
