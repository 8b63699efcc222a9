"""One client connection: frames in, `dispatch.route`'s decision acted on, frames out.

The receive side feeds the sans-IO `FrameDecoder` under the slow-loris
deadline; each whole frame goes to `methods.dispatch.route`, which says
what it gets (refused, inline, queued, spawned), and this module does it:
a queued write goes to the writer's queue with a reply callback (the
writer thread encodes the answer after COMMIT and writes it through the
connection's `Outbox`, with no trio task at all); a spawned frame is one
task (so responses may leave in any order, PROTOCOL.md section 3). What
stays here is bytes and time: the read loop, the in-flight count the
decision is given, the outbox and its backpressure. Every request frame read
is owed an answer in the outbox's count until that answer is written (or it
needs none), and the read loop takes no frame while the count is at its
bound: what a client that never reads can make the daemon hold is a count
of frames, not however many it read before its answers backed up. At end of input the
connection still answers the requests it has (a half-closed client gets
its replies), but its blocking waits and its subscriptions end with it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import msgspec
import trio

from coordd.events import Subscription
from coordd.limits import Limits
from coordd.methods import Services, dispatch
from coordd.methods.dispatch import Inline, Queued, Refused, Spawned
from coordd.outbox import Outbox
from coordd.protocol.jsonrpc import (
    Response,
    encode_batch,
    encode_notification,
    encode_response,
    parse_message,
)
from coordd_wire.errors import (
    CoordError,
    FrameTooLargeError,
    InvalidRequest,
    ShuttingDown,
)
from coordd_wire.framing import EmptyFrame, FrameDecoder, FrameTooLarge, encode_frame

log = logging.getLogger(__name__)


class InflightTracker:
    """Counts requests executing daemon-wide, so shutdown can drain them."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = trio.Event()
        self._idle.set()

    def begin(self) -> None:
        if self.count == 0:
            self._idle = trio.Event()
        self.count += 1

    def end(self) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait_idle(self) -> None:
        await self._idle.wait()


class Connection:
    """Implements the `Session` a handler sees."""

    def __init__(
        self,
        stream: trio.SocketStream,
        services: Services,
        limits: Limits,
        tracker: InflightTracker,
    ) -> None:
        self._stream = stream
        self._services = services
        self._limits = limits
        self._tracker = tracker
        self.subscriptions: dict[int, Subscription] = {}
        self._outbox = Outbox(stream.socket, trio.lowlevel.current_trio_token())
        # The in-flight cap bounds how many requests a connection has, not how
        # many bytes their answers hold while waiting to be written; this bounds
        # the large ones, from execution until the outbox has taken their answer
        # and is back under its high-water mark.
        self._large_answers = trio.Semaphore(limits.large_answers_per_connection)
        self.reads = trio.CapacityLimiter(limits.reader_share_per_connection)
        self._connection_scope = trio.CancelScope()
        self._inflight = 0
        self._all_answered = trio.Event()
        self._blocking: set[trio.CancelScope] = set()
        #: Set once at end of input. Checked and registered with no await in
        #: between, so a wait or a subscription that starts after the end is
        #: refused, and one that started before is cancelled: none outlives us.
        self._input_ended = False
        self._nursery: trio.Nursery | None = None

    @property
    def nursery(self) -> trio.Nursery:
        assert self._nursery is not None
        return self._nursery

    async def send_notification(self, method: str, params: Any) -> None:
        await self._send(encode_frame(encode_notification(method, params)))

    async def serve(self) -> None:
        try:
            with self._connection_scope:
                async with trio.open_nursery() as outer:
                    outer.start_soon(
                        self._outbox.flush_forever, self._limits.write_timeout_s, self._stuck
                    )
                    async with trio.open_nursery() as nursery:
                        self._nursery = nursery
                        await self._receive_loop()
                        self._end_of_input()
                    # Writes answered by the writer thread have no task here: wait
                    # for them, then for their bytes to leave (the flusher cuts a
                    # client that stopped reading).
                    while self._inflight:
                        self._all_answered = trio.Event()
                        await self._all_answered.wait()
                    await self._outbox.wait_empty()
                    outer.cancel_scope.cancel()
        finally:
            self._end_subscriptions()
            self._outbox.close()  # before the fd is closed and can be reused
            with trio.CancelScope(shield=True):
                await self._stream.aclose()

    def _stuck(self) -> None:
        log.info("closing a connection that did not read for %.0f s", self._limits.write_timeout_s)
        self._connection_scope.cancel()

    def _end_of_input(self) -> None:
        self._input_ended = True
        for scope in self._blocking:
            scope.cancel()
        self._end_subscriptions()

    def _end_subscriptions(self) -> None:
        """Subscriptions end with their connection (PROTOCOL.md section 7)."""
        for sub in list(self.subscriptions.values()):
            self._services.hub.unsubscribe(sub, "unsubscribed")
        self.subscriptions.clear()

    # --- receiving -----------------------------------------------------------------

    async def _receive_loop(self) -> None:
        """Read frames until end of input; a frame must finish within its deadline.

        The slow-loris deadline starts at a frame's first byte, not at the
        previous frame's end: a connection may sit idle between frames for as
        long as it likes (long-lived clients do), but once a frame has begun,
        the rest of it must arrive within `frame_completion_s`.
        """
        decoder = FrameDecoder(self._limits.max_frame)
        deadline = 0.0
        while True:
            try:
                while True:
                    if self._outbox.reading_blocked:
                        await self._wait_to_read()
                    if (payload := decoder.next_frame()) is None:
                        break
                    await self._accept_frame(payload)
            except FrameTooLarge as exc:
                await self._send_fatal(FrameTooLargeError(str(exc), limit=exc.limit))
                return
            except EmptyFrame as exc:
                await self._send_fatal(InvalidRequest(str(exc)))
                return
            in_frame = decoder.in_partial_frame
            try:
                if in_frame:
                    with trio.move_on_at(deadline) as scope:
                        data = await self._stream.receive_some(self._limits.receive_chunk)
                    if scope.cancelled_caught:
                        log.info("closing a connection that left a frame unfinished")
                        return
                else:  # idle between frames: no deadline, and no cancel scope to pay for
                    data = await self._stream.receive_some(self._limits.receive_chunk)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return  # end of input; a partial frame is dropped without effect
            if not in_frame:
                # These bytes begin a frame (any whole frames in them are
                # handled at once; the deadline matters for what is left).
                deadline = trio.current_time() + self._limits.frame_completion_s
            decoder.feed(data)

    async def _wait_to_read(self) -> None:
        """Take no request, even one already received, while the client is behind on reading.

        Checked before every frame, not every receive: one receive may hold
        many small frames, and each read is one more answer owed.
        """
        with self._services.stalls.stalled(self._outbox):
            await self._outbox.wait_to_read()

    async def _send_fatal(self, error: CoordError) -> None:
        """Answer a frame error (too large, empty) under id null; the connection then closes."""
        response = dispatch.error_reply(None, error)
        assert response is not None  # only a notification goes unanswered
        await self._send(encode_frame(encode_response(response)))

    async def _accept_frame(self, payload: bytes) -> None:
        """Act on `dispatch.route`'s decision: the choice is made there, never here."""
        room = self._limits.max_inflight_per_connection - self._inflight
        # Owed from here; paid by the frame's answer, or by `settle` when it has none.
        self._outbox.owe()
        decision = dispatch.route(parse_message(payload), self._services, room)
        if isinstance(decision, Queued):
            if self._enqueue_write(decision):
                return
            # The write queue is full: a task waits for admission instead.
            decision = decision.waiting()
        elif isinstance(decision, Inline):
            # Answered here: no task, no nursery, no scheduling round.
            response = dispatch.run_inline(
                decision.request, decision.method, decision.params, self._services
            )
            await self._send_responses([] if response is None else [response], False)
            return
        elif isinstance(decision, Refused):
            await self._send_responses(decision.responses, decision.is_batch)
            return
        self._inflight += len(decision.message.items)
        self._tracker.begin()
        self.nursery.start_soon(self._run_message, decision)

    def _enqueue_write(self, decision: Queued) -> bool:
        """Queue a write answered by the writer thread; False to take the task path.

        The task path covers a full write queue: it waits for admission.
        """
        write_fn = decision.method.write_fn
        assert write_fn is not None
        request, outbox = decision.request, self._outbox

        def answer(value: Any, error: CoordError | None) -> None:
            """Writer thread, after COMMIT."""
            response = dispatch.write_reply(request, value, error)
            if response is None:
                outbox.settle_threadsafe()
            else:
                outbox.put_threadsafe(encode_frame(encode_response(response)), answer=True)

        self._inflight += 1
        self._tracker.begin()
        if self._services.writer.enqueue_answered(
            write_fn, decision.params, answer, self._answered
        ):
            return True
        self._answered()
        return False

    def _answered(self, requests: int = 1) -> None:
        """Trio thread: the answer to a frame of `requests` requests is in the outbox."""
        self._inflight -= requests
        self._tracker.end()
        if not self._inflight:
            self._all_answered.set()

    # --- executing -------------------------------------------------------------------

    @contextmanager
    def while_connected(self) -> Iterator[None]:
        """Bound a blocking request to this connection's input (the `Session` side).

        The flag is checked and the scope registered with no await between,
        so whatever the interleaving, a wait either sees the end of input
        now or is cancelled by `_end_of_input` later: none outlives us.
        """
        if self._input_ended:
            raise ShuttingDown("the connection ended")
        with trio.CancelScope() as scope:
            self._blocking.add(scope)
            try:
                yield
            finally:
                self._blocking.discard(scope)

    async def _run_message(self, decision: Spawned) -> None:
        try:
            if decision.large_answer:
                async with self._large_answers:
                    await self._execute_and_answer(decision)
            else:
                await self._execute_and_answer(decision)
        finally:
            self._answered(len(decision.message.items))

    async def _execute_and_answer(self, decision: Spawned) -> None:
        message, params = decision.message, decision.params
        try:
            if params is msgspec.UNSET:
                replies = await dispatch.run_items(message.items, self._services, self)
            else:  # a write whose params were decoded already
                replies = [await dispatch.run_item(message.items[0], self._services, self, params)]
        except BaseException:
            self._outbox.settle()  # no answer will come (the connection is going)
            raise
        responses = [reply.response for reply in replies if reply.response is not None]
        await self._send_responses(responses, message.is_batch)
        for reply in replies:
            if reply.follow_up is None:
                continue
            if self._input_ended:
                self._end_subscriptions()  # its subscription outlived the input
            else:
                self.nursery.start_soon(reply.follow_up)

    # --- sending ---------------------------------------------------------------------

    async def _send_responses(self, responses: Sequence[Response], is_batch: bool) -> None:
        """Answer the frame the responses are for, which `_accept_frame` counted as owed."""
        if not responses:
            self._outbox.settle()  # notifications only: no frame at all
            return
        payload = encode_batch(responses) if is_batch else encode_response(responses[0])
        await self._send(encode_frame(payload), answer=True)

    async def _send(self, frame: bytes, answer: bool = False) -> None:
        """Write one frame through the outbox; wait while the client is behind on reading.

        The wait is the backpressure that bounds memory: request tasks and
        subscription pumps stop here, and there are at most
        `max_inflight_per_connection` of the former. `answer`: the frame
        answers a request frame read (it pays what that frame owed).
        """
        self._outbox.put(frame, answer)
        if self._outbox.broken:
            self._connection_scope.cancel()
        elif self._outbox.backlog_bytes:
            await self._outbox.wait_writable_room()
