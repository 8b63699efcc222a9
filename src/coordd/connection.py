"""One client connection: frames in, concurrent requests, frames out.

The receive side feeds the sans-IO `FrameDecoder` and starts one task per
request (so responses may leave in any order, PROTOCOL.md section 3); each
task writes its own response under a send lock and a write timeout. At end
of input the connection still
answers the requests it has (a half-closed client gets its replies), but its
blocking waits and its subscriptions end with it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import trio

from coordd.events import Subscription
from coordd.limits import Limits
from coordd.methods import METHODS, FollowUp, Services
from coordd.protocol.jsonrpc import (
    Rejected,
    Request,
    decode_params,
    encode_batch,
    encode_error,
    encode_notification,
    encode_response,
    error_object,
    parse_message,
    result_object,
)
from coordd_client.errors import (
    CoordError,
    FrameTooLargeError,
    InternalError,
    InvalidRequest,
    MethodNotFound,
    Overloaded,
    ShuttingDown,
)
from coordd_client.framing import EmptyFrame, FrameDecoder, FrameTooLarge, encode_frame

log = logging.getLogger(__name__)

_BLOCKING_METHODS = frozenset({"task.wait"})
#: Methods whose answer can be megabytes (up to 1,000 tasks of 64 KiB bodies).
_LARGE_ANSWER_METHODS = frozenset({"task.list", "events.since"})


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
        self._send_lock = trio.Lock()
        # The in-flight cap bounds how many requests a connection has, not how
        # many bytes their answers hold while waiting to be written; this bounds
        # the large ones, from execution until their answer is written.
        self._large_answers = trio.Semaphore(limits.large_answers_per_connection)
        self._connection_scope = trio.CancelScope()
        self._inflight = 0
        self._blocking: set[trio.CancelScope] = set()
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
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    await self._receive_loop()
                    self._end_of_input()
        finally:
            self._end_subscriptions()
            with trio.CancelScope(shield=True):
                await self._stream.aclose()

    def _end_of_input(self) -> None:
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
        decoder = FrameDecoder(self._limits.max_frame)
        deadline = trio.current_time() + self._limits.frame_completion_s
        while True:
            try:
                while (payload := decoder.next_frame()) is not None:
                    await self._accept_frame(payload)
            except FrameTooLarge as exc:
                await self._send_fatal(FrameTooLargeError(str(exc), limit=exc.limit))
                return
            except EmptyFrame as exc:
                await self._send_fatal(InvalidRequest(str(exc)))
                return
            started = decoder.in_partial_frame
            if not started:
                deadline = trio.current_time() + self._limits.frame_completion_s
            try:
                if started:
                    with trio.move_on_at(deadline) as scope:
                        data = await self._stream.receive_some(self._limits.receive_chunk)
                    if scope.cancelled_caught:
                        log.info("closing a connection that left a frame unfinished")
                        return
                else:
                    data = await self._stream.receive_some(self._limits.receive_chunk)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return  # end of input; a partial frame is dropped without effect
            decoder.feed(data)

    async def _send_fatal(self, error: CoordError) -> None:
        log.info("closing a connection: %s", error.message)
        await self._send(encode_frame(encode_error(None, error)))

    async def _accept_frame(self, payload: bytes) -> None:
        message = parse_message(payload)
        refusal: CoordError | None = None
        if self._services.draining:
            refusal = ShuttingDown("the daemon is shutting down")
        elif self._inflight >= self._limits.max_inflight_per_connection:
            refusal = Overloaded(
                "too many requests in flight on this connection; retry later",
                reason="connection_inflight",
            )
        if refusal is not None:
            responses = [
                error_object(item.id, refusal if isinstance(item, Request) else item.error)
                for item in message.items
                if not (isinstance(item, Request) and item.is_notification)
            ]
            await self._send_responses(responses, message.is_batch)
            return
        self._inflight += 1
        self._tracker.begin()
        self.nursery.start_soon(self._run_message, message.items, message.is_batch)

    # --- executing -------------------------------------------------------------------

    async def _run_message(self, items: list[Request | Rejected], is_batch: bool) -> None:
        large = any(isinstance(i, Request) and i.method in _LARGE_ANSWER_METHODS for i in items)
        try:
            if large:
                async with self._large_answers:
                    await self._execute_and_answer(items, is_batch)
            else:
                await self._execute_and_answer(items, is_batch)
        finally:
            self._inflight -= 1
            self._tracker.end()

    async def _execute_and_answer(self, items: list[Request | Rejected], is_batch: bool) -> None:
        if len(items) == 1:
            outcomes = [await self._run_item(items[0])]
        else:
            outcomes = [None] * len(items)

            async def run_one(index: int, item: Request | Rejected) -> None:
                outcomes[index] = await self._run_item(item)

            async with trio.open_nursery() as batch:
                for index, item in enumerate(items):
                    batch.start_soon(run_one, index, item)
        responses = [response for response, _ in filter(None, outcomes) if response is not None]
        await self._send_responses(responses, is_batch)
        for outcome in outcomes:
            if outcome is not None and outcome[1] is not None:
                self.nursery.start_soon(outcome[1])

    async def _run_item(self, item: Request | Rejected) -> tuple[Any, Any] | None:
        """Return (response or None, follow-up or None); None when nothing to send."""
        if isinstance(item, Rejected):
            return error_object(item.id, item.error), None
        try:
            result = await self._call(item)
        except CoordError as exc:
            log.info("%s (id %r) -> %s: %s", item.method, item.id, exc.kind, exc.message)
            return (None if item.is_notification else error_object(item.id, exc)), None
        except Exception as exc:
            log.exception("internal error in %s", item.method)
            error = InternalError(f"internal error: {exc!r}")
            return (None if item.is_notification else error_object(item.id, error)), None
        follow_up = None
        if isinstance(result, FollowUp):
            result, follow_up = result.result, result.then
        if item.is_notification:
            return None, follow_up
        return result_object(item.id, result), follow_up

    async def _call(self, request: Request) -> Any:
        method = METHODS.get(request.method)
        if method is None:
            raise MethodNotFound(f"unknown method {request.method!r}", method=request.method)
        params = decode_params(request.params, method.decoder)
        if request.method in _BLOCKING_METHODS:
            with trio.CancelScope() as scope:
                self._blocking.add(scope)
                try:
                    return await method.handler(self._services, params, self)
                finally:
                    self._blocking.discard(scope)
            # Only reached when the connection's input ended mid-wait; nobody reads this.
            raise ShuttingDown("the connection ended")
        return await method.handler(self._services, params, self)

    # --- sending ---------------------------------------------------------------------

    async def _send_responses(self, responses: list[Any], is_batch: bool) -> None:
        if not responses:
            return  # notifications only: no frame at all
        payload = encode_batch(responses) if is_batch else encode_response(responses[0])
        await self._send(encode_frame(payload))

    async def _send(self, frame: bytes) -> None:
        """Write one frame; a client that does not read within the write timeout is cut off.

        Request tasks write directly, one at a time under a lock, rather than
        through a queue and a sender task: one task switch less per response.
        When nobody is writing, the frame is first offered to the kernel with
        one non-blocking write(2): a reply to a reading client (almost every
        reply) then costs no lock wait, cancel scope or scheduler round trip.
        Only what the socket buffer refuses goes through trio's `send_all`.
        Memory stays bounded because writers wait here, and there are at most
        `max_inflight_per_connection` of them.
        """
        remaining: bytes | memoryview = frame
        if self._send_lock.locked():
            await self._send_lock.acquire()
        else:
            self._send_lock.acquire_nowait()
            written = self._write_nowait(frame)
            if written is None or written == len(frame):
                self._send_lock.release()
                return
            remaining = memoryview(frame)[written:]
        try:
            with trio.move_on_after(self._limits.write_timeout_s) as scope:
                try:
                    await self._stream.send_all(remaining)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    self._connection_scope.cancel()
                    return
        finally:
            self._send_lock.release()
        if scope.cancelled_caught:
            log.info(
                "closing a connection that did not read for %.0f s", self._limits.write_timeout_s
            )
            self._connection_scope.cancel()

    def _write_nowait(self, frame: bytes) -> int | None:
        """Bytes the kernel took at once; None when the peer is gone (the connection ends)."""
        fd = self._stream.socket.fileno()
        if fd < 0:
            return None  # already closed
        try:
            return os.write(fd, frame)
        except BlockingIOError:
            return 0
        except OSError:
            self._connection_scope.cancel()
            return None
