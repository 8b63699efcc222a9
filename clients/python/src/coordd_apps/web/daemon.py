"""What the page reads from the daemon, through the trio client only: whole answers of
paged methods, and the event feed that outlives lag and daemon restarts."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

from coordd_apps import cost_view, prices
from coordd_client import methods
from coordd_client.aio import AsyncClient
from coordd_client.paging import EVENT_PAGE, TASK_PAGE
from coordd_client.rpc import Response
from coordd_wire.errors import DaemonUnavailable, Overloaded, ShuttingDown
from coordd_wire.wire import Event, State, Task
from coordd_wire.wire_messages import MessageEvent

#: Seconds between tries while the daemon is away (restarting, or stopped).
RETRY_S = 0.5


@asynccontextmanager
async def connected(socket: Path) -> AsyncIterator[AsyncClient]:
    """`AsyncClient.connect`, with an error raised in the body given back as itself.

    The client's reader runs in a nursery, and trio groups whatever leaves a nursery
    (`ExceptionGroup`); a handler here wants the `NotFound` or `DaemonUnavailable`
    itself, so a group of one error is unwrapped.
    """
    try:
        async with AsyncClient.connect(socket) as client:
            yield client
    except BaseExceptionGroup as group:
        leaf = _sole(group)
        if leaf is None:
            raise
        raise leaf from None


def _sole(error: BaseException) -> Exception | None:
    while isinstance(error, BaseExceptionGroup):
        if len(error.exceptions) != 1:
            return None
        error = error.exceptions[0]
    return error if isinstance(error, Exception) else None


async def all_tasks(client: AsyncClient, **filters: Any) -> list[Task]:
    """Every task `task.list` matches, in id order, page by page."""
    found: list[Task] = []
    after: int | None = None
    while True:
        page = await client.list_tasks(**filters, after_id=after, limit=TASK_PAGE)
        found += page.tasks
        after = page.next_after_id
        if after is None:
            return found


async def newest_tasks(
    client: AsyncClient, rows: int, *, counted: bool = True, **filters: Any
) -> tuple[list[Task], int]:
    """The newest `rows` tasks matching `filters`, oldest first, and how many more match:
    asked of the daemon in descending id with the counts (docs/PROTOCOL-1.2.md section
    6c, feature `urgent_lists`), so a page costs its rows, not the board's history.
    `counted`: False when the count is not wanted (it reads every match)."""
    found: list[Task] = []
    after: int | None = None
    counts: dict[State, int] | None = None
    while True:
        ask = True if counted and counts is None else None
        page = await client.list_tasks(**filters, order="newest", after_id=after, counts=ask,
                                       limit=max(1, min(TASK_PAGE, rows - len(found))))  # fmt: skip
        if counts is None:
            counts = page.counts or {}
        found += page.tasks
        after = page.next_after_id
        if after is None or len(found) >= rows:
            found = found[: max(0, rows)]
            return found[::-1], max(0, sum(counts.values()) - len(found))


async def every_newest(client: AsyncClient, **filters: Any) -> list[Task]:
    """Every task matching `filters`, in id order, read newest first (section 6c): each
    open state from its own index, however many tasks the project finished."""
    tasks, _ = await newest_tasks(client, 1 << 62, counted=False, **filters)
    return tasks


async def history(client: AsyncClient, task_id: int) -> list[Event]:
    """Every stored event of one task (`events.since` with `task_id`)."""
    events: list[Event] = []
    after = 0
    while True:
        page = await client.events_since(after_seq=after, task_id=task_id, limit=EVENT_PAGE)
        events += page.events
        if len(page.events) < EVENT_PAGE:
            return events
        after = page.last_seq


class _EventParams(msgspec.Struct):
    subscription: int
    event: msgspec.Raw


class _Kind(msgspec.Struct):
    type: str


_event_params = msgspec.json.Decoder(_EventParams)
_kind = msgspec.json.Decoder(_Kind)
_task_event = msgspec.json.Decoder(Event)
_message_event = msgspec.json.Decoder(MessageEvent)

#: What a feed is sent: a task, slot or landing event, or a message (which has no
#: `task` member at all, so it has a type of its own).
AnyEvent = Event | MessageEvent


async def costs(
    client: AsyncClient, project: str | None, task_id: int | None = None
) -> cost_view.Costs:
    """Tokens charged so far per task and per agent, from one `cost.query` (issue 48);
    none from a daemon without the ledger."""
    if not await client.supports("token_ledger"):
        return cost_view.Costs()
    answer = await client.cost(project=project, task_id=task_id, limit=cost_view.ROWS)
    table, problem = prices.load(project)
    if problem and problem not in _SAID:  # once, where `coord web` was started
        _SAID.add(problem)
        sys.stderr.write(f"coord web: default prices used: {problem}\n")
    return cost_view.summed(answer, table)


#: The price-table problems already written to the terminal.
_SAID: set[str] = set()


def decode_event(raw: bytes | msgspec.Raw) -> AnyEvent:
    """One event of any 1.2 type: `message.sent` as `MessageEvent`, the rest as `Event`."""
    if _kind.decode(raw).type == "message.sent":
        return _message_event.decode(raw)
    return _task_event.decode(raw)


class _MessagePage(msgspec.Struct):
    events: list[MessageEvent]
    last_seq: int


async def message_events(
    client: AsyncClient, project: str | None, task_id: int | None = None
) -> list[MessageEvent]:
    """Every `message.sent` of a project (or one task's thread), oldest first.

    Read raw: the client's `events_since` decodes every event as a task event, and a
    message event has no `task` member (section 12)."""
    found: list[MessageEvent] = []
    after = 0
    while True:
        since = methods.events_since(
            after_seq=after,
            limit=EVENT_PAGE,
            project=project,
            types=["message.sent"],
            task_id=task_id,
        )
        page = await client.send(since.as_type(_MessagePage))
        found += page.events
        if len(page.events) < EVENT_PAGE:
            return found
        after = page.last_seq


class Feed:
    """`events.subscribe` from a seq, resubscribed from the last seq delivered whenever
    it ends (lagged, the daemon stopping or gone), so `deliver` sees every event once, in
    order; `status` hears "live" and "reconnecting" as the link comes and goes."""

    def __init__(
        self,
        socket: Path,
        project: str | None,
        # Any: the webhook's takes `Event` (it asks for task events only), the page's
        # `AnyEvent`; a Callable's parameter admits no narrower type.
        deliver: Callable[[Any], Awaitable[None]],
        status: Callable[[str], Awaitable[None]],
        types: Sequence[str] | None = None,
    ) -> None:
        self.socket = socket
        #: None: task events only (each decodes as `Event` with its task); else these.
        self.types = list(types) if types else None
        self.project = project
        self.deliver = deliver
        self.status = status
        self.last_seq: int | None = None

    async def run(self, after_seq: int | None) -> None:
        """Forever (until cancelled): follow, and resume after every end."""
        self.last_seq = after_seq
        while True:
            try:
                await self._follow()
            except (DaemonUnavailable, ShuttingDown, Overloaded):
                pass
            await self.status("reconnecting")
            await trio.sleep(RETRY_S)

    async def _follow(self) -> None:
        async with connected(self.socket) as client:
            subscribe = methods.subscribe(after_seq=self.last_seq, project=self.project)
            if self.types is not None:
                subscribe = subscribe.with_params(types=self.types)  # sent even when empty
            answer = await client.send(subscribe)
            if self.last_seq is None:
                self.last_seq = answer.last_seq
            await self.status("live")
            async for first in client.notifications:
                for note in _with_queued(first, client.notifications):
                    if note.method == "subscription.closed":
                        return
                    if note.method != "event":
                        continue
                    event = decode_event(_event_params.decode(note.params).event)
                    if event.seq <= self.last_seq:
                        continue  # replayed after a resume: delivered already
                    self.last_seq = event.seq
                    await self.deliver(event)


def _with_queued(
    first: Response, queued: trio.MemoryReceiveChannel[Response]
) -> Iterator[Response]:
    """`first` and every notification already queued behind it, taken in one turn.

    The client's reader queues a whole read of the socket (several events) each
    time it runs, and `async for` takes one per turn: a feed that took one at a
    time fell behind, and its queue grew to the client's bound (a thousand
    events, each with its task whole) for every open page."""
    yield first
    while True:
        try:
            yield queued.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return
