"""The lander's daemon calls, each surviving a daemon restart.

A landing outlives a daemon restart easily: its check may run for minutes,
and the lease (`ttl_s`, 600 s by default) is longer than a restart takes.
So each call of the lander is retried, on a fresh connection, while the
daemon is away (the socket refuses, the connection breaks, the daemon says
it is shutting down or is overloaded), for a bounded time. Every call
retried this way is idempotent on the daemon (docs/PROTOCOL-1.2.md section
14): `land.enqueue` renews the caller's open entry of the branch,
`land.start` of an entry already `landing` returns it, a repeated
`land.finish` returns the entry it finished, a repeated `task.complete`
of a task done by the caller returns it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from coordd_wire.errors import DaemonUnavailable, Overloaded, ShuttingDown

R = TypeVar("R")

#: The errors that mean "the daemon is away for now", not "the daemon said no".
AWAY = (DaemonUnavailable, ShuttingDown, Overloaded)
#: Seconds between attempts while the daemon is away (doubling up to the cap).
FIRST_PAUSE_S = 0.1
MAX_PAUSE_S = 2.0


class DaemonGone(DaemonUnavailable):
    """The daemon stayed away for the whole retry window (a `DaemonUnavailable`, so the
    callers that report those report it; no retry loop retries it again)."""


def retrying(what: str, call: Callable[[], R], within_s: float) -> R:
    """`call()`, again and again while the daemon is away, for at most `within_s` seconds.

    The client reconnects by itself on its next call after a broken
    connection, so retrying is calling again. Any answer of the daemon's,
    an error included, ends the retries: it is the daemon's word.
    """
    deadline = time.monotonic() + within_s
    pause = FIRST_PAUSE_S
    while True:
        try:
            return call()
        except AWAY as exc:
            if time.monotonic() + pause > deadline:
                raise DaemonGone(
                    f"{what}: the daemon did not answer for {within_s:g} s"
                    f" (last: {exc.message}); is coordd running?"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)
