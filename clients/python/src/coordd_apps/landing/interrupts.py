"""Turn SIGINT, SIGTERM and SIGHUP into an exception the lander answers, or defer them.

A lander that simply died on Ctrl-C left its landing `landing` (or `queued`)
and the target's landing slot held until its lease lapsed, one `--ttl` later:
every lander behind it waited that long. So while `coord land` runs, these
signals raise `Interrupted` in the main thread instead; the lander then stops
its check (its process group dies with the watchdog's pipe, `check.py`), tells
the daemon the landing failed, and exits 128 + the signal's number.

Once the target's ref may move, an interrupt must not make a landing that
happened look failed: from just before the compare-and-swap until the landing
is recorded, the signals are only noted (`deferred`), and the lander finishes
first; one noted before the swap could begin (while waiting for the target's
journal lock) still stops it there (`Guard.raise_caught`). The git commands
it runs meanwhile may die of a Ctrl-C sent to the whole group; the move copes
with that as with any git command cut short, and says whether the target moved.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals a lander answers: Ctrl-C, `kill`, and a closed terminal.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A signal asked the lander to stop (a BaseException, as KeyboardInterrupt is, so
    no `except Exception` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class Guard:
    """The lander's signal handling; `caught` is the first signal received, if any."""

    def __init__(self) -> None:
        self.caught: int | None = None
        self._deferring = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.caught is None
        if first:
            self.caught = signum
        if first and not self._deferring:
            raise Interrupted(signum)
        # Deferred, or a second signal while the first is being answered: noted only.

    def defer(self) -> None:
        """From now to the lander's end, signals are only noted (`caught` says so): the
        target's ref may move from here on, and the lander records what happened first."""
        self._deferring = True

    def raise_caught(self) -> None:
        """Raise `Interrupted` for a signal noted while deferring: called just before the
        target's ref may move (the journal lock can take a while to get), a signal that
        came before then still stops the landing, untouched."""
        if self.caught is not None:
            raise Interrupted(self.caught)

    @property
    def name(self) -> str:
        return "" if self.caught is None else signal.Signals(self.caught).name


@contextmanager
def catching() -> Iterator[Guard]:
    """Handle `SIGNALS` with a `Guard` until the end (in the main thread only: elsewhere
    Python runs no handler, and the guard never fires)."""
    guard = Guard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    before = {signum: signal.signal(signum, guard._handle) for signum in SIGNALS}
    try:
        yield guard
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
