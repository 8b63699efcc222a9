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

The outbox also counts the answers its connection owes (`owed`): one for
each request frame read, paid when the frame's answer has been written to
the socket, or when the frame turns out to need none (notifications). While
`Limits.unsent_answers_per_connection` are owed, the connection reads no more
requests (`reading_blocked`). The byte mark alone would leave the count of
small answers to timing: a client that never reads, pipelining small writes,
would have as many read as the daemon managed before its answers backed up.
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
        #: Unwritten bytes, each piece with whether it ends an answer (pays one owed).
        self._backlog: deque[tuple[memoryview, bool]] = deque()
        self.backlog_bytes = 0
        #: Answers owed: request frames read whose answer is not yet written (or
        #: found to be none). Changed under the lock, from either thread.
        self.owed = 0
        self._read_room = trio.Event()  # trio thread only: set while reading may go on
        self._read_room.set()
        self._closed = False
        #: The peer is gone (EPIPE, ECONNRESET): nothing more will be written.
        self.broken = False
        self._kick = trio.Event()  # trio thread only: the backlog became non-empty
        self._below_high_water = trio.Event()
        self._below_high_water.set()
        self._empty = trio.Event()
        self._empty.set()

    # --- writing (any thread) --------------------------------------------------

    def owe(self) -> None:
        """Trio thread: a request frame was read; its answer (or `settle`) pays for it."""
        with self._lock:
            self.owed += 1

    def settle(self) -> None:
        """Trio thread: an owed frame needs no answer (notifications only)."""
        with self._lock:
            self.owed -= 1
        self._check_read_room()

    def settle_threadsafe(self) -> None:
        """Any other thread: `settle`."""
        with self._lock:
            self.owed -= 1
            reopened = self.owed == Limits.unsent_answers_per_connection - 1
        if reopened:
            self._token.run_sync_soon(self._check_read_room)

    def put(self, frame: bytes, answer: bool = False) -> None:
        """Trio thread: write or queue `frame`; the caller may then `await wait_writable_room()`.

        `answer`: the frame answers an owed request frame, paid once it is written.
        """
        started, _ = self._put(frame, answer)
        if started:
            self._backlog_started()
        self._check_read_room()

    def put_threadsafe(self, frame: bytes, answer: bool = False) -> None:
        """Any other thread: `put`; never blocks."""
        started, reopened = self._put(frame, answer)
        if started:
            self._token.run_sync_soon(self._backlog_started)
        elif reopened:
            self._token.run_sync_soon(self._check_read_room)

    def _put(self, frame: bytes, answer: bool) -> tuple[bool, bool]:
        """Whether this frame started a backlog (the flusher must be woken), and whether
        paying for it brought `owed` back under the bound (the reader must be woken)."""
        with self._lock:
            if self._closed or self.broken or not self._backlog:
                written = len(frame) if self._closed or self.broken else self._write(frame)
                if written == len(frame):
                    if not answer:
                        return False, False
                    self.owed -= 1
                    return False, self.owed == Limits.unsent_answers_per_connection - 1
                rest = memoryview(frame)[written:]
                self._backlog.append((rest, answer))
                self.backlog_bytes += len(rest)
                return True, False
            self._backlog.append((memoryview(frame), answer))
            self.backlog_bytes += len(frame)
            return False, False

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
            head, answer = self._backlog[0]
            written = self._write(head)
            if self.broken:
                self._drop_backlog()
                return True
            self.backlog_bytes -= written
            if written < len(head):
                self._backlog[0] = (head[written:], answer)
                return False
            self._backlog.popleft()
            if answer:
                self.owed -= 1
        return True

    def _drop_backlog(self) -> None:
        """Nothing more will be written: its answers are paid as they are (under the lock)."""
        self.owed -= sum(answer for _, answer in self._backlog)
        self._backlog.clear()
        self.backlog_bytes = 0

    # --- trio side ---------------------------------------------------------------

    def _backlog_started(self) -> None:
        self._kick.set()
        self._empty = trio.Event()
        if self.backlog_bytes > Limits.outbox_high_water_bytes and self._below_high_water.is_set():
            self._below_high_water = trio.Event()

    def _check_read_room(self) -> None:
        if not self.reading_blocked:
            self._read_room.set()

    @property
    def reading_blocked(self) -> bool:
        """Trio thread: whether the connection must read no more requests for now.

        Too many answers owed (`Limits.unsent_answers_per_connection`), or too
        many bytes unwritten (`Limits.outbox_high_water_bytes`).
        """
        if self._closed or self.broken:
            return False
        return (
            self.owed >= Limits.unsent_answers_per_connection
            or self.backlog_bytes > Limits.outbox_high_water_bytes
        )

    async def wait_to_read(self) -> None:
        """Wait while `reading_blocked`: until the client has read enough of its answers."""
        while self.reading_blocked:
            if self.owed >= Limits.unsent_answers_per_connection:
                if self._read_room.is_set():
                    self._read_room = trio.Event()
                await self._read_room.wait()
            else:
                await self.wait_writable_room()

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
                self._check_read_room()
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
            self._drop_backlog()
        self._below_high_water.set()
        self._read_room.set()
        self._empty.set()
