"""Acquires that wait (`reservation.acquire` with `wait_s`), in the order they arrived.

A waiting acquire never polls. It tries once; refused, it sleeps until
something that can free a reservation happens in its project (a
`reservation.release`, an event that takes a task out of `claimed`, its
waiters ahead of it leaving) or until the first reservation in its way runs
out of time, and only then tries again. Each try is one writer command, so
`server.info` counts them (`reservations.attempts`): the test that proves
there is no polling counts them, not time.

Waiters that conflict with each other are granted in arrival order
(PROTOCOL.md section 10): a waiter does not even try while an earlier
waiter of another agent wants an overlapping pattern.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from coordd.clock import Clock, parse_time
from coordd.lifecycle import Lifecycle
from coordd.patterns import Pattern, overlap, parse
from coordd.protocol.params import AcquireParams
from coordd.store.reservations import earliest_end
from coordd.store.transaction import LEAVES_CLAIM, CommittedEvent
from coordd_client.protocol.errors import Reserved, ShuttingDown

#: A waiter looks again this long after the reservation in its way expires,
#: so the look finds it expired (liveness is `expires_at > now`).
_AFTER_EXPIRY_S = 0.001


class QueuedAcquire:
    """One waiting acquire: who, where, and what it wants."""

    __slots__ = ("agent", "exclusive", "patterns", "project")

    def __init__(self, p: AcquireParams) -> None:
        self.project = p.project
        self.agent = p.agent
        self.exclusive = True if p.exclusive is None else p.exclusive
        self.patterns: list[Pattern] = [parse(text) for text in dict.fromkeys(p.patterns)]

    def conflicts_with(self, other: QueuedAcquire) -> bool:
        if self.agent == other.agent or not (self.exclusive or other.exclusive):
            return False
        return any(overlap(a, b) for a in self.patterns for b in other.patterns)


class ReservationQueue:
    """Every waiting acquire, per project, in arrival order, with one wake-up per project."""

    def __init__(self, lifecycle: Lifecycle, clock: Clock) -> None:
        self._lifecycle = lifecycle
        self._clock = clock
        self._waiting: dict[str, list[QueuedAcquire]] = {}
        self._changed: dict[str, trio.Event] = {}
        #: Tries made by waiting acquires (server.info): the no-polling proof counts these.
        self.attempts = 0

    @property
    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    # --- what wakes waiters ----------------------------------------------------

    def poke(self, project: str) -> None:
        """Something in `project` may have freed a reservation: wake its waiters."""
        changed = self._changed.pop(project, None)
        if changed is not None:
            changed.set()

    def poke_all(self) -> None:
        """Anything may have changed (team mode: the doorbell reconnected): wake everyone."""
        for project in list(self._changed):
            self.poke(project)

    def on_commit(self, events: list[CommittedEvent]) -> None:
        """Called with every committed batch: a task leaving `claimed` ends its reservations."""
        if not self._waiting:
            return
        for event in events:
            if event.type in LEAVES_CLAIM and event.project in self._waiting:
                self.poke(event.project)

    def shutdown(self) -> None:
        self.poke_all()

    # --- waiting -----------------------------------------------------------------

    async def acquire(
        self,
        p: AcquireParams,
        attempt: Callable[[], Awaitable[Any]],
        task_still_held: Callable[[], Awaitable[None]] | None,
    ) -> Any:
        """Run `attempt` until it grants (its result), or `p.wait_s` runs out (`Reserved`).

        `task_still_held` raises when the acquire's task left `claimed`; it is
        asked whenever a waiter ahead keeps this one from trying.
        """
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        me = QueuedAcquire(p)
        queue = self._waiting.setdefault(p.project, [])
        queue.append(me)
        deadline = trio.current_time() + (p.wait_s or 0)
        refused: Reserved | None = None
        ahead: QueuedAcquire | None = None
        try:
            while True:
                changed = self._changed.setdefault(p.project, trio.Event())
                wake_at = deadline
                ahead = self._first_conflicting_ahead(me)
                if ahead is None:
                    self.attempts += 1
                    try:
                        return await attempt()
                    except Reserved as exc:
                        refused = exc
                        wake_at = min(deadline, self._expiry_deadline(exc))
                elif task_still_held is not None:
                    await task_still_held()
                if trio.current_time() >= deadline:
                    break
                with trio.move_on_at(wake_at):
                    await changed.wait()
                if self._lifecycle.draining:
                    raise ShuttingDown("the daemon is shutting down")
        finally:
            queue.remove(me)
            if not queue:
                del self._waiting[p.project]
            self.poke(p.project)  # a waiter behind this one may go now
        raise refused or self._queued_behind(me, ahead)

    def _first_conflicting_ahead(self, me: QueuedAcquire) -> QueuedAcquire | None:
        for other in self._waiting[me.project]:
            if other is me:
                return None
            if me.conflicts_with(other):
                return other
        return None

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
