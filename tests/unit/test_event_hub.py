"""EventHub in isolation: fan-out to subscriptions, the lag bound, waiters by project, shutdown."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from coordd.events import EventHub, Waiter, WaitFilter
from coordd.lifecycle import Lifecycle
from coordd.limits import Limits
from coordd.store.transaction import CommittedEvent
from coordd_wire.errors import ShuttingDown
from coordd_wire.params import WaitParams


def event(
    seq: int, project: str = "p", kind: str = "task", type_: str = "task.posted"
) -> CommittedEvent:
    task = {"project": project, "kind": kind, "state": "pending", "title": f"t{seq}", "tags": []}
    task_json = json.dumps(task)
    return CommittedEvent(seq, type_, project, task_json, f'{{"seq":{seq}}}'.encode())


def test_subscriptions_get_what_they_asked_for_in_order() -> None:
    hub = EventHub(Lifecycle())
    everything = hub.subscribe(None, None)
    one_project = hub.subscribe("p", None)
    claims_only = hub.subscribe(None, ["task.claimed"])
    hub.publish([event(1), event(2, project="q"), event(3, type_="task.claimed")])
    assert [e.seq for e in everything.backlog] == [1, 2, 3]
    assert [e.seq for e in one_project.backlog] == [1, 3]
    assert [e.seq for e in claims_only.backlog] == [3]
    assert hub.last_seq == 3 and hub.subscription_count == 3


def test_a_lagging_subscriber_is_closed_and_its_backlog_freed() -> None:
    hub = EventHub(Lifecycle())
    slow = hub.subscribe(None, None)
    hub.publish([event(n) for n in range(1, Limits.subscriber_lag_events + 2)])
    assert slow.closed == "lagged" and not slow.backlog
    hub.unsubscribe(slow, "lagged")
    assert hub.subscription_count == 0


def test_the_oldest_subscriber_position_holds_back_retention() -> None:
    hub = EventHub(Lifecycle())
    hub.publish([event(1), event(2)])
    assert hub.oldest_subscriber_position() == 2  # nobody is owed anything
    sub = hub.subscribe(None, None)
    sub.last_delivered = 1
    assert hub.oldest_subscriber_position() == 1


def waiter(**filters: object) -> Waiter:
    return Waiter(WaitFilter(WaitParams(timeout_s=1, **filters)))  # type: ignore[arg-type]


def test_waiters_collect_early_events_until_armed_then_fire_once() -> None:
    hub = EventHub(Lifecycle())
    bugs = waiter(project="p", kind="bug")
    hub.add_waiter(bugs)
    hub.publish([event(1, kind="bug"), event(2, kind="task")])
    assert [e.seq for e in bugs.early] == [1]  # not armed yet: buffered, not fired
    assert bugs.arm(0) is not None and bugs.arm(1) is None
    hub.publish([event(3, project="q", kind="bug")])  # another project: not even looked at
    assert not bugs.fired.is_set()
    hub.publish([event(4, kind="bug")])
    assert bugs.fired.is_set() and bugs.matched is not None and bugs.matched.seq == 4
    assert hub.waiter_count == 0  # a fired waiter is removed


def test_shutdown_answers_waiters_and_closes_subscriptions_and_refuses_new_ones() -> None:
    lifecycle = Lifecycle()
    hub = EventHub(lifecycle)
    pending = waiter()
    hub.add_waiter(pending)
    sub = hub.subscribe(None, None)
    hub.shutdown()
    assert lifecycle.draining
    assert isinstance(pending.error, ShuttingDown) and pending.fired.is_set()
    assert sub.closed == "shutdown" and hub.waiter_count == 0 and hub.subscription_count == 0
    with pytest.raises(ShuttingDown):
        hub.add_waiter(waiter())
    with pytest.raises(ShuttingDown):
        hub.subscribe(None, None)


async def test_a_large_fan_out_goes_out_in_slices_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 item 14: 500 events past 200 waiters that match none of them (100,000
    filter checks). `publish` itself does one slice; the delivery task does the rest a
    slice at a time, other tasks running between slices, and every subscriber and
    waiter still sees seq order, a batch published meanwhile included."""
    checks = [0]
    plain = WaitFilter.matches

    def counted(self: WaitFilter, *args: Any) -> bool:
        checks[0] += 1
        return plain(self, *args)

    monkeypatch.setattr(WaitFilter, "matches", counted)
    hub = EventHub(Lifecycle(), slice_deliveries=1000)
    sub = hub.subscribe("p", None)
    for n in range(200):
        waiter = Waiter(WaitFilter(WaitParams(timeout_s=60, title_contains=f"never {n}")))
        hub.add_waiter(waiter)
        waiter.arm(0)
    last = Waiter(WaitFilter(WaitParams(timeout_s=60, project="p", title_contains="t501")))
    hub.add_waiter(last)
    last.arm(0)
    others_ran = [0]

    async def another_task() -> None:
        while not last.fired.is_set():
            others_ran[0] += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub.run_deliveries)
        await trio.testing.wait_all_tasks_blocked()
        hub.publish([event(n) for n in range(1, 501)])
        assert checks[0] <= 1000 + 203  # one slice, then the trio thread is free
        assert hub.last_seq < 500
        hub.publish([event(501)])  # queued behind the rest
        nursery.start_soon(another_task)
        await last.fired.wait()
        nursery.cancel_scope.cancel()
    assert checks[0] == 500 * 201 + 200 + 1
    assert hub.slices >= 90
    assert others_ran[0] >= 50
    assert [e.seq for e in sub.backlog] == list(range(1, 502))
    assert last.matched is not None and last.matched.seq == 501
    assert hub.last_seq == 501
