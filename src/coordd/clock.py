"""Wall-clock time for lease state, behind one injectable object.

Leases are wall-clock instants stored in the database (they must survive a
restart), so they never use trio's clock; tests inject `ManualClock` to
move time without sleeping.
"""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current UTC time (timezone-aware)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class OffsetClock:
    """The system clock shifted by `COORDD_CLOCK_OFFSET_S` seconds (a documented test hook).

    On SQLite it moves everything the daemon's clock decides; in team mode
    leases are judged by the database's clock, so it moves nothing that matters.
    """

    def __init__(self, base: Clock, offset_s: float) -> None:
        self._base = base
        self._offset = timedelta(seconds=offset_s)

    def now(self) -> datetime:
        return self._base.now() + self._offset


class StoreClock:
    """The database's clock, estimated between writes (team mode).

    Every write group takes its instant from PostgreSQL; `observe` keeps
    the difference from this machine's clock, so reads that compare times
    (reservation checks, an agent's live holdings) and waiters' timers
    agree with the store, not with a skewed local clock.
    """

    def __init__(self, base: Clock) -> None:
        self._base = base
        self._skew = timedelta(0)

    def observe(self, store_now: datetime) -> None:
        self._skew = store_now - self._base.now()

    def now(self) -> datetime:
        return self._base.now() + self._skew


class ManualClock:
    """A clock that only moves when told to; safe to share with the writer thread."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)
        self._advanced = 0.0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            self._advanced += seconds

    def advanced_s(self) -> float:
        """Seconds moved so far: how in-process team-mode tests shift the store's time."""
        with self._lock:
            return self._advanced


def format_time(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds, e.g. `2026-11-30T04:26:05.123456Z`.

    The fixed width makes these strings sort like the instants they name,
    which the lease comparisons in SQL rely on.
    """
    # isoformat, not strftime: a third faster, and it pads years below 1000.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def time_left(until: str, now: str) -> str:
    """How long from `now` to `until` (both as `format_time` writes them), for a refusal's
    text: "in 40 s", "in 9 min", "in 2.5 h". A model reading "until 2026-...Z" seldom
    knows what time it is; "" when either is not in that form."""
    try:
        seconds = (parse_time(until) - parse_time(now)).total_seconds()
    except ValueError:
        return ""
    if seconds < 90:
        return f"in {max(0, math.ceil(seconds))} s"
    if seconds < 2 * 3600:
        return f"in {round(seconds / 60)} min"
    return f"in {seconds / 3600:.1f} h"
