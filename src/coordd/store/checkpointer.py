"""Keeping the WAL bounded: a PASSIVE checkpoint off the writer, a RESTART in it."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from coordd.limits import Limits
from coordd.store.connections import open_connection
from coordd_wire.errors import CoordError

log = logging.getLogger(__name__)


class Checkpointer:
    """Keeps the WAL bounded without stalling the writer.

    A PASSIVE checkpoint needs no write lock, so it runs here, on a connection
    of its own in a worker thread, and does the bulk of the copying (and its
    fsync) off the writer's path. But under steady writes a PASSIVE
    checkpoint never reaches the log's last frame, so SQLite never restarts
    the log and the WAL grows without bound (checkpoint starvation). When the
    log passes `Limits.wal_restart_frames`, the writer runs a RESTART checkpoint
    between two batches: little is left to copy, and the next write starts
    the log from its beginning.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def open(self) -> None:
        self._conn = open_connection(self._path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def checkpoint_now(self) -> tuple[int, int, int]:
        assert self._conn is not None
        busy, log_frames, done = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(busy), int(log_frames), int(done)

    async def run(
        self,
        restart_in_writer: Callable[[], Awaitable[object]],
        interval_s: float = Limits.checkpoint_interval_s,
    ) -> None:
        while True:
            await trio.sleep(interval_s)
            try:
                _busy, log_frames, _done = await trio.to_thread.run_sync(self.checkpoint_now)
                if log_frames > Limits.wal_restart_frames:
                    await restart_in_writer()
            except (sqlite3.Error, CoordError) as exc:
                log.warning("checkpoint failed: %s", exc)


def restart_wal(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """Run by the writer between batches: finish the checkpoint and restart the log."""
    busy, log_frames, done = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
    return int(busy), int(log_frames), int(done)
