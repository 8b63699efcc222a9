"""`events.since`, `events.subscribe`, `events.unsubscribe` and `task.wait`."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import msgspec
import trio

from coordd.events import Subscription, Waiter, WaitFilter
from coordd.limits import Limits
from coordd.methods.registry import FollowUp, Services, Session, method
from coordd.store import reads
from coordd_wire import params as P
from coordd_wire.errors import NotFound, Overloaded


@method("events.since")
async def since(services: Services, p: P.EventsSinceParams, session: Session) -> Any:
    events, last = await services.readers.run(
        partial(reads.events_since, task_id=p.task_id),
        p.after_seq or 0,
        p.limit or P.DEFAULT_EVENTS_LIMIT,
        p.project,
        p.types,
        share=session.reads,
    )
    return {"events": events, "last_seq": last}


@method("events.subscribe")
async def subscribe(services: Services, p: P.SubscribeParams, session: Session) -> Any:
    if len(session.subscriptions) >= Limits.subscriptions_per_connection:
        raise Overloaded(
            f"a connection may hold at most {Limits.subscriptions_per_connection} subscriptions",
            reason="too_many_subscriptions",
        )
    hub = services.hub
    if p.after_seq is not None and p.after_seq > hub.last_seq:
        # The hub learns of a commit a moment after its writer answered it,
        # so only the database can say a seq is from the future.
        newest = await services.readers.run(reads.last_seq, share=session.reads)
        reads.require_known_seq(p.after_seq, newest)
    sub = hub.subscribe(p.project, p.types)
    session.subscriptions[sub.id] = sub
    # Everything published up to `boundary` is replayed from the database;
    # everything after it is in the live backlog, because the subscription was
    # registered first. No gap, no duplicate.
    boundary = hub.last_seq
    sub.last_delivered = boundary if p.after_seq is None else min(p.after_seq, boundary)

    async def pump() -> None:
        try:
            if p.after_seq is not None:
                await _replay(services, session, sub, p.after_seq, boundary)
            await _deliver_live(session, sub, boundary)
        finally:
            session.subscriptions.pop(sub.id, None)
            hub.unsubscribe(sub, sub.closed or "unsubscribed")

    return FollowUp({"subscription": sub.id, "last_seq": boundary}, pump)


async def _replay(
    services: Services, session: Session, sub: Subscription, after_seq: int, boundary: int
) -> None:
    position = after_seq
    types = sorted(sub.types) if sub.types else None
    while position < boundary and sub.closed is None:
        events, _ = await services.readers.run(
            reads.events_since, position, Limits.event_page, sub.project, types, share=session.reads
        )
        if not events:
            break
        for raw in events:
            seq = reads.stored_event_decoder.decode(raw).seq
            if seq > boundary:
                return
            await session.send_notification("event", {"subscription": sub.id, "event": raw})
            sub.last_delivered = position = seq
        if len(events) < Limits.event_page:
            break


async def _deliver_live(session: Session, sub: Subscription, boundary: int) -> None:
    while sub.closed is None:
        if not sub.backlog:
            sub.wakeup = trio.Event()
            await sub.wakeup.wait()
            continue
        event = sub.backlog.popleft()
        if event.seq <= boundary:
            continue
        params = {"subscription": sub.id, "event": msgspec.Raw(event.data)}
        await session.send_notification("event", params)
        sub.last_delivered = event.seq
    if sub.closed in ("lagged", "shutdown"):
        closed = {"subscription": sub.id, "reason": sub.closed, "last_seq": sub.last_delivered}
        # The notice tells the client where to resume, so it waits its turn in
        # line for the socket (bounded by the connection's write timeout); only shutdown,
        # which must finish, gives it a deadline of its own.
        deadline = Limits.shutdown_notice_s if sub.closed == "shutdown" else math.inf
        with trio.move_on_after(deadline):
            await session.send_notification("subscription.closed", closed)


@method("events.unsubscribe")
async def unsubscribe(services: Services, p: P.UnsubscribeParams, session: Session) -> Any:
    sub = session.subscriptions.pop(p.subscription, None)
    if sub is None:
        raise NotFound(f"no subscription {p.subscription} on this connection")
    services.hub.unsubscribe(sub, "unsubscribed")
    return {}


@method("task.wait")
async def wait(services: Services, p: P.WaitParams, session: Session) -> Any:
    hub = services.hub
    waiter = Waiter(WaitFilter(p))
    hub.add_waiter(waiter)
    try:
        if p.after_seq is None:
            # Level-triggered: a task matching now answers at once.
            task, seen = await services.readers.run(
                reads.first_matching_task, p, share=session.reads
            )
            if task is not None:
                return {"task": task, "seq": seen}
        else:
            # Edge-triggered: the first matching change committed after after_seq.
            task, seen = await services.readers.run(
                reads.first_matching_event,
                waiter.flt.matches_json,
                p.project,
                p.after_seq,
                share=session.reads,
            )
            if task is not None:
                return {"task": task, "seq": seen}
        early = waiter.arm(seen)
        if early is not None:
            return {"task": msgspec.Raw(early.task_json), "seq": early.seq}
        with trio.move_on_after(p.timeout_s):
            await waiter.fired.wait()
        if waiter.error is not None:
            raise waiter.error
        if waiter.matched is not None:
            return {"task": msgspec.Raw(waiter.matched.task_json), "seq": waiter.matched.seq}
        return {"task": None, "seq": max(seen, hub.last_seq)}
    finally:
        hub.remove_waiter(waiter)
