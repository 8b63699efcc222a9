"""Read connections: a pool for scans, and one inline connection for point reads.

Reads that may scan run off the event loop on a small pool of `query_only`
connections, each inside one short transaction so a scan sees one snapshot
and never pins the WAL for longer than one RPC.

Point reads (one row by primary key) run inline on the trio thread instead,
on a connection of their own that never waits for a lock: measured on the
2-core bench machine, the hop to a worker thread and back cost the daemon
about 760 us of CPU per `task.get` against tens of microseconds for the
lookup itself. A WAL reader almost never meets SQLITE_BUSY (only while a
connection recovers the WAL or the log is being reset); when it does, the
read is retried on the pool, which waits for the lock off the event loop.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import trio

from coordd.limits import Limits
from coordd.store.connections import is_busy, open_connection

T = TypeVar("T")


class Readers(ABC):
    """What handlers read through, on either store: a bounded pool, shared fairly.

    Each store says how one read runs (`_run_pooled`, inside `_slot()`, which
    holds one of the `size` connections) and whether a point read can skip the
    thread hop.

    How fairly the pool was shared is counted as it is handed out, and
    reported by `server.info.readers` (trio thread only):

    - `admitted`: reads given a pool connection since the daemon started;
    - `longest_queue_ahead`: the most reads already waiting for a pool
      connection when one more read asked for one. The queue is served first
      come, first served (trio's CapacityLimiter), so these are the reads
      served before it, and since one client connection has at most its share
      in the pool, their number is bounded by the shares of the connections
      reading at once, never by how many reads one connection sent;
    - `most_held_by_one`: the most pool connections, held or waited for, that
      one client connection had at once: at most its share.
    """

    def __init__(self, size: int) -> None:
        self._limiter = trio.CapacityLimiter(size)
        self.size = size
        self.admitted = 0
        self.longest_queue_ahead = 0
        self.most_held_by_one = 0

    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    async def point_read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(db, *args)`, one indexed single-row statement."""

    @abstractmethod
    async def _run_pooled(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """Run `fn(db, *args)` off the event loop inside one read transaction."""

    async def run(
        self, fn: Callable[..., T], *args: Any, share: trio.CapacityLimiter | None = None
    ) -> T:
        """Run `fn(db, *args)` in a worker thread inside one read transaction.

        `share` is the caller's connection's own limiter: taken before a pool
        slot, it caps how many of the pool's connections (and places in its
        FIFO queue) one client can hold, so a flood of scans on one connection
        leaves room for everybody else's reads.
        """
        if share is None:
            return await self._run_pooled(fn, args)
        async with share:
            self.most_held_by_one = max(self.most_held_by_one, int(share.borrowed_tokens))
            return await self._run_pooled(fn, args)

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """Hold one of the pool's `size` connections, taken in arrival order."""
        ahead = self._limiter.statistics().tasks_waiting
        self.longest_queue_ahead = max(self.longest_queue_ahead, ahead)
        async with self._limiter:
            self.admitted += 1
            yield


class ReaderPool(Readers):
    def __init__(self, path: Path, size: int = Limits.reader_pool_size) -> None:
        super().__init__(size)
        self._path = path
        self._size = size
        self._free: list[sqlite3.Connection] = []
        self._inline: sqlite3.Connection | None = None

    def open(self) -> None:
        """Open after the writer, which has already recovered and migrated the file."""
        self._free = [open_connection(self._path, query_only=True) for _ in range(self._size)]
        self._inline = open_connection(self._path, query_only=True)
        # Never block the event loop on a lock: a busy point read goes to the pool.
        self._inline.execute("PRAGMA busy_timeout = 0")

    def close(self) -> None:
        for conn in self._free:
            conn.close()
        self._free = []
        if self._inline is not None:
            self._inline.close()
            self._inline = None

    async def point_read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(connection, *args)`, one indexed single-row statement, on the trio thread.

        Only for reads whose cost is bounded by one primary-key lookup: they
        take microseconds, less than the thread hop would.
        """
        assert self._inline is not None, "open() first"
        try:
            return fn(self._inline, *args)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        return await self._run_pooled(fn, args)

    async def _run_pooled(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        async with self._slot():
            conn = self._free.pop()
            try:
                return await trio.to_thread.run_sync(_in_read_transaction, conn, fn, args)
            finally:
                self._free.append(conn)


def _in_read_transaction(
    conn: sqlite3.Connection, fn: Callable[..., T], args: tuple[Any, ...]
) -> T:
    conn.execute("BEGIN")
    try:
        return fn(conn, *args)
    finally:
        conn.execute("COMMIT")
