"""Start and stop (docs/ARCHITECTURE.md, "Start and stop").

flock(db.lock) -> open writer (recovery, migrations) -> open readers
-> listener (systemd / launchd / bind) -> READY=1 -> serve, and check the file beside
SIGTERM/SIGINT -> STOPPING=1 -> stop accepting -> drain in-flight
-> checkpoint(TRUNCATE) -> close -> exit 0
a disk fault in the writer -> the same drain, no checkpoint, no close -> exit 74
"""

from __future__ import annotations

import logging
import resource
import signal

import trio

from coordd import __version__
from coordd.accepting import Acceptor
from coordd.announce import Announcement
from coordd.clock import Clock, format_time
from coordd.config import DaemonConfig
from coordd.connection import Connection, InflightTracker
from coordd.events import EventHub
from coordd.housekeeping import run_reaper, run_retention, run_watchdog
from coordd.lifecycle import Lifecycle
from coordd.limits import Limits
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
from coordd.platform.systemd import Notifier, adopt_listen_fd
from coordd.reservation_queue import ReservationQueue
from coordd.slot_queue import SlotQueue
from coordd.store import claims, reads
from coordd.store.backends import open_backend
from coordd.store.failures import EXIT_DISK_FAULT, DiskFault, StoreDamaged
from coordd.store.transaction import CommittedEvent
from coordd.store.writer import Writer
from coordd_wire.build import daemon_build

log = logging.getLogger(__name__)


class Daemon:
    def __init__(self, config: DaemonConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.lifecycle = Lifecycle()
        self.hub = EventHub(self.lifecycle)
        #: The store, chosen once (`store/backends.py`): SQLite, or the team's PostgreSQL.
        self.store = open_backend(config, clock, self)
        self.clock: Clock = self.store.clock
        self.readers = self.store.readers
        self.reservation_queue = ReservationQueue(self.lifecycle, self.clock)
        self.slot_queue = SlotQueue(self.lifecycle, self.clock)
        self.writer = Writer(
            self.store.write_store,
            on_commit=self.store.on_commit,
            lifecycle=self.lifecycle,
            on_instant=self.store.on_instant,
            on_disk_fault=self.disk_fault,
            on_freed=self.reservations_freed,
            may_close=self.store.may_close,
        )
        self.notifier = Notifier()
        self.tracker = InflightTracker()
        self.bound: BoundSocket | None = None
        self.services: Services | None = None
        #: The store's id (docs/PROTOCOL-1.2.md section 1b), read once the store is open.
        self.board_id = ""
        self.announcement = Announcement()
        self._stop_requested = trio.Event()
        #: What the disk failed, once it has: `run` then ends in `DiskFault`.
        self.disk_fault_seen: str | None = None
        self._acceptor = Acceptor(self._serve_connection, config.limits.max_connections)

    # --- what the store calls (`store.backends.Board`) ---------------------------

    def publish(self, events: list[CommittedEvent]) -> None:
        """Events in seq order: to subscribers and waiters, then to waiting reservation
        acquires (a task leaving `claimed` frees its reservations)."""
        self.hub.publish(events)
        self.reservation_queue.on_commit(events)
        self.slot_queue.on_commit(events)

    def reservations_freed(self, projects: set[str]) -> None:
        """This daemon's writer ended reservations in `projects` with no task event
        (a release, an agent let go, a release request approved): wake the acquires
        waiting there. Other daemons on a team store hear it from the doorbell."""
        for project in projects:
            self.reservation_queue.poke(project)

    def poke_reservations(self, project: str | None) -> None:
        """Another daemon released reservations in `project` (None: maybe anywhere)."""
        self.slot_queue.poke(project)
        if project is None:
            self.reservation_queue.poke_all()
        else:
            self.reservation_queue.poke(project)

    def subscribers_keep_after(self) -> int:
        return self.hub.oldest_subscriber_position()

    def disk_fault(self, why: str) -> None:
        """The writer met a disk fault and stopped writing: drain and exit, to be restarted.

        Exiting, not reopening in place: every cache of the store this process
        holds (the writer's seq and last-seen, the hub, the readers) would have
        to start over too, and a fresh start is the recovery `kill -9` proves.
        """
        log.critical(
            "disk error on the store: %s; stopping (exit %d) so that a restart recovers"
            ' from the WAL (docs/ARCHITECTURE.md, "After a disk error")',
            why,
            EXIT_DISK_FAULT,
        )
        self.disk_fault_seen = why
        self.request_stop()

    def store_damaged(self) -> bool:
        """The integrity check found the file damaged (`store.store_check`)."""
        check = self.store.check()
        return check is not None and check.state == "damaged"

    def lost_store(self, why: str) -> None:
        log.error("%s; stopping", why)
        self.request_stop()

    # --- start and stop ------------------------------------------------------------

    def request_stop(self) -> None:
        """Begin a graceful shutdown, as SIGTERM does."""
        self._stop_requested.set()

    async def run(self, *, task_status: trio.TaskStatus[Daemon] = trio.TASK_STATUS_IGNORED) -> None:
        config = self.config
        raise_nofile_limit()
        self.store.lock()
        stopped_cleanly = False
        try:
            # Adoption is decided before anything could probe or bind a path.
            adopted = adopt_listen_fd() or adopt_launchd_socket()
            self.writer.open()
            try:
                await self.store.open(self.writer.last_committed_seq)
                self.board_id = await self.readers.run(reads.board_id)
                self.bound = (
                    BoundSocket(adopted, None, owned=False)
                    if adopted is not None
                    else bind_unix_socket(config.socket_path)
                )
                if (served := served_path(self.bound)) is not None:
                    self.store.served(served)
                # A crashed daemon's clients restart this store, not the default one.
                record_store(self.bound, self.store.recorded)
                if served is not None:
                    self.announcement.publish(
                        served,
                        self.board_id,
                        self.store.recorded,
                        users_board=config.users_board,
                    )
                await self._serve(task_status)
                if self.disk_fault_seen is not None:
                    # Not clean: the store's record stays, so clients restart this store.
                    raise DiskFault(self.disk_fault_seen)
                stopped_cleanly = True
                if self.store_damaged():
                    raise StoreDamaged(f"the database {self.store.location} is damaged")
            finally:
                self.announcement.withdraw()
                await self.writer.stop()
                await self.store.stop()
                if self.bound is not None:
                    if stopped_cleanly:
                        remove_store_record(self.bound)
                    unlink_if_ours(self.bound)
                    if self.bound.owned:
                        self.bound.sock.close()
        finally:
            if self.disk_fault_seen is None and not self.store_damaged():
                self.store.release()
            # After a disk fault, or on a damaged file, the lock goes with the process,
            # after the write connection: no new daemon opens the file before this
            # one is gone.
            self.notifier.close()

    async def _serve(self, task_status: trio.TaskStatus[Daemon]) -> None:
        assert self.bound is not None
        store = self.store
        self.hub.last_seq = self.writer.last_committed_seq
        self.writer.start()
        await self._grant_restart_grace()
        self.services = Services(
            writer=self.writer,
            readers=self.readers,
            hub=self.hub,
            clock=self.clock,
            store=store,
            started_at=format_time(self.clock.now()),
            version=__version__,
            lifecycle=self.lifecycle,
            reservation_queue=self.reservation_queue,
            slot_queue=self.slot_queue,
            board_id=self.board_id,
            build=daemon_build(),
            read_share=self.config.limits.reader_share_per_connection,
        )
        async with trio.open_nursery() as root:
            root.start_soon(self.hub.run_deliveries)
            if self.config.handle_signals:
                root.start_soon(self._watch_signals)
            root.start_soon(run_reaper, self.writer, store.look_for_lapses)
            root.start_soon(self.announcement.keep, self.config.limits.socket_check_interval_s)
            await store.start(root, self.writer)
            root.start_soon(run_retention, self.writer, store.keep_after, self.config.retention)
            if self.notifier.watchdog_interval_s:
                root.start_soon(run_watchdog, self.writer, self.notifier)
            async with trio.open_nursery() as connections:
                self._acceptor.start(connections, self.bound.sock)
                if self.bound.owned:
                    root.start_soon(self._guard_socket_path)
                where = self.bound.path or "an adopted socket"
                log.info("coordd %s serving %s on %s", __version__, store.location, where)
                self.notifier.notify("READY=1", f"STATUS=serving {store.location}")
                # The store's integrity check runs from here on, beside serving
                # (store/store_check.py); a stop waits for its verdict.
                root.start_soon(store.verify, self.writer)
                task_status.started(self)
                await self._stop_requested.wait()
                log.info("shutting down")
                self.notifier.notify("STOPPING=1", "STATUS=draining")
                self._acceptor.stop()
                await self._drain()
                connections.cancel_scope.cancel()
            root.cancel_scope.cancel()

    async def _grant_restart_grace(self) -> None:
        """Leases that lapsed while no daemon served get `restart_grace_s` more; not when
        live peers (team mode) kept reaping meanwhile: there was no lapse to forgive."""
        if peers := self.store.peers():
            log.info("no restart grace: %d other daemon(s) live on the store", len(peers))
            return
        grace_s = self.config.limits.restart_grace_s
        if granted := await self.writer.submit(claims.grant_restart_grace, grace_s):
            log.info("gave %d lease(s) a %.0f s restart grace", granted, grace_s)

    async def _guard_socket_path(self) -> None:
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
            self.bound = fresh
            await self._acceptor.swap(fresh.sock)

    async def _drain(self) -> None:
        self.lifecycle.begin_drain()
        self.hub.shutdown()
        self.reservation_queue.shutdown()
        self.slot_queue.shutdown()
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

    async def _serve_connection(self, stream: trio.SocketStream) -> None:
        assert self.services is not None
        await Connection(stream, self.services, self.config.limits, self.tracker).serve()


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
