"""Slot acquires and landing starts that wait (`wait_s`), first come first served.

The same shape as `reservation_queue`, for a simpler key: a waiter waits on
one name in one project (a slot, or a target's landing queue). It never
polls: it tries once, and refused, sleeps until something that can free a
unit happens in its project (a `slot.released`, a landing finished or
lapsed, a task leaving `claimed`: all seen in committed events), until the
first holder in its way would run out of time (`data.retry_at`), or until
the waiter ahead of it leaves; then it tries again. Each try is one writer
command (`attempts`, in `server.info`).

Slot waiters are served in arrival order: only the first waiter of a name
tries. Landing starts are ordered by the queue in the database (the head is
the oldest live entry), so every one of them may try when woken.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from coordd.clock import Clock, parse_time
from coordd.lifecycle import Lifecycle
from coordd.store.transaction import LEAVES_CLAIM, CommittedEvent
from coordd_wire.errors import Conflict, ShuttingDown

#: Events after which a waiter in the event's project may be granted.
FREES = LEAVES_CLAIM | {"slot.released", "land.landed", "land.failed"}
#: A waiter looks again this long after the holder in its way would lapse.
_AFTER_EXPIRY_S = 0.001


class _Waiter:
    __slots__ = ("wake",)

    def __init__(self) -> None:
        self.wake = trio.Event()


class SlotQueue:
    """Every waiting slot acquire and landing start, per (project, name)."""

    def __init__(self, lifecycle: Lifecycle, clock: Clock) -> None:
        self._lifecycle = lifecycle
        self._clock = clock
        self._waiters: dict[tuple[str, str], list[_Waiter]] = {}
        #: Tries made by waiting calls (server.info): the no-polling proof counts these.
        self.attempts = 0

    @property
    def waiting(self) -> int:
        return sum(len(line) for line in self._waiters.values())

    def poke(self, project: str | None) -> None:
        """Something in `project` (None: anywhere) may have freed a unit: wake its waiters."""
        for (of_project, _), line in self._waiters.items():
            if project is None or of_project == project:
                for waiter in line:
                    waiter.wake.set()

    def on_commit(self, events: list[CommittedEvent]) -> None:
        if not self._waiters:
            return
        for project in {e.project for e in events if e.type in FREES}:
            self.poke(project)

    def shutdown(self) -> None:
        self.poke(None)

    async def wait(
        self,
        key: tuple[str, str],
        wait_s: float,
        attempt: Callable[[], Awaitable[Any]],
        *,
        fifo: bool,
    ) -> Any:
        """Run `attempt` until it answers, or `wait_s` runs out (its last refusal).

        A refusal that carries `data.retry_at` is one to wait on; any other
        error ends the wait at once.
        """
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        me = _Waiter()
        line = self._waiters.setdefault(key, [])
        line.append(me)
        deadline = trio.current_time() + wait_s
        refused: Conflict | None = None
        try:
            while True:
                me.wake = trio.Event()
                wake_at = deadline
                if not fifo or line[0] is me:
                    self.attempts += 1
                    try:
                        return await attempt()
                    except Conflict as exc:
                        if "retry_at" not in exc.data:
                            raise
                        refused = exc
                        wake_at = min(deadline, self._trio_time(exc.data["retry_at"]))
                if trio.current_time() >= deadline:
                    break
                with trio.move_on_at(wake_at):
                    await me.wake.wait()
                if self._lifecycle.draining:
                    raise ShuttingDown("the daemon is shutting down")
        finally:
            first = line[0] is me
            line.remove(me)
            if not line:
                del self._waiters[key]
            elif first:
                line[0].wake.set()
        raise refused or Conflict(
            f"slot {key[1]}: an earlier waiting request is served first; wait longer",
            slot=key[1],
        )

    def _trio_time(self, at: str) -> float:
        remaining = (parse_time(at) - self._clock.now()).total_seconds()
        return trio.current_time() + max(remaining, 0.0) + _AFTER_EXPIRY_S
