"""The connections the daemon is not reading because their clients are not reading.

A connection stops taking requests while its client is behind on reading its
answers (`Outbox.reading_blocked`). `server.info.stalled` reports how many
connections are stopped so and how many answers they are owed, so an
operator (or a test) sees the bound the daemon holds them to as a count,
not as how long a client's writes happened to block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from coordd.outbox import Outbox


class Stalls:
    """Trio thread only: the outboxes of connections waiting for their client to read."""

    def __init__(self) -> None:
        self._outboxes: set[Outbox] = set()

    @contextmanager
    def stalled(self, outbox: Outbox) -> Iterator[None]:
        """While its connection waits to read again."""
        self._outboxes.add(outbox)
        try:
            yield
        finally:
            self._outboxes.discard(outbox)

    @property
    def connections(self) -> int:
        return len(self._outboxes)

    @property
    def answers(self) -> int:
        """Answers owed to the stalled connections: requests read, answers not yet written."""
        return sum(outbox.owed for outbox in self._outboxes)
