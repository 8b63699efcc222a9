"""Live event fan-out: subscriptions and `task.wait` waiters (PROTOCOL.md section 7).

The writer hands each committed batch to `EventHub.publish` on the trio
thread, in seq order, after COMMIT. Subscriptions get a bounded buffer; a
subscriber more than `Limits.subscriber_lag_events` events behind is closed as
"lagged" instead of growing the daemon. Waiters are indexed by project so an
event only looks at waiters that could match it, and matching is done in
memory on the event's own copy of the task: no query per waiter per event.

A large batch is delivered in slices (`Limits.fanout_slice` deliveries each)
by the hub's delivery task, which yields to trio between slices, so a
completion that fans out to thousands of dependents past thousands of
waiters does not stall the loop; events published meanwhile queue behind
the rest, so every subscriber and waiter still sees seq order. `last_seq`
is the newest event delivered, which is what a new subscription starts after.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable
from typing import Literal

import msgspec
import trio

from coordd.lifecycle import Lifecycle
from coordd.limits import Limits
from coordd.store.transaction import CommittedEvent
from coordd_wire.errors import ShuttingDown
from coordd_wire.method_table import OPT_IN_EVENT_TYPES
from coordd_wire.params import WaitParams


class TaskView(msgspec.Struct):
    """The fields a wait filter looks at; the rest of the task JSON is skipped."""

    project: str
    kind: str
    state: str
    title: str
    tags: list[str]
    assignee: str | None = None
    blocked_by: list[int] = msgspec.field(default_factory=list)


_view_decoder = msgspec.json.Decoder(TaskView)


class WaitFilter:
    """A `task.wait` filter compiled once, checked in memory per candidate event."""

    __slots__ = ("assignee", "kind", "needle", "project", "ready", "states", "tag")

    def __init__(self, p: WaitParams) -> None:
        self.project = p.project
        self.kind = p.kind
        self.tag = p.tag
        self.assignee = p.assignee
        self.ready = p.ready
        self.needle = p.title_contains.lower() if p.title_contains else None
        if p.state is None:
            self.states: frozenset[str] | None = None
        else:
            self.states = frozenset([p.state] if isinstance(p.state, str) else p.state)

    def matches(self, view: TaskView, lowered_title: str | None = None) -> bool:
        """`lowered_title`: the view's title in lower case, if the caller has it (one
        event meets many waiters: lowering it once each is the fan-out's largest cost)."""
        return (
            (self.project is None or view.project == self.project)
            and (self.kind is None or view.kind == self.kind)
            and (self.states is None or view.state in self.states)
            and (self.tag is None or self.tag in view.tags)
            and (
                self.needle is None
                or self.needle in (view.title.lower() if lowered_title is None else lowered_title)
            )
            and (self.assignee is None or view.assignee == self.assignee)
            and (
                self.ready is None
                or (view.state == "pending" and (not view.blocked_by) == self.ready)
            )
        )

    def matches_json(self, task_json: str | bytes) -> bool:
        return self.matches(_view_decoder.decode(task_json))


class Waiter:
    """One pending `task.wait`.

    A waiter is registered before the read that decides whether it must wait
    at all, so no event can slip between that read and the wait. Until the
    read tells it where it stands (`arm`), it only collects matching events;
    armed, it fires on the first matching event after `after_seq`.
    """

    __slots__ = ("after_seq", "early", "error", "fired", "flt", "matched")

    def __init__(self, flt: WaitFilter) -> None:
        self.flt = flt
        self.after_seq: int | None = None
        self.early: list[CommittedEvent] = []
        self.fired = trio.Event()
        self.matched: CommittedEvent | None = None
        self.error: Exception | None = None

    def arm(self, after_seq: int) -> CommittedEvent | None:
        """Only events after `after_seq` count from now on; return one already seen."""
        self.after_seq = after_seq
        early, self.early = self.early, []
        return next((event for event in early if event.seq > after_seq), None)


class Subscription:
    """A live event stream for one connection, with a bounded backlog."""

    def __init__(self, sub_id: int, project: str | None, types: Iterable[str] | None) -> None:
        self.id = sub_id
        self.project = project
        self.types = frozenset(types) if types else None
        self.backlog: deque[CommittedEvent] = deque()
        self.wakeup = trio.Event()
        self.closed: Literal["lagged", "shutdown", "unsubscribed"] | None = None
        self.last_delivered = 0

    def wants(self, event: CommittedEvent) -> bool:
        if self.types is None:
            wanted = event.type not in OPT_IN_EVENT_TYPES
        else:
            wanted = event.type in self.types
        return wanted and (self.project is None or event.project == self.project)

    def close(self, reason: Literal["lagged", "shutdown", "unsubscribed"]) -> None:
        if self.closed is None:
            self.closed = reason
            self.backlog.clear()
            self.wakeup.set()


class EventHub:
    def __init__(self, lifecycle: Lifecycle, slice_deliveries: int = Limits.fanout_slice) -> None:
        self._waiters_by_project: dict[str | None, set[Waiter]] = {}
        self._subscriptions: dict[int, Subscription] = {}
        #: Called with each delivered event in seq order, and with None when the
        #: daemon shuts down: 1.2 `message.wait` (`methods/messages.py`).
        self.listeners: set[Callable[[CommittedEvent | None], None]] = set()
        self._ids = itertools.count(1)
        self.last_seq = 0
        self._lifecycle = lifecycle
        self._slice = slice_deliveries
        #: Published events not delivered yet, in seq order (the delivery task's work).
        self._undelivered: deque[CommittedEvent] = deque()
        self._more = trio.Event()
        self._delivering = False
        #: Slices delivered by the delivery task (tests count them).
        self.slices = 0

    # --- publishing (called by the writer's delivery callback) ---------------

    def publish(self, events: list[CommittedEvent]) -> None:
        """Deliver `events` now, up to one slice; the delivery task does the rest."""
        if self._undelivered:  # earlier events are still going out: keep seq order
            self._undelivered.extend(events)
            return
        done = self._deliver_slice(events)
        if done < len(events):
            if self._delivering:
                self._undelivered.extend(events[done:])
                self._more.set()
            else:  # no delivery task (a hub used on its own): all of it, now
                self._deliver_slice(events[done:], unbounded=True)

    async def run_deliveries(self) -> None:
        """The delivery task: what `publish` left over, a slice at a time, yielding between."""
        self._delivering = True
        try:
            while True:
                await self._more.wait()
                self._more = trio.Event()
                while self._undelivered:
                    await trio.lowlevel.checkpoint()  # pings and the rest go first
                    self.slices += 1
                    batch: list[CommittedEvent] = []
                    work = 0
                    while self._undelivered and work < self._slice:
                        event = self._undelivered.popleft()
                        batch.append(event)
                        work += self._cost(event)
                    self._deliver_slice(batch, unbounded=True)
        finally:
            self._delivering = False
            rest, self._undelivered = list(self._undelivered), deque()
            if not self._lifecycle.draining:
                self._deliver_slice(rest, unbounded=True)

    def _cost(self, event: CommittedEvent) -> int:
        """Deliveries one event makes: each subscription, each waiter that could match."""
        waiters = self._waiters_by_project
        return (
            1
            + len(self._subscriptions)
            + len(waiters.get(event.project, ()))
            + len(waiters.get(None, ()))
        )

    def _deliver_slice(self, events: list[CommittedEvent], *, unbounded: bool = False) -> int:
        """Deliver events in order until a slice's worth is done; return how many were."""
        work = 0
        for index, event in enumerate(events):
            if not unbounded and work >= self._slice:
                return index
            work += self._cost(event)
            self._deliver(event)
        return len(events)

    def _deliver(self, event: CommittedEvent) -> None:
        self.last_seq = event.seq
        for sub in list(self._subscriptions.values()):
            if sub.closed is None and sub.wants(event):
                sub.backlog.append(event)
                if len(sub.backlog) > Limits.subscriber_lag_events:
                    sub.close("lagged")
                else:
                    sub.wakeup.set()
        if self.listeners:
            for listener in list(self.listeners):
                listener(event)
        self._wake_waiters(event)

    def _wake_waiters(self, event: CommittedEvent) -> None:
        # Only waiters for this project, or for any project, can match.
        candidates = (
            self._waiters_by_project.get(event.project),
            self._waiters_by_project.get(None),
        )
        buckets = [bucket for bucket in candidates if bucket]
        if not buckets or not event.task_json:  # an event with no task matches no wait
            return
        view = _view_decoder.decode(event.task_json)
        lowered = view.title.lower()
        for bucket in buckets:
            for waiter in list(bucket):
                if not waiter.flt.matches(view, lowered):
                    continue
                if waiter.after_seq is None:
                    waiter.early.append(event)
                elif event.seq > waiter.after_seq:
                    waiter.matched = event
                    self.remove_waiter(waiter)
                    waiter.fired.set()

    # --- waiters ----------------------------------------------------------------

    def add_waiter(self, waiter: Waiter) -> None:
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        self._waiters_by_project.setdefault(waiter.flt.project, set()).add(waiter)

    def remove_waiter(self, waiter: Waiter) -> None:
        bucket = self._waiters_by_project.get(waiter.flt.project)
        if bucket is not None:
            bucket.discard(waiter)
            if not bucket:
                del self._waiters_by_project[waiter.flt.project]

    @property
    def waiter_count(self) -> int:
        return sum(len(bucket) for bucket in self._waiters_by_project.values())

    # --- subscriptions ------------------------------------------------------------

    def subscribe(self, project: str | None, types: Iterable[str] | None) -> Subscription:
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        sub = Subscription(next(self._ids), project, types)
        self._subscriptions[sub.id] = sub
        return sub

    def unsubscribe(
        self, sub: Subscription, reason: Literal["lagged", "shutdown", "unsubscribed"]
    ) -> None:
        self._subscriptions.pop(sub.id, None)
        sub.close(reason)

    def oldest_subscriber_position(self) -> int:
        """Events after this seq may still be owed to a live subscriber: keep them."""
        positions = [sub.last_delivered for sub in self._subscriptions.values()]
        return min(positions, default=self.last_seq)

    @property
    def subscription_count(self) -> int:
        return len(self._subscriptions)

    def shutdown(self) -> None:
        """Answer every waiter -32005 and close every subscription with "shutdown"."""
        self._lifecycle.begin_drain()
        for bucket in list(self._waiters_by_project.values()):
            for waiter in list(bucket):
                waiter.error = ShuttingDown("the daemon is shutting down")
                waiter.fired.set()
        self._waiters_by_project.clear()
        self._undelivered.clear()
        for sub in list(self._subscriptions.values()):
            sub.close("shutdown")
        self._subscriptions.clear()
        for listener in list(self.listeners):
            listener(None)
