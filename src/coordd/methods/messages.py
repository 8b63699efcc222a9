"""1.2 section 12: `message.*` and `request.*` (docs/PROTOCOL-1.2.md).

Writes run in the writer like every other command (`store/messages.py`,
`store/release_requests.py`); reads on a reader. `message.wait` is the blocking
read: it registers with the hub before it reads, so a message committed
between the read and the wait still wakes it, and it reads the database
again after waking, so two messages sent while it wakes are both returned.
"""

from __future__ import annotations

from typing import Any

import msgspec
import trio

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method, write
from coordd.store import messages, release_requests
from coordd.store.transaction import CommittedEvent
from coordd_wire import params_messages as T
from coordd_wire.errors import ShuttingDown


class _Addressed(msgspec.Struct):
    """The one member of a `message.sent` event a waiter looks at."""

    recipients: list[str] = msgspec.field(default_factory=list)


_addressed = msgspec.json.Decoder(_Addressed)


class InboxWaiter:
    """Fires on the first `message.sent` addressed to `agent`, or on shutdown."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.fired = trio.Event()
        self.shut = False

    def __call__(self, event: CommittedEvent | None) -> None:
        if event is None:
            self.shut = True
            self.fired.set()
        elif (
            event.type == messages.MESSAGE_SENT
            and self.agent in _addressed.decode(event.data).recipients
        ):
            self.fired.set()


def _now(services: Services) -> str:
    return format_time(services.clock.now())


write("message.send", messages.send)
write("message.ack", messages.ack)


@method("message.read")
async def read(services: Services, p: T.ReadParams, session: Session) -> Any:
    return await services.readers.run(messages.read, _now(services), p, share=session.reads)


@method("message.get")
async def get(services: Services, p: T.MessageGetParams, session: Session) -> Any:
    return await services.readers.run(messages.get, _now(services), p, share=session.reads)


@method("message.wait")
async def wait(services: Services, p: T.MessageWaitParams, session: Session) -> Any:
    if services.lifecycle.draining:
        raise ShuttingDown("the daemon is shutting down")
    waiter = InboxWaiter(p.agent)
    services.hub.listeners.add(waiter)
    try:
        found = await services.readers.run(messages.read, _now(services), p, share=session.reads)
        if found["messages"]:
            return found
        with trio.move_on_after(p.timeout_s):
            await waiter.fired.wait()
        if waiter.shut:
            raise ShuttingDown("the daemon is shutting down")
        if not waiter.fired.is_set():
            return found
        return await services.readers.run(messages.read, _now(services), p, share=session.reads)
    finally:
        services.hub.listeners.discard(waiter)


write("request.release", release_requests.request_release)


write("request.answer", release_requests.answer)
