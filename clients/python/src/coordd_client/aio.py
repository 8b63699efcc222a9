"""The trio client: many concurrent calls pipelined on one connection, matched by id.

    import trio
    from coordd_client.aio import AsyncClient

    async def main():
        async with AsyncClient.connect() as coord:
            async with trio.open_nursery() as nursery:
                for task_id in (1, 2, 3):
                    nursery.start_soon(coord.claim, task_id, "cursor-2")

Requires trio: the full install has it (`pip install .` in a coordd checkout); the
client alone needs its `trio` extra (`pip install './clients/python[trio]'`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import trio

from coordd_client import claim_retry, methods
from coordd_client.discovery import discover
from coordd_client.rpc import RequestBuilder, Response, decode_frame, unwrap
from coordd_client.rpc_methods import AsyncMethods
from coordd_wire.errors import DaemonUnavailable, ProtocolError
from coordd_wire.framing import MAX_ANSWER_FRAME, FrameDecoder, FrameError
from coordd_wire.paths import default_socket_path, socket_is_explicit
from coordd_wire.peercred import require_same_user

R = TypeVar("R")

#: Requests one AsyncClient keeps in flight; further calls wait their turn here
#: rather than draw -32004 from the daemon's per-connection cap (512).
DEFAULT_MAX_IN_FLIGHT = 256
#: Notifications an AsyncClient holds for a consumer that has not taken them yet.
NOTIFICATIONS_QUEUED = 1000


async def _open_checked(path: Path) -> trio.SocketStream:
    """A stream to the daemon at `path`, refused unless it is served by our own uid."""
    try:
        stream = await trio.open_unix_socket(str(path))
    except OSError as exc:
        raise DaemonUnavailable(f"no coordd answers on {path}: {exc.strerror or exc}") from None
    try:
        require_same_user(stream.socket, path)  # type: ignore[arg-type]
    except BaseException:
        await stream.aclose()
        raise
    return stream


async def _open_resolved(
    socket_path: str | os.PathLike[str] | None,
) -> tuple[trio.SocketStream, Path]:
    """Section 1's socket; if it was derived and has no daemon, the user's daemon found
    elsewhere (`discovery`), as the blocking client does."""
    path = Path(default_socket_path(socket_path))
    try:
        return await _open_checked(path), path
    except DaemonUnavailable:
        if socket_is_explicit(socket_path):
            raise
        found = await trio.to_thread.run_sync(partial(discover, tried=path))
        if found is None:
            raise
        return await _open_checked(found.socket), found.socket


class _Pending:
    __slots__ = ("done", "response")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.response: Response | None = None


class AsyncClient(AsyncMethods):
    """Use `AsyncClient.connect(...)` as an async context manager."""

    def __init__(
        self,
        stream: trio.SocketStream,
        socket_path: Path,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        *,
        agent: str | None = None,
        project: str | None = None,
    ) -> None:
        self.socket_path = socket_path
        #: Defaults for every call that takes them and names none (as `Client`).
        self.agent = agent
        self.project = project
        self._slots = trio.Semaphore(max_in_flight)
        self._stream = stream
        self._builder = RequestBuilder()
        self._pending: dict[int | str, _Pending] = {}
        self._send_lock = trio.Lock()
        self._broken: BaseException | None = None
        self._features: frozenset[str] | None = None
        send, receive = trio.open_memory_channel[Response](NOTIFICATIONS_QUEUED)
        self._notify_send = send
        #: Server-to-client notifications (subscription events), in arrival order. A
        #: consumer that falls `NOTIFICATIONS_QUEUED` behind sees the channel end (and
        #: `notifications_overflowed` set) once it has taken what was queued: what
        #: came after is not in it, so it subscribes again after the last seq it
        #: handled. Nothing is skipped silently.
        self.notifications = receive
        self.notifications_overflowed = False

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        agent: str | None = None,
        project: str | None = None,
    ) -> AsyncIterator[AsyncClient]:
        stream, path = await _open_resolved(socket_path)
        client = cls(stream, path, agent=agent, project=project)
        async with stream, trio.open_nursery() as nursery:
            nursery.start_soon(client._read_loop)
            try:
                yield client
            finally:
                nursery.cancel_scope.cancel()

    @classmethod
    async def open(
        cls,
        nursery: trio.Nursery,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        agent: str | None = None,
        project: str | None = None,
    ) -> AsyncClient:
        """A connection whose reader runs in `nursery`, for an owner that outlives one
        `async with` (a server that reconnects after a daemon restart). Close it with
        `aclose`; `broken` says when it must be replaced."""
        stream, path = await _open_resolved(socket_path)
        client = cls(stream, path, agent=agent, project=project)
        nursery.start_soon(client._read_loop)
        return client

    @property
    def broken(self) -> bool:
        """The connection ended: every further call raises `DaemonUnavailable`."""
        return self._broken is not None

    async def aclose(self) -> None:
        if self._broken is None:
            self._broken = DaemonUnavailable("the connection was closed by its owner")
        await self._stream.aclose()

    async def _read_loop(self) -> None:
        decoder = FrameDecoder(max_frame=MAX_ANSWER_FRAME)
        try:
            while True:
                while (payload := decoder.next_frame()) is not None:
                    self._dispatch(decode_frame(payload))
                data = await self._stream.receive_some(65536)
                if not data:
                    raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")
                decoder.feed(data)
        except (
            DaemonUnavailable,
            ProtocolError,
            FrameError,
            trio.BrokenResourceError,
            trio.ClosedResourceError,
        ) as exc:
            self._broken = exc
            for pending in self._pending.values():
                pending.done.set()
            self._notify_send.close()

    def _dispatch(self, response: Response) -> None:
        if response.id is None and response.method is not None:
            if self.notifications_overflowed:
                return  # the channel has ended; what follows is the resubscription's
            try:
                self._notify_send.send_nowait(response)
            except trio.WouldBlock:
                # The daemon cannot see this lag (this reader keeps the socket
                # drained), so the client ends the stream rather than drop a
                # notification and carry on as if the rest were whole.
                self.notifications_overflowed = True
                self._notify_send.close()
            return
        pending = self._pending.get(response.id) if response.id is not None else None
        if pending is not None:
            pending.response = response
            pending.done.set()

    async def request(self, call: methods.Call[R]) -> R:
        call = methods.with_defaults(call, self.agent, self.project)
        if call.method in methods.KEYED_METHODS and await self.supports("claim_request_key"):
            return await claim_retry.retrying_async(
                claim_retry.keyed(call), self._request_once, self._on_new_connection, trio.sleep
            )
        return await self._request_once(call)

    async def send(self, call: methods.Call[R]) -> R:
        """`call` as built, on this connection: no client default filled in and no
        retry of a keyed claim (`request` adds both)."""
        response = await self.call_raw(call.method, call.params)
        return unwrap(response, call.result_type)

    async def _request_once(self, call: methods.Call[R]) -> R:
        return await self.send(call)

    async def _on_new_connection(self, call: methods.Call[R]) -> R:
        """`call` on a connection of its own: this one, once broken, stays broken (its
        owner replaces it), but a claim whose answer it lost is asked again."""
        async with AsyncClient.connect(self.socket_path) as fresh:
            return await fresh._request_once(call)

    async def call_raw(self, method: str, params: dict[str, Any] | None = None) -> Response:
        if self._broken is not None:
            raise DaemonUnavailable(f"connection is closed: {self._broken}")
        async with self._slots:
            request_id, frame = self._builder.build(method, params)
            pending = self._pending[request_id] = _Pending()
            try:
                async with self._send_lock:
                    await self._stream.send_all(frame)
                await pending.done.wait()
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise DaemonUnavailable(f"connection lost: {exc}", outcome="unknown") from None
            finally:
                del self._pending[request_id]
        if pending.response is None:
            raise DaemonUnavailable(f"connection lost: {self._broken}", outcome="unknown")
        return pending.response

    async def supports(self, feature: str) -> bool:
        """Whether the daemon serves a protocol 1.1 feature (`server.info.features`)."""
        if self._features is None:
            self._features = frozenset((await self.server_info()).features)
        return feature in self._features
