"""Start and stop (DESIGN.md section 6).

flock(db.lock) -> open writer (recovery, migrations) -> open readers
-> listener (systemd / launchd / bind) -> READY=1 -> serve
SIGTERM/SIGINT -> STOPPING=1 -> stop accepting -> drain in-flight
-> checkpoint(TRUNCATE) -> close -> exit 0
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import signal
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio

from coordd import __version__
from coordd.clock import Clock, SystemClock, format_time
from coordd.connection import Connection, InflightTracker
from coordd.events import EventHub
from coordd.housekeeping import Retention, run_reaper, run_retention, run_watchdog
from coordd.limits import Limits
from coordd.listener import BoundSocket, bind_unix_socket, unlink_if_ours
from coordd.methods import Services
from coordd.platform.launchd import adopt_launchd_socket
from coordd.platform.lockfile import DatabaseLock
from coordd.platform.peercred import peer_uid
from coordd.platform.systemd import Notifier, adopt_listen_fd
from coordd.store import queries
from coordd.store.connections import Durability
from coordd.store.readers import Checkpointer, ReaderPool, restart_wal
from coordd.store.writer import Writer

log = logging.getLogger(__name__)

#: Seconds of lease a claim that lapsed while the daemon was down gets at start.
DEFAULT_RESTART_GRACE_S = 30.0
#: Errors from accept() that mean "out of resources for now": wait and retry.
_ACCEPT_CAPACITY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
#: Target for RLIMIT_NOFILE: room for the connection cap plus database files.
_NOFILE_TARGET = 65536


@dataclass
class DaemonConfig:
    db_path: Path
    socket_path: Path
    durability: Durability = Durability.FULL
    limits: Limits = field(default_factory=Limits)
    restart_grace_s: float = DEFAULT_RESTART_GRACE_S
    retention: Retention = field(default_factory=Retention)
    handle_signals: bool = True
    #: SQLite max_page_count for the writer: a hard cap on the database's size.
    max_db_pages: int | None = None


class Daemon:
    def __init__(self, config: DaemonConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        self.hub = EventHub()
        self.writer = Writer(
            config.db_path,
            durability=config.durability,
            clock=self.clock,
            on_commit=self.hub.publish,
            max_pages=config.max_db_pages,
        )
        self.readers = ReaderPool(config.db_path)
        self.checkpointer = Checkpointer(config.db_path)
        self.lock = DatabaseLock(config.db_path)
        self.notifier = Notifier()
        self.tracker = InflightTracker()
        self.bound: BoundSocket | None = None
        self.services: Services | None = None
        self._stop_requested = trio.Event()

    def request_stop(self) -> None:
        """Begin a graceful shutdown, as SIGTERM does."""
        self._stop_requested.set()

    async def run(self, *, task_status: trio.TaskStatus[Daemon] = trio.TASK_STATUS_IGNORED) -> None:
        config = self.config
        config.db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        raise_nofile_limit()
        self.lock.acquire()
        try:
            # Adoption is decided before anything could probe or bind a path.
            adopted = adopt_listen_fd() or adopt_launchd_socket()
            self.writer.open()
            self.readers.open()
            self.checkpointer.open()
            try:
                self.bound = (
                    BoundSocket(adopted, None, owned=False)
                    if adopted is not None
                    else bind_unix_socket(config.socket_path)
                )
                await self._serve(task_status)
            finally:
                await self.writer.stop()
                self.readers.close()
                self.checkpointer.close()
                if self.bound is not None:
                    unlink_if_ours(self.bound)
                    if self.bound.owned:
                        self.bound.sock.close()
        finally:
            self.lock.release()
            self.notifier.close()

    async def _serve(self, task_status: trio.TaskStatus[Daemon]) -> None:
        assert self.bound is not None
        self.hub.last_seq = self.writer.last_committed_seq
        self.writer.start()
        granted = await self.writer.submit(queries.grant_restart_grace, self.config.restart_grace_s)
        if granted:
            log.info(
                "gave %d lease(s) a %.0f s restart grace", granted, self.config.restart_grace_s
            )
        self.services = Services(
            writer=self.writer,
            readers=self.readers,
            hub=self.hub,
            clock=self.clock,
            db_path=self.config.db_path,
            started_at=format_time(self.clock.now()),
            version=__version__,
        )
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(self.bound.sock))
        async with trio.open_nursery() as root:
            if self.config.handle_signals:
                root.start_soon(self._watch_signals)
            root.start_soon(run_reaper, self.writer)
            root.start_soon(self.checkpointer.run, partial(self.writer.submit_raw, restart_wal))
            root.start_soon(run_retention, self.writer, self.hub, self.config.retention)
            if self.notifier.watchdog_interval_s:
                root.start_soon(run_watchdog, self.writer, self.notifier)
            async with trio.open_nursery() as connections:
                accept_scope = trio.CancelScope()
                connections.start_soon(self._accept_loop, listener, connections, accept_scope)
                where = self.bound.path or "an adopted socket"
                log.info("coordd %s serving %s on %s", __version__, self.config.db_path, where)
                self.notifier.notify("READY=1", f"STATUS=serving {self.config.db_path}")
                task_status.started(self)
                await self._stop_requested.wait()
                log.info("shutting down")
                self.notifier.notify("STOPPING=1", "STATUS=draining")
                accept_scope.cancel()
                await self._drain()
                connections.cancel_scope.cancel()
            root.cancel_scope.cancel()

    async def _drain(self) -> None:
        assert self.services is not None
        self.services.draining = True
        self.hub.shutdown()
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
        slots = trio.Semaphore(self.config.limits.max_connections)
        with scope:
            while True:
                await slots.acquire()
                try:
                    stream = await listener.accept()
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
    target = _NOFILE_TARGET if hard == resource.RLIM_INFINITY else min(hard, _NOFILE_TARGET)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise RLIMIT_NOFILE: %s", exc)
