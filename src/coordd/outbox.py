"""One connection's outgoing bytes, written from the trio thread or the writer thread.

Why the writer thread writes at all: a write's answer is ready the moment
COMMIT returns, on the writer thread. Handing it back to trio first (wake
the event loop, resume the request's task, encode, write) cost a thread
wake-up per batch and a task switch per answer; on the 2-core bench machine
that was about a third of the trio thread's time per claim. So the writer
encodes the answer and offers it to the kernel itself.

Frames never interleave: every write happens under one lock, and once
anything is waiting in the backlog, later frames queue behind it. `put`
never blocks. What the socket refuses is kept and flushed by a trio task
(`flush_forever`) that cuts the connection off if the client reads nothing
for the write timeout. Trio-side senders wait while the backlog is above
`Limits.outbox_high_water_bytes` (backpressure for large answers and notifications); the
writer thread never waits, and the connection stops reading requests while
the backlog is high, which bounds what the writer can add.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable

import trio

from coordd.limits import Limits


class Outbox:
    def __init__(self, sock: trio.socket.SocketType, token: trio.lowlevel.TrioToken) -> None:
        self._sock = sock
        self._token = token
        self._lock = threading.Lock()
        self._backlog: deque[memoryview] = deque()
        self.backlog_bytes = 0
        self._closed = False
        #: The peer is gone (EPIPE, ECONNRESET): nothing more will be written.
        self.broken = False
        self._kick = trio.Event()  # trio thread only: the backlog became non-empty
        self._below_high_water = trio.Event()
        self._below_high_water.set()
        self._empty = trio.Event()
        self._empty.set()

    # --- writing (any thread) --------------------------------------------------

    def put(self, frame: bytes) -> None:
        """Trio thread: write or queue `frame`; the caller may then `await wait_writable_room()`."""
        if self._put(frame):
            self._backlog_started()

    def put_threadsafe(self, frame: bytes) -> None:
        """Any other thread: write or queue `frame`; never blocks."""
        if self._put(frame):
            self._token.run_sync_soon(self._backlog_started)

    def _put(self, frame: bytes) -> bool:
        """True when this frame started a backlog (the flusher must be woken)."""
        with self._lock:
            if self._closed or self.broken:
                return False
            if self._backlog:
                self._backlog.append(memoryview(frame))
                self.backlog_bytes += len(frame)
                return False
            written = self._write(frame)
            if written == len(frame):
                return False
            rest = memoryview(frame)[written:]
            self._backlog.append(rest)
            self.backlog_bytes += len(rest)
            return True

    def _write(self, data: bytes | memoryview) -> int:
        """Bytes the kernel took at once (called under the lock)."""
        fd = self._sock.fileno()
        if fd < 0:
            self.broken = True
            return len(data)
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError:
            self.broken = True
            return len(data)

    def _flush_some(self) -> bool:
        """Write what the kernel takes from the backlog; True when it is empty (under the lock)."""
        while self._backlog:
            head = self._backlog[0]
            written = self._write(head)
            if self.broken:
                self._backlog.clear()
                self.backlog_bytes = 0
                return True
            self.backlog_bytes -= written
            if written < len(head):
                self._backlog[0] = head[written:]
                return False
            self._backlog.popleft()
        return True

    # --- trio side ---------------------------------------------------------------

    def _backlog_started(self) -> None:
        self._kick.set()
        self._empty = trio.Event()
        if self.backlog_bytes > Limits.outbox_high_water_bytes and self._below_high_water.is_set():
            self._below_high_water = trio.Event()

    async def wait_writable_room(self) -> None:
        """Wait while the backlog is above the high-water mark."""
        while self.backlog_bytes > Limits.outbox_high_water_bytes and not (
            self._closed or self.broken
        ):
            if self._below_high_water.is_set():
                self._below_high_water = trio.Event()
            await self._below_high_water.wait()

    async def wait_empty(self) -> None:
        while self.backlog_bytes and not (self._closed or self.broken):
            await self._empty.wait()

    async def flush_forever(self, write_timeout_s: float, on_stuck: Callable[[], None]) -> None:
        """Flush the backlog whenever there is one; `on_stuck` if the peer stops reading."""
        while True:
            await self._kick.wait()
            self._kick = trio.Event()
            while True:
                with self._lock:
                    empty = self._flush_some()
                if self.backlog_bytes <= Limits.outbox_high_water_bytes:
                    self._below_high_water.set()
                if empty:
                    self._empty.set()
                    break
                with trio.move_on_after(write_timeout_s) as scope:
                    await trio.lowlevel.wait_writable(self._sock)
                if scope.cancelled_caught:
                    on_stuck()
                    return

    def close(self) -> None:
        """No more writes from any thread; call before the socket is closed (its fd reused)."""
        with self._lock:
            self._closed = True
            self._backlog.clear()
            self.backlog_bytes = 0
        self._below_high_water.set()
        self._empty.set()
