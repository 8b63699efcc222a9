"""Start and stop (docs/ARCHITECTURE.md, "Start and stop").

flock(db.lock) -> open writer (recovery, migrations) -> open readers
-> listener (systemd / launchd / bind) -> READY=1 -> serve
SIGTERM/SIGINT -> STOPPING=1 -> stop accepting -> drain in-flight
-> checkpoint(TRUNCATE) -> close -> exit 0
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import resource
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coordd import __version__
from coordd.clock import Clock, StoreClock, SystemClock, format_time
from coordd.connection import Connection, InflightTracker
from coordd.events import EventHub
from coordd.housekeeping import run_reaper, run_retention, run_watchdog
from coordd.lifecycle import Lifecycle
from coordd.limits import Limits, Retention
from coordd.listener import (
    BoundSocket,
    ListenerError,
    bind_unix_socket,
    record_store,
    remove_store_record,
    served_path,
    socket_file_is_ours,
    unlink_if_ours,
)
from coordd.methods import Services
from coordd.platform.launchd import adopt_launchd_socket
from coordd.platform.lockfile import DatabaseLock
from coordd.platform.systemd import Notifier, adopt_listen_fd
from coordd.reservation_queue import ReservationQueue
from coordd.store import claims, reads
from coordd.store.checkpointer import Checkpointer, restart_wal
from coordd.store.connections import Durability
from coordd.store.readers import ReaderPool, Readers
from coordd.store.transaction import CommittedEvent
from coordd.store.write_store import SqliteWriteStore, WriteStore
from coordd.store.writer import Writer
from coordd_client.protocol.peercred import peer_uid
from coordd_client.protocol.record import SQLITE_PREFIX

if TYPE_CHECKING:
    from coordd.team import TeamMode

log = logging.getLogger(__name__)

#: Errors from accept() that mean "out of resources for now": wait and retry.
_ACCEPT_CAPACITY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}


@dataclass
class DaemonConfig:
    db_path: Path
    socket_path: Path
    durability: Durability = Durability.FULL
    limits: Limits = field(default_factory=Limits)
    restart_grace_s: float = Limits.restart_grace_s
    retention: Retention = field(default_factory=Retention)
    handle_signals: bool = True
    #: SQLite max_page_count for the writer: a hard cap on the database's size.
    max_db_pages: int | None = None
    #: Team mode: a `postgresql://` DSN (or libpq key=value string); None is SQLite.
    store_dsn: str | None = None
    #: This daemon's name on the team store (`--node`); default: `default_node_name`.
    node: str | None = None
    #: In-process tests only: seconds added to the team store's clock.
    store_time_shift: Callable[[], float] | None = None

    @property
    def node_name(self) -> str:
        return self.node or default_node_name(self.socket_path)


def default_node_name(socket_path: Path) -> str:
    """The host name and a short hash of the socket: two daemons on one host are two nodes."""
    digest = hashlib.sha256(str(socket_path).encode()).hexdigest()[:6]
    return f"{socket.gethostname()}-{digest}"


class Daemon:
    def __init__(self, config: DaemonConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.lifecycle = Lifecycle()
        self.hub = EventHub(self.lifecycle)
        self.team: TeamMode | None = None
        self.lock: DatabaseLock | None = None
        self.checkpointer: Checkpointer | None = None
        self.readers: Readers
        if config.store_dsn is None:
            self.clock: Clock = clock or SystemClock()
            store: WriteStore = SqliteWriteStore(
                config.db_path,
                durability=config.durability,
                clock=self.clock,
                max_pages=config.max_db_pages,
            )
            self.readers = ReaderPool(config.db_path)
            self.checkpointer = Checkpointer(config.db_path)
            self.lock = DatabaseLock(config.db_path)
            on_instant = None
        else:
            from coordd.store.postgres.readers import PgReaderPool
            from coordd.store.postgres.writer import PostgresWriteStore
            from coordd.team import TeamMode

            # Leases are judged by the database's clock; this one only follows it.
            store_clock = StoreClock(clock or SystemClock())
            self.clock = store_clock
            on_instant = store_clock.observe
            node = config.node_name
            store = PostgresWriteStore(config.store_dsn, node, time_shift=config.store_time_shift)
            readers = PgReaderPool(config.store_dsn, node)
            self.readers = readers
            self.team = TeamMode(
                config.store_dsn,
                node=node,
                readers=readers,
                publish=self._publish,
                poke_reservations=self._poke_reservations,
                keep_after=self.hub.oldest_subscriber_position,
            )
        self.reservation_queue = ReservationQueue(self.lifecycle, self.clock)
        self.writer = Writer(
            store, on_commit=self._on_commit, lifecycle=self.lifecycle, on_instant=on_instant
        )
        self.notifier = Notifier()
        self.tracker = InflightTracker()
        self.bound: BoundSocket | None = None
        self.services: Services | None = None
        self._stop_requested = trio.Event()
        #: Shared by every accept loop (the socket may be bound again while serving).
        self._connection_slots = trio.Semaphore(config.limits.max_connections)
        self._accept_scope = trio.CancelScope()
        self._listener: trio.SocketListener | None = None

    def _on_commit(self, events: list[CommittedEvent]) -> None:
        """Each committed batch of this daemon's writer, on the trio thread.

        Team mode puts it in line with other daemons' commits first (`LogFollower`).
        """
        if self.team is not None:
            self.team.follower.offer(events)
        else:
            self._publish(events)

    def _publish(self, events: list[CommittedEvent]) -> None:
        """Events in seq order: to subscribers and waiters, then to waiting reservation
        acquires (a task leaving `claimed` frees its reservations)."""
        self.hub.publish(events)
        self.reservation_queue.on_commit(events)

    def _poke_reservations(self, project: str | None) -> None:
        """Another daemon released reservations in `project` (None: maybe anywhere)."""
        if project is None:
            self.reservation_queue.poke_all()
        else:
            self.reservation_queue.poke(project)

    def request_stop(self) -> None:
        """Begin a graceful shutdown, as SIGTERM does."""
        self._stop_requested.set()

    async def run(self, *, task_status: trio.TaskStatus[Daemon] = trio.TASK_STATUS_IGNORED) -> None:
        config = self.config
        raise_nofile_limit()
        if self.lock is not None:
            config.db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.lock.acquire()
        stopped_cleanly = False
        try:
            # Adoption is decided before anything could probe or bind a path.
            adopted = adopt_listen_fd() or adopt_launchd_socket()
            self.writer.open()
            try:
                if self.team is not None:
                    await trio.to_thread.run_sync(
                        self.team.claim_node, self.writer.last_committed_seq
                    )
                self.readers.open()
                if self.checkpointer is not None:
                    self.checkpointer.open()
                self.bound = (
                    BoundSocket(adopted, None, owned=False)
                    if adopted is not None
                    else bind_unix_socket(config.socket_path)
                )
                if self.lock is not None and (served := served_path(self.bound)) is not None:
                    self.lock.record_socket(served)
                # A crashed daemon's clients restart this store, not the default one.
                record_store(self.bound, self.recorded_store)
                await self._serve(task_status)
                stopped_cleanly = True
            finally:
                await self.writer.stop()
                if self.team is not None:
                    await self.team.stop()
                self.readers.close()
                if self.checkpointer is not None:
                    self.checkpointer.close()
                if self.bound is not None:
                    if stopped_cleanly:
                        remove_store_record(self.bound)
                    unlink_if_ours(self.bound)
                    if self.bound.owned:
                        self.bound.sock.close()
        finally:
            if self.lock is not None:
                self.lock.release()
            self.notifier.close()

    @property
    def store_location(self) -> str:
        """What `server.info` and the log call the store: the file, or the DSN sans password."""
        if self.config.store_dsn is None:
            return str(self.config.db_path)
        from coordd.store.postgres.connection import redact

        return redact(self.config.store_dsn)

    @property
    def recorded_store(self) -> str:
        """What `<socket>.store` names: `sqlite:<path>`, or the DSN without its password."""
        if self.config.store_dsn is None:
            return SQLITE_PREFIX + str(self.config.db_path)
        return self.store_location

    async def _serve(self, task_status: trio.TaskStatus[Daemon]) -> None:
        assert self.bound is not None
        self.hub.last_seq = self.writer.last_committed_seq
        self.writer.start()
        granted = 0
        if self.team is not None and self.team.peers:
            # Live peers kept reaping while this daemon was away: no lapse to forgive.
            log.info("no restart grace: %d other daemon(s) live on the store", len(self.team.peers))
        else:
            granted = await self.writer.submit(
                claims.grant_restart_grace, self.config.restart_grace_s
            )
        if granted:
            log.info(
                "gave %d lease(s) a %.0f s restart grace", granted, self.config.restart_grace_s
            )
        self.services = Services(
            writer=self.writer,
            readers=self.readers,
            hub=self.hub,
            clock=self.clock,
            db_path=None if self.team is not None else self.config.db_path,
            store_backend="sqlite" if self.team is None else "postgresql",
            store_location=self.store_location,
            node=self.config.node_name,
            team=self.team,
            started_at=format_time(self.clock.now()),
            version=__version__,
            lifecycle=self.lifecycle,
            reservation_queue=self.reservation_queue,
        )
        async with trio.open_nursery() as root:
            root.start_soon(self.hub.run_deliveries)
            if self.config.handle_signals:
                root.start_soon(self._watch_signals)
            root.start_soon(run_reaper, self.writer, self._look_for_lapses if self.team else None)
            if self.checkpointer is not None:
                root.start_soon(
                    self.checkpointer.run,
                    partial(self.writer.submit_outside_transaction, restart_wal),
                )
            if self.team is not None:
                self.team.start(root, self._lost_node)
                await self.team.listening()
            root.start_soon(run_retention, self.writer, self._keep_after, self.config.retention)
            if self.notifier.watchdog_interval_s:
                root.start_soon(run_watchdog, self.writer, self.notifier)
            async with trio.open_nursery() as connections:
                self._start_accepting(connections)
                if self.bound.owned:
                    root.start_soon(self._guard_socket_path, connections)
                where = self.bound.path or "an adopted socket"
                log.info("coordd %s serving %s on %s", __version__, self.store_location, where)
                self.notifier.notify("READY=1", f"STATUS=serving {self.store_location}")
                task_status.started(self)
                await self._stop_requested.wait()
                log.info("shutting down")
                self.notifier.notify("STOPPING=1", "STATUS=draining")
                self._accept_scope.cancel()
                await self._drain()
                connections.cancel_scope.cancel()
            root.cancel_scope.cancel()

    async def _look_for_lapses(self) -> bool:
        """Team mode's reaper asks a reader first (see `run_reaper`)."""
        now = format_time(self.clock.now())
        return await self.readers.run(reads.anything_lapsed, now)

    def _keep_after(self) -> int:
        """Events after this seq may still be owed to a subscriber (in team mode, of any node)."""
        mine = self.hub.oldest_subscriber_position()
        if self.team is None:
            return mine
        team = self.team.heartbeat.team_keep_after
        return mine if team is None else min(mine, team)

    def _lost_node(self, why: str) -> None:
        log.error("%s; stopping", why)
        self.request_stop()

    def _start_accepting(self, connections: trio.Nursery) -> None:
        assert self.bound is not None
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(self.bound.sock))
        self._listener = listener
        self._accept_scope = trio.CancelScope()
        connections.start_soon(self._accept_loop, listener, connections, self._accept_scope)

    async def _guard_socket_path(self, connections: trio.Nursery) -> None:
        """Notice our socket file being deleted or replaced, and bind it again.

        Clients find the daemon by path only: a socket file removed by a
        careless `rm -rf /tmp/*` or a cleaner leaves a live daemon nobody can
        reach. Every `socket_check_interval_s` the path is checked; if it no
        longer names our socket, a fresh one is bound there (through the same
        safety checks as at start) and the old one is closed.
        """
        assert self.bound is not None and self.bound.path is not None
        path = self.bound.path
        complained = False
        while True:
            await trio.sleep(self.config.limits.socket_check_interval_s)
            if socket_file_is_ours(self.bound):
                complained = False
                continue
            try:
                fresh = bind_unix_socket(path)
            except ListenerError as exc:
                if not complained:
                    log.error("the socket file %s is gone or replaced, and: %s", path, exc)
                    complained = True
                continue
            log.warning("the socket file %s was removed or replaced; bound it again", path)
            complained = False
            old_listener = self._listener
            assert old_listener is not None
            self._accept_scope.cancel()  # before the close, so the loop sees a cancel
            self.bound = fresh
            self._start_accepting(connections)
            await old_listener.aclose()

    async def _drain(self) -> None:
        self.lifecycle.begin_drain()
        self.hub.shutdown()
        self.reservation_queue.shutdown()
        with trio.move_on_after(self.config.limits.drain_timeout_s) as scope:
            await self.tracker.wait_idle()
            # Let closing subscriptions send their "shutdown" notice.
            await trio.sleep(0.05)
        if scope.cancelled_caught:
            log.warning("%d request(s) still running after the drain timeout", self.tracker.count)

    async def _watch_signals(self) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("received %s", signal.Signals(signum).name)
                self.request_stop()
                return

    async def _accept_loop(
        self, listener: trio.SocketListener, nursery: trio.Nursery, scope: trio.CancelScope
    ) -> None:
        slots = self._connection_slots
        with scope:
            while True:
                await slots.acquire()
                try:
                    stream = await listener.accept()
                except trio.ClosedResourceError:
                    slots.release()
                    return  # replaced by a freshly bound socket
                except OSError as exc:
                    slots.release()
                    if exc.errno in _ACCEPT_CAPACITY_ERRNOS:
                        log.warning("accept failed (%s); retrying shortly", os.strerror(exc.errno))
                        await trio.sleep(0.1)
                        continue
                    raise
                nursery.start_soon(self._serve_connection, stream, slots)

    async def _serve_connection(self, stream: trio.SocketStream, slots: trio.Semaphore) -> None:
        assert self.services is not None
        try:
            uid = peer_uid(stream.socket)  # type: ignore[arg-type]
            if uid is not None and uid != os.getuid():
                log.warning("refused a connection from uid %d", uid)
                await stream.aclose()
                return
            await Connection(stream, self.services, self.config.limits, self.tracker).serve()
        except Exception:
            log.exception("connection handler failed")
        finally:
            slots.release()


def raise_nofile_limit() -> None:
    """Lift the soft fd limit toward the hard limit: each connection costs one fd."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = (
        Limits.nofile_target if hard == resource.RLIM_INFINITY else min(hard, Limits.nofile_target)
    )
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise RLIMIT_NOFILE: %s", exc)
