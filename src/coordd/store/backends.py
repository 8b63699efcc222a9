"""The store a daemon serves, chosen once: the embedded SQLite file, or the team's PostgreSQL.

The daemon's start and stop are the same on either store; what one has and
the other lacks (the file lock and the checkpointer; the node's name, the
doorbell, the log follower and the heartbeat) sits behind the hooks of one
`Backend`, called in this order:

    lock -> (the writer opens) -> open -> served -> start -> (serving) verify
    ... serve ... -> (the writer stops) -> stop -> release

`open_backend` picks it from the config. Only a `postgresql://` store
imports the team's modules (and psycopg with them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coordd.clock import Clock, SystemClock
from coordd.config import DaemonConfig
from coordd.platform.lockfile import DatabaseLock
from coordd.store.backend import Backend, Board
from coordd.store.checkpointer import Checkpointer, restart_wal
from coordd.store.readers import ReaderPool, Readers
from coordd.store.store_check import IntegrityCheck
from coordd.store.transaction import CommittedEvent
from coordd.store.write_store import SqliteWriteStore, WriteStore
from coordd.store.writer import Writer
from coordd_wire.record import SQLITE_PREFIX
from coordd_wire.server_info import StoreCheck

if TYPE_CHECKING:
    from coordd.store.postgres.presence import Peer


def open_backend(config: DaemonConfig, clock: Clock | None, board: Board) -> Backend:
    """The one place the store is chosen."""
    if config.store_dsn is None:
        return SqliteBackend(config, clock or SystemClock(), board)
    from coordd.store.postgres.backend import TeamMode

    return TeamMode(config, clock or SystemClock(), board)


class SqliteBackend:
    """The embedded store: one file, its flock, a checkpointer that keeps its WAL small."""

    name = "sqlite"
    on_instant: Callable[[datetime], None] | None = None

    def __init__(self, config: DaemonConfig, clock: Clock, board: Board) -> None:
        self._board = board
        self._path = config.db_path
        self.db_path: Path | None = config.db_path
        self.location = str(config.db_path)
        self.recorded = SQLITE_PREFIX + str(config.db_path)
        self.node = config.node_name
        self.clock = clock
        self.write_store: WriteStore = SqliteWriteStore(
            config.db_path,
            durability=config.durability,
            clock=clock,
            max_pages=config.max_db_pages,
        )
        self.readers: Readers = ReaderPool(config.db_path)
        self._checkpointer = Checkpointer(config.db_path)
        self._lock = DatabaseLock(config.db_path)
        self._check = IntegrityCheck(config.db_path)

    def lock(self) -> None:
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock.acquire()

    async def open(self, last_committed_seq: int) -> None:
        self.readers.open()
        self._checkpointer.open()

    def served(self, socket_path: Path) -> None:
        self._lock.record_socket(socket_path)

    def on_commit(self, events: list[CommittedEvent]) -> None:
        self._board.publish(events)

    def peers(self) -> list[Peer]:
        return []

    async def look_for_lapses(self) -> bool:
        """Always: a group on the embedded store is cheaper than a look first."""
        return True

    def keep_after(self) -> int:
        return self._board.subscribers_keep_after()

    async def start(self, nursery: trio.Nursery, writer: Writer) -> None:
        nursery.start_soon(self._checkpoints, writer)

    async def _checkpoints(self, writer: Writer) -> None:
        """Nothing is copied into the file before it passed its check (`store_check`)."""
        await self._check.passed.wait()
        await self._checkpointer.run(_restart_wal_in(writer))

    async def verify(self, writer: Writer) -> None:
        await self._check.run(writer.refuse)

    def check(self) -> StoreCheck | None:
        return self._check.wire

    def may_close(self) -> bool:
        return self._check.may_close()

    async def stop(self) -> None:
        self.readers.close()
        self._checkpointer.close()

    def release(self) -> None:
        self._lock.release()


def _restart_wal_in(writer: Writer) -> Callable[[], Awaitable[object]]:
    async def restart() -> object:
        return await writer.submit_outside_transaction(restart_wal)

    return restart
