"""Team mode on the trio side: one ordered event stream, the doorbell, and the node's heartbeat.

With several daemons on one PostgreSQL store, this daemon's subscribers
and waiters must see every event of the team once, in seq order. The
`LogFollower` is the only way events reach the hub in team mode: this
daemon's own commits arrive from the writer the moment they commit; other
daemons' commits are read from the log when the doorbell rings (or every
`team_poll_s` anyway). Whatever arrives at or below the published seq is
dropped; whatever would leave a gap waits for the log to fill it.

`TeamMode` is the team store's `Backend` (`store/backends.py`): the daemon
runs it through the same hooks as the embedded store. Imported only in team
mode, by `open_backend` (it pulls in psycopg through the store).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import trio

from coordd.clock import Clock, StoreClock, format_time
from coordd.config import DaemonConfig
from coordd.dsn import redact
from coordd.limits import Limits
from coordd.store import reads
from coordd.store.backend import Board
from coordd.store.failures import NodeInUse
from coordd.store.postgres.connection import describe
from coordd.store.postgres.presence import NodePresence, Peer
from coordd.store.postgres.readers import PgReaderPool
from coordd.store.postgres.writer import PostgresWriteStore
from coordd.store.readers import Readers
from coordd.store.transaction import CommittedEvent
from coordd.store.write_store import WriteStore
from coordd.store.writer import Writer
from coordd_wire.errors import CoordError
from coordd_wire.server_info import StoreCheck

log = logging.getLogger(__name__)

Publish = Callable[[list[CommittedEvent]], None]


class LogFollower:
    """Publishes the team's events to this daemon's hub in seq order, each once."""

    def __init__(self, readers: PgReaderPool, publish: Publish, published_seq: int) -> None:
        self._readers = readers
        self._publish = publish
        self.published_seq = published_seq
        self._rung = trio.Event()

    def offer(self, events: list[CommittedEvent]) -> None:
        """This daemon's committed batch (trio thread): publish what is next in line."""
        fresh = [event for event in events if event.seq > self.published_seq]
        if not fresh:
            return
        if fresh[0].seq != self.published_seq + 1:
            self.ring()  # another daemon's commits come first: the log has them
            return
        self._deliver(fresh)

    def ring(self) -> None:
        self._rung.set()

    def _deliver(self, events: list[CommittedEvent]) -> None:
        self.published_seq = events[-1].seq
        self._publish(events)

    async def run(self) -> None:
        """Catch up with the log whenever rung, and every `team_poll_s` regardless."""
        complained = False
        while True:
            with trio.move_on_after(Limits.team_poll_s):
                await self._rung.wait()
            self._rung = trio.Event()
            try:
                await self._catch_up()
                complained = False
            except CoordError as exc:
                if not complained:
                    log.warning("cannot read the team's event log: %s", exc.message)
                    complained = True

    async def _catch_up(self) -> None:
        while True:
            events = await self._readers.run(
                reads.committed_events_after, self.published_seq, Limits.event_page
            )
            fresh = [event for event in events if event.seq > self.published_seq]
            if fresh:
                self._deliver(fresh)
            if len(events) < Limits.event_page:
                return


class NodeHeartbeat:
    """This node's row on the store, renewed every `node_heartbeat_s`; the live peers."""

    def __init__(self, presence: NodePresence, keep_after: Callable[[], int]) -> None:
        self._presence = presence
        self._keep_after = keep_after
        self.peers: list[Peer] = []
        #: The oldest seq any live daemon's subscribers may still need (None: not heard yet).
        self.team_keep_after: int | None = None

    async def run(self, on_lost: Callable[[str], None]) -> None:
        complained = False
        while True:
            await trio.sleep(Limits.node_heartbeat_s)
            try:
                view = await trio.to_thread.run_sync(self._presence.heartbeat, self._keep_after())
            except NodeInUse as exc:
                on_lost(str(exc))
                return
            except Exception as exc:  # psycopg's errors: the store is away; keep trying
                if not complained:
                    log.warning("heartbeat: cannot reach the team store: %s", describe(exc))
                    complained = True
                continue
            complained = False
            self.peers = view.peers
            self.team_keep_after = view.keep_after


class TeamMode:
    """The team store as the daemon's `Backend` (`store/backends.py`): the writer's and
    readers' PostgreSQL, and what a daemon on it adds to the embedded one, started and
    stopped together."""

    name = "postgresql"
    db_path: Path | None = None

    def __init__(self, config: DaemonConfig, clock: Clock, board: Board) -> None:
        from coordd.store.postgres.doorbell import Doorbell

        assert config.store_dsn is not None
        dsn = config.store_dsn
        self._board = board
        self.node = node = config.node_name
        self.location = self.recorded = redact(dsn)
        # Leases are judged by the database's clock; this one only follows it.
        store_clock = StoreClock(clock)
        self.clock: Clock = store_clock
        self.on_instant: Callable[[datetime], None] | None = store_clock.observe
        self.write_store: WriteStore = PostgresWriteStore(
            dsn, node, time_shift=config.store_time_shift
        )
        self._readers = PgReaderPool(dsn, node)
        self.readers: Readers = self._readers
        self.presence = NodePresence(dsn, node)
        self.follower = LogFollower(self._readers, board.publish, 0)
        self.heartbeat = NodeHeartbeat(self.presence, board.subscribers_keep_after)
        self.doorbell = Doorbell(
            dsn, node, self.follower.ring, board.poke_reservations, self._readers.renew_if_failing
        )

    def lock(self) -> None:
        """Nothing here: the node's advisory lock is taken in `open`, once migrated."""

    async def open(self, last_committed_seq: int) -> None:
        """After the writer migrated: take the node's name; learn the peers."""
        await trio.to_thread.run_sync(self._claim_node, last_committed_seq)
        self.readers.open()

    def _claim_node(self, published_seq: int) -> None:
        self.follower.published_seq = published_seq
        self.heartbeat.peers = self.presence.claim()

    def served(self, socket_path: Path) -> None:
        """Nothing here: no lock file records a team store's socket."""

    def on_commit(self, events: list[CommittedEvent]) -> None:
        """In line with other daemons' commits first (`LogFollower`)."""
        self.follower.offer(events)

    def peers(self) -> list[Peer]:
        return self.heartbeat.peers

    async def look_for_lapses(self) -> bool:
        """A reader looks, not the team's write lock (see `run_reaper`)."""
        now = format_time(self.clock.now())
        return await self.readers.run(reads.anything_lapsed, now)

    def keep_after(self) -> int:
        mine = self._board.subscribers_keep_after()
        team = self.heartbeat.team_keep_after
        return mine if team is None else min(mine, team)

    async def start(self, nursery: trio.Nursery, writer: Writer) -> None:
        """The doorbell, the follower and the heartbeat; returns once the doorbell listens
        (bounded: a store slow to answer delays nothing more).

        Its first connect rings every waiting acquire, in case a peer's release was
        missed meanwhile; a daemon that served before that ring could retry a fresh
        waiter once for nothing, which on a busy machine was seen as a second try.
        """
        self.doorbell.start()
        nursery.start_soon(self.follower.run)
        nursery.start_soon(self.heartbeat.run, self._board.lost_store)
        await trio.to_thread.run_sync(
            self.doorbell.listening.wait, Limits.pg_reconnect_interval_s * 5
        )

    async def verify(self, writer: Writer) -> None:
        """No check of its own: PostgreSQL checks its pages as it reads them."""

    def check(self) -> StoreCheck | None:
        return None

    def may_close(self) -> bool:
        return True

    async def stop(self) -> None:
        """The doorbell (woken at once), the node's row (a clean stop leaves), the readers."""
        await trio.to_thread.run_sync(self.doorbell.stop)
        await trio.to_thread.run_sync(self.presence.leave)
        self.readers.close()

    def release(self) -> None:
        """Nothing here: the node's advisory lock went with the presence's connection."""
