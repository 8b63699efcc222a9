"""Acquires that wait (`reservation.acquire` with `wait_s`), in the order they arrived.

A waiting acquire never polls. It tries once; refused, it sleeps until
something that can free a reservation happens in its project (a
`reservation.release`, an event that takes a task out of `claimed`, the
waiter ahead of it leaving) or until the first reservation in its way runs
out of time, and only then tries again. Each try is one writer command, so
`server.info` counts them (`reservations.attempts`): the test that proves
there is no polling counts them, not time.

Waiters that conflict with each other are granted in arrival order
(PROTOCOL.md section 10): a waiter does not even try while an earlier
waiter of another agent wants an overlapping pattern.

What it costs, on the trio thread (issue 29, item 6). Two waiters' patterns
can only overlap when the literal prefix of one (the segments before its
first wildcard, `patterns.Pattern.prefix`) leads the other's: a path both
cover starts with both. So each project indexes its waiters by those
prefixes, and a waiter is compared only with the earlier waiters that have
a related prefix, in arrival order, until the first that conflicts: its
*blocker*. Conflicts between two waiters never change, so that is decided
once, when it arrives, not at every wake-up; when a blocker leaves, only
the waiters it blocked look again, each from the blocker's place on. A
release or a task event wakes only the waiters that may try (nobody ahead
in the way; or a task-bound one, which must see whether its task is still
held); a second poke of the same project before they have run costs nothing.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_left, bisect_right, insort
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import trio

from coordd.clock import Clock, parse_time
from coordd.lifecycle import Lifecycle
from coordd.store.reservations import earliest_end
from coordd.store.transaction import LEAVES_CLAIM, CommittedEvent
from coordd_wire.errors import Reserved, ShuttingDown
from coordd_wire.params import AcquireParams
from coordd_wire.patterns import Pattern, overlap, parse, prefix_upper_bound

R = TypeVar("R")

#: A waiter looks again this long after the reservation in its way expires,
#: so the look finds it expired (liveness is `expires_at > now`).
_AFTER_EXPIRY_S = 0.001


def _related(a: str, b: str) -> bool:
    """Could patterns with these literal prefixes cover a common path? (One leads the other.)"""
    return a.startswith(b) or b.startswith(a)


def _leading_runs(prefix: str) -> Iterator[str]:
    """ "", then each leading run of a prefix's segments, up to the prefix itself."""
    yield ""
    end = prefix.find("/")
    while end != -1:
        yield prefix[: end + 1]
        end = prefix.find("/", end + 1)


def _between(bucket: list[int], lo: int, hi: int) -> Iterator[int]:
    """`bucket[lo:hi]`, lazily, bound to this bucket (a generator expression in a loop
    would look its loop variable up when it runs, and read the loop's last bucket)."""
    for i in range(lo, hi):
        yield bucket[i]


class QueuedAcquire:
    """One waiting acquire: who, where, what it wants, and who is in its way."""

    __slots__ = (
        "agent",
        "blocker",
        "blocking",
        "by_prefix",
        "exclusive",
        "patterns",
        "project",
        "seq",
        "wake",
    )

    def __init__(self, p: AcquireParams, seq: int) -> None:
        self.project = p.project
        self.agent = p.agent
        self.exclusive = True if p.exclusive is None else p.exclusive
        self.patterns: list[Pattern] = [parse(text) for text in dict.fromkeys(p.patterns)]
        #: Arrival order within the daemon.
        self.seq = seq
        #: Its patterns grouped by literal prefix: the keys of the project's index.
        self.by_prefix: dict[str, list[Pattern]] = {}
        for pattern in self.patterns:
            self.by_prefix.setdefault(pattern.prefix, []).append(pattern)
        #: The earliest waiter ahead that conflicts with this one (it does not try meanwhile).
        self.blocker: QueuedAcquire | None = None
        #: The waiters behind whose blocker this one is.
        self.blocking: set[QueuedAcquire] = set()
        self.wake = trio.Event()

    def conflicts_with(self, other: QueuedAcquire) -> bool:
        if self.agent == other.agent or not (self.exclusive or other.exclusive):
            return False
        return any(
            overlap(a, b)
            for mine_prefix, mine in self.by_prefix.items()
            for theirs_prefix, theirs in other.by_prefix.items()
            if _related(mine_prefix, theirs_prefix)
            for a in mine
            for b in theirs
        )


class _ProjectQueue:
    """One project's waiters in arrival order, indexed by their patterns' literal prefixes."""

    def __init__(self) -> None:
        self.waiters: dict[int, QueuedAcquire] = {}
        #: prefix -> the seqs of the waiters with a pattern of that prefix, ascending.
        self._buckets: dict[str, list[int]] = {}
        #: The prefixes in `_buckets`, sorted: the ones a prefix leads are a range.
        self._keys: list[str] = []
        #: Waiters a poke of the project wakes (those that may try, or must check a task).
        self.sleeping: set[QueuedAcquire] = set()

    def add(self, me: QueuedAcquire) -> None:
        """Queue `me` behind the earliest waiter ahead that conflicts with it, if any."""
        me.blocker = self.first_conflict(me, after=-1)
        if me.blocker is not None:
            me.blocker.blocking.add(me)
        self.waiters[me.seq] = me
        for prefix in me.by_prefix:
            bucket = self._buckets.get(prefix)
            if bucket is None:
                self._buckets[prefix] = [me.seq]
                insort(self._keys, prefix)
            else:
                bucket.append(me.seq)  # seqs only grow

    def leave(self, me: QueuedAcquire) -> None:
        """`me` is gone: the waiters it held up find their next blocker, or are woken."""
        del self.waiters[me.seq]
        self.sleeping.discard(me)
        for prefix in me.by_prefix:
            bucket = self._buckets[prefix]
            del bucket[bisect_left(bucket, me.seq)]
            if not bucket:
                del self._buckets[prefix]
                del self._keys[bisect_left(self._keys, prefix)]
        if me.blocker is not None:
            me.blocker.blocking.discard(me)
        for behind in sorted(me.blocking, key=lambda w: w.seq):
            # Everyone before `me` was already found not to conflict with `behind`.
            behind.blocker = self.first_conflict(behind, after=me.seq)
            if behind.blocker is not None:
                behind.blocker.blocking.add(behind)
            else:
                behind.wake.set()
        me.blocking.clear()

    def first_conflict(self, me: QueuedAcquire, after: int) -> QueuedAcquire | None:
        """The earliest waiter that arrived after seq `after` and before `me` and conflicts."""
        keys: set[str] = set()
        for prefix in me.by_prefix:
            keys.update(run for run in _leading_runs(prefix) if run in self._buckets)
            if prefix:
                lo = bisect_left(self._keys, prefix)
                hi = bisect_left(self._keys, prefix_upper_bound(prefix), lo)
                keys.update(self._keys[lo:hi])
            else:
                keys.update(self._keys)
        streams = []
        for key in keys:
            bucket = self._buckets[key]
            lo = bisect_right(bucket, after)
            hi = bisect_left(bucket, me.seq, lo)
            if lo < hi:
                streams.append(_between(bucket, lo, hi))
        seen: set[int] = set()
        for seq in heapq.merge(*streams):
            if seq in seen:
                continue
            seen.add(seq)
            other = self.waiters[seq]
            if me.conflicts_with(other):
                return other
        return None

    def poke(self) -> None:
        sleepers, self.sleeping = self.sleeping, set()
        for waiter in sleepers:
            waiter.wake.set()


class ReservationQueue:
    """Every waiting acquire, per project, in arrival order."""

    def __init__(self, lifecycle: Lifecycle, clock: Clock) -> None:
        self._lifecycle = lifecycle
        self._clock = clock
        self._projects: dict[str, _ProjectQueue] = {}
        self._seqs = itertools.count()
        #: Tries made by waiting acquires (server.info): the no-polling proof counts these.
        self.attempts = 0

    @property
    def waiting(self) -> int:
        return sum(len(queue.waiters) for queue in self._projects.values())

    # --- what wakes waiters ----------------------------------------------------

    def poke(self, project: str) -> None:
        """Something in `project` may have freed a reservation: wake its waiters that may try."""
        queue = self._projects.get(project)
        if queue is not None:
            queue.poke()

    def poke_all(self) -> None:
        """Anything may have changed (team mode: the doorbell reconnected): wake everyone."""
        for queue in self._projects.values():
            queue.poke()

    def on_commit(self, events: list[CommittedEvent]) -> None:
        """Called with every committed batch: a task leaving `claimed` ends its reservations."""
        if not self._projects:
            return
        for event in events:
            if event.type in LEAVES_CLAIM and event.project in self._projects:
                self.poke(event.project)

    def shutdown(self) -> None:
        for queue in self._projects.values():
            for waiter in queue.waiters.values():
                waiter.wake.set()

    # --- waiting -----------------------------------------------------------------

    async def acquire(
        self,
        p: AcquireParams,
        attempt: Callable[[], Awaitable[R]],
        task_still_held: Callable[[], Awaitable[None]] | None,
    ) -> R:
        """Run `attempt` until it grants (its result), or `p.wait_s` runs out (`Reserved`).

        `task_still_held` raises when the acquire's task left `claimed`; it is
        asked whenever a waiter ahead keeps this one from trying.
        """
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        me = QueuedAcquire(p, next(self._seqs))
        queue = self._projects.get(p.project)
        if queue is None:
            queue = self._projects[p.project] = _ProjectQueue()
        queue.add(me)
        deadline = trio.current_time() + (p.wait_s or 0)
        refused: Reserved | None = None
        ahead: QueuedAcquire | None = None
        try:
            while True:
                me.wake = trio.Event()  # set by what happens from here on
                wake_at = deadline
                ahead = me.blocker
                if ahead is None:
                    queue.sleeping.add(me)
                    self.attempts += 1
                    try:
                        return await attempt()
                    except Reserved as exc:
                        refused = exc
                        wake_at = min(deadline, self._expiry_deadline(exc))
                elif task_still_held is not None:
                    queue.sleeping.add(me)  # a task event must wake it to look
                    await task_still_held()
                if trio.current_time() >= deadline:
                    break
                with trio.move_on_at(wake_at):
                    await me.wake.wait()
                queue.sleeping.discard(me)
                if self._lifecycle.draining:
                    raise ShuttingDown("the daemon is shutting down")
        finally:
            queue.leave(me)
            if not queue.waiters:
                del self._projects[p.project]
        raise refused or self._queued_behind(me, ahead)

    def _expiry_deadline(self, exc: Reserved) -> float:
        """The trio time at which the first reservation in the way has run out."""
        ends = earliest_end(exc.data.get("conflicts", []))
        if ends is None:
            return float("inf")
        remaining = (parse_time(ends) - self._clock.now()).total_seconds()
        return trio.current_time() + max(remaining, 0.0) + _AFTER_EXPIRY_S

    @staticmethod
    def _queued_behind(me: QueuedAcquire, ahead: QueuedAcquire | None) -> Reserved:
        """Timed out without a try: every try would have jumped an earlier waiter."""
        who = f" of {ahead.agent}" if ahead is not None else ""
        wanted = ", ".join(repr(p.text) for p in ahead.patterns) if ahead else ""
        return Reserved(
            f"reserved: an earlier waiting request{who} for {wanted} overlaps yours and is"
            " served first; work elsewhere, or wait longer",
            conflicts=[],
            queued_behind={"agent": ahead.agent, "patterns": [p.text for p in ahead.patterns]}
            if ahead is not None
            else None,
        )
