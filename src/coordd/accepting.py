"""Accepting connections: the connection cap, the peer check, one task per connection.

Modelled on trio's `_highlevel_serve_listeners.py` (`serve_listeners`): an
accept loop that waits and retries when the process is out of file
descriptors or memory instead of dying, and hands each stream to a handler
in a nursery of the caller's. Two things are ours: a slot per connection
(`Limits.max_connections`, shared by every loop, so a socket bound again
while serving does not double the cap), and the peer's uid checked
(`SO_PEERCRED`, `getpeereid`) before a byte is read: another user's
connection is closed at once (docs/ARCHITECTURE.md, "The path of a request").
"""

from __future__ import annotations

import errno
import logging
import os
import socket
from collections.abc import Awaitable, Callable

import trio

from coordd_wire.peercred import peer_uid

log = logging.getLogger(__name__)

#: Errors from accept() that mean "out of resources for now": wait and retry
#: (trio's `ACCEPT_CAPACITY_ERRNOS`).
ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
#: Seconds to wait before accepting again after one of those (trio's `SLEEP_TIME`).
CAPACITY_RETRY_S = 0.1

Handler = Callable[[trio.SocketStream], Awaitable[None]]


class Acceptor:
    """Accepts on one bound socket at a time; `swap` moves to a freshly bound one."""

    def __init__(self, handler: Handler, max_connections: int) -> None:
        self._handler = handler
        self._slots = trio.Semaphore(max_connections)
        self._scope = trio.CancelScope()
        self._listener: trio.SocketListener | None = None
        self._nursery: trio.Nursery | None = None

    def start(self, nursery: trio.Nursery, sock: socket.socket) -> None:
        """Accept on `sock`; the loop and every connection run in `nursery`."""
        self._nursery = nursery
        self._accept_on(sock)

    async def swap(self, sock: socket.socket) -> None:
        """Accept on `sock` from now on; close the listener accepted on until now.

        Connections already accepted keep running.
        """
        old = self._listener
        self._scope.cancel()  # before the close, so the old loop sees a cancel
        self._accept_on(sock)
        if old is not None:
            await old.aclose()

    def stop(self) -> None:
        """Accept nothing more (connections already accepted keep running)."""
        self._scope.cancel()

    def _accept_on(self, sock: socket.socket) -> None:
        assert self._nursery is not None, "start() first"
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
        self._listener = listener
        self._scope = trio.CancelScope()
        self._nursery.start_soon(self._accept_loop, listener, self._scope)

    async def _accept_loop(self, listener: trio.SocketListener, scope: trio.CancelScope) -> None:
        assert self._nursery is not None
        slots = self._slots
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
                    if exc.errno in ACCEPT_CAPACITY_ERRNOS:
                        log.warning("accept failed (%s); retrying shortly", os.strerror(exc.errno))
                        await trio.sleep(CAPACITY_RETRY_S)
                        continue
                    raise
                self._nursery.start_soon(self._run_handler, stream)

    async def _run_handler(self, stream: trio.SocketStream) -> None:
        try:
            uid = peer_uid(stream.socket)  # type: ignore[arg-type]
            if uid is not None and uid != os.getuid():
                log.warning("refused a connection from uid %d", uid)
                await stream.aclose()
                return
            await self._handler(stream)
        except Exception:
            log.exception("connection handler failed")
        finally:
            self._slots.release()
