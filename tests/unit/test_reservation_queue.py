"""The reservation wait queue in isolation: what queueing, a release and a grant cost (issue 29).

The store is faked (an attempt is refused while a test-held pattern overlaps
it), so what is counted is the queue's own work: waiter-vs-waiter pattern
comparisons and tries. The figures are counts, never timings; the timings
are in `bench/stalls.py`.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import trio
import trio.testing

from coordd import reservation_queue
from coordd.clock import SystemClock
from coordd.lifecycle import Lifecycle
from coordd.reservation_queue import ReservationQueue
from coordd_wire import patterns
from coordd_wire.errors import Reserved
from coordd_wire.params import AcquireParams

PROJECT = "/p"


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many pattern-vs-pattern overlap tests the queue itself runs."""
    count = [0]

    def counted(a: patterns.Pattern, b: patterns.Pattern) -> bool:
        count[0] += 1
        return patterns.overlap(a, b)

    monkeypatch.setattr(reservation_queue, "overlap", counted)
    yield count


class FakeStore:
    """Refuses an acquire while one of `held` overlaps it; counts tries per agent."""

    def __init__(self, held: list[str]) -> None:
        self.held = [patterns.parse(text) for text in held]
        self.tries: dict[str, int] = {}
        self.granted: list[str] = []

    def attempt(self, p: AcquireParams) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            self.tries[p.agent] = self.tries.get(p.agent, 0) + 1
            await trio.lowlevel.checkpoint()
            wanted = [patterns.parse(text) for text in p.patterns]
            if any(patterns.overlap(h, w) for h in self.held for w in wanted):
                raise Reserved("reserved", conflicts=[])
            self.granted.append(p.agent)
            return p.agent

        return run


def params(agent: str, wanted: list[str], wait_s: float = 600) -> AcquireParams:
    return AcquireParams(agent=agent, project=PROJECT, patterns=wanted, wait_s=wait_s)


async def test_disjoint_waiters_are_never_compared_with_each_other(
    comparisons: list[int],
) -> None:
    """20 waiters x 32 patterns of their own, all behind one `**`: queueing them and
    granting them all compares no waiter with another (today: 190 pairs x 1,024
    pattern pairs while queueing, as many again at the release)."""
    queue = ReservationQueue(Lifecycle(), SystemClock())
    store = FakeStore(["**"])
    waiters, per = 20, 32
    async with trio.open_nursery() as nursery:
        for n in range(waiters):
            wanted = [f"w{n}/mod{j}/**" if j % 2 else f"w{n}/f{j}.py" for j in range(per)]
            p = params(f"a{n}", wanted)
            nursery.start_soon(queue.acquire, p, store.attempt(p), None)
        await trio.testing.wait_all_tasks_blocked()
        assert queue.waiting == waiters
        assert comparisons[0] == 0
        assert queue.attempts == waiters  # one refused try each
        store.held = []
        queue.poke(PROJECT)
    assert sorted(store.granted) == sorted(f"a{n}" for n in range(waiters))
    assert comparisons[0] == 0
    assert queue.attempts == 2 * waiters


async def test_a_grant_wakes_only_the_waiters_it_held_up() -> None:
    """Ten agents queue for one file behind a holder; ten others wait for files the holder
    keeps. Releasing the file grants the ten in arrival order, each after exactly one
    try; the others try once at the release and are not woken by the ten grants
    (today: every grant woke them all, 100 more tries)."""
    queue = ReservationQueue(Lifecycle(), SystemClock())
    store = FakeStore(["db/schema.sql", "kept/**"])
    chain = [f"c{n}" for n in range(10)]
    others = [f"o{n}" for n in range(10)]
    async with trio.open_nursery() as nursery:
        for agent in chain:
            p = params(agent, ["db/schema.sql"])
            nursery.start_soon(queue.acquire, p, store.attempt(p), None)
            await trio.testing.wait_all_tasks_blocked()
        for n, agent in enumerate(others):
            p = params(agent, [f"kept/{n}.py"])
            nursery.start_soon(queue.acquire, p, store.attempt(p), None)
        await trio.testing.wait_all_tasks_blocked()
        assert store.tries == {"c0": 1, **dict.fromkeys(others, 1)}  # c1..c9 wait behind c0
        store.held = [patterns.parse("kept/**")]
        queue.poke(PROJECT)
        await trio.testing.wait_all_tasks_blocked()
        assert store.granted == chain
        assert store.tries == {"c0": 2, **dict.fromkeys(chain[1:], 1), **dict.fromkeys(others, 2)}
        assert queue.waiting == len(others)
        nursery.cancel_scope.cancel()
    assert queue.waiting == 0


async def test_a_task_bound_waiter_behind_another_still_looks_at_its_task() -> None:
    """A waiter queued behind a conflicting one is woken by a task event to check its task."""
    queue = ReservationQueue(Lifecycle(), SystemClock())
    store = FakeStore(["x"])
    looks = [0]

    async def task_still_held() -> None:
        looks[0] += 1
        if looks[0] > 1:
            raise Reserved("the task left claimed", conflicts=[])

    first, second = params("a", ["x"]), params("b", ["x"])
    outcome: list[BaseException] = []

    async def second_waits() -> None:
        try:
            await queue.acquire(second, store.attempt(second), task_still_held)
        except Reserved as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(queue.acquire, first, store.attempt(first), None)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(second_waits)
        await trio.testing.wait_all_tasks_blocked()
        assert looks[0] == 1 and "b" not in store.tries
        queue.poke(PROJECT)  # what a task leaving `claimed` does
        await trio.testing.wait_all_tasks_blocked()
        assert [str(exc) for exc in outcome] == ["the task left claimed"]
        assert queue.waiting == 1
        nursery.cancel_scope.cancel()


def test_each_waiter_is_held_by_the_earliest_conflicting_waiter_ahead() -> None:
    """Many waiters over overlapping prefixes of different depths: each one's blocker
    is the earliest earlier waiter (of another agent) it conflicts with, found by
    comparing with every waiter ahead. Each prefix's stream of the index must read
    its own bucket: read through the last bucket of the loop, this raised IndexError
    (buckets of different lengths) or named another blocker."""
    rng = random.Random(58)
    dirs = ["", "a/", "a/b/", "a/b/c/", "b/", "b/c/", "c/"]
    for _ in range(40):
        queue = reservation_queue._ProjectQueue()
        waiters: list[reservation_queue.QueuedAcquire] = []
        for seq in range(30):
            wanted = [
                rng.choice(dirs) + rng.choice(["**", "x.py", "*.py", "y/**"])
                for _ in range(rng.randint(1, 3))
            ]
            me = reservation_queue.QueuedAcquire(params(f"a{rng.randint(0, 6)}", wanted), seq)
            expected = next((w for w in waiters if me.conflicts_with(w)), None)
            queue.add(me)
            assert me.blocker is expected, (wanted, [w.patterns for w in waiters])
            waiters.append(me)
