"""Wall-clock time for lease state, behind one injectable object.

Leases are wall-clock instants stored in the database (they must survive a
restart), so they never use trio's clock; tests inject `ManualClock` to
move time without sleeping.
"""

from __future__ import annotations

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


class ManualClock:
    """A clock that only moves when told to; safe to share with the writer thread."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += timedelta(seconds=seconds)


def format_time(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds, e.g. `2026-11-30T04:26:05.123456Z`.

    The fixed width makes these strings sort like the instants they name,
    which the lease comparisons in SQL rely on.
    """
    # isoformat, not strftime: a third faster, and it pads years below 1000.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
