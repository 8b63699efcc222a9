"""The blocking client: one stdlib Unix socket, one request at a time.

from coordd_client import Client

with Client() as coord:                      # socket resolved as PROTOCOL.md section 1
    task = coord.post("fix the parser", kind="bug", agent="claude-1").task
    won = coord.claim(task.id, "claude-1")
    if won.won:
        coord.complete(task.id, "claude-1", fence=won.task.fence, result="fixed")
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import msgspec

from coordd_client import claim_retry, methods
from coordd_client.discovery import discover
from coordd_client.rpc import RequestBuilder, Response, decode_frame, unwrap
from coordd_client.rpc_methods import BlockingMethods
from coordd_wire import wire
from coordd_wire.errors import (
    CoordError,
    DaemonUnavailable,
    Overloaded,
    ProtocolError,
    ShuttingDown,
)
from coordd_wire.framing import MAX_ANSWER_FRAME, FrameDecoder, FrameError
from coordd_wire.paths import default_socket_path, socket_is_explicit
from coordd_wire.peercred import connect_same_user

R = TypeVar("R")

#: Seconds a blocking call waits for its answer before giving up (outcome unknown).
DEFAULT_TIMEOUT_S = 60.0
#: Extra seconds allowed beyond a wait's own time (`task.wait`, `wait_s`) for the answer.
WAIT_SLACK_S = 10.0


class Client(BlockingMethods):
    """A connection to the daemon; thread-compatible, not thread-safe.

    One method per RPC (PROTOCOL.md section 6, docs/PROTOCOL-1.2.md) comes from
    `BlockingMethods`, generated from the builders (`rpc_methods.py`)."""

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        agent: str | None = None,
        project: str | None = None,
    ) -> None:
        """`agent` and `project` are defaults for every call that takes them and
        names none (`identity.default_agent()` and `default_project()` resolve
        them as the CLI does)."""
        self.socket_path = Path(default_socket_path(socket_path))
        #: A derived socket with no daemon may be a host's wrong guess: look for the
        #: user's daemon elsewhere (`discovery`). Never for an asked-for socket.
        self._may_discover = not socket_is_explicit(socket_path)
        self.timeout_s = timeout_s
        self.agent = agent
        self.project = project
        self._features: frozenset[str] | None = None
        self._sock: socket.socket | None = None
        self._decoder = FrameDecoder(max_frame=MAX_ANSWER_FRAME)
        self._builder = RequestBuilder()
        self.notifications: deque[Response] = deque()

    # --- connection --------------------------------------------------------------

    def connect(self) -> Client:
        if self._sock is not None:
            return self
        try:
            sock = self._open_socket()
        except DaemonUnavailable:
            if not self._may_discover:
                raise
            found = discover(tried=self.socket_path)
            if found is None:
                raise
            self.socket_path = found.socket
            sock = self._open_socket()
        self._sock = sock
        self._decoder = FrameDecoder(max_frame=MAX_ANSWER_FRAME)
        return self

    def _open_socket(self) -> socket.socket:
        return connect_same_user(self.socket_path)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Client:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- calls ----------------------------------------------------------------------

    def request(self, call: methods.Call[R]) -> R:
        call = methods.with_defaults(call, self.agent, self.project)
        if call.method in methods.KEYED_METHODS and self.supports("claim_request_key"):
            return claim_retry.retrying(claim_retry.keyed(call), self._request_once)
        if call.method in methods.REPEATABLE_METHODS and self.supports("holder_repeat"):
            return claim_retry.retrying(call, self._request_once)
        return self._request_once(call)

    def _request_once(self, call: methods.Call[R]) -> R:
        """One attempt on this connection (opened again if it broke)."""
        timeout = self.timeout_s
        if call.waits_s and timeout is not None:
            timeout = max(timeout, call.waits_s + WAIT_SLACK_S)
        return self.send(call, timeout_s=timeout)

    def send(self, call: methods.Call[R], *, timeout_s: float | None = None) -> R:
        """`call` as built, on this connection: no client default filled in, no retry
        of a keyed claim (`request` adds both), no deadline unless `timeout_s`."""
        return unwrap(
            self.call_raw(call.method, call.params, timeout_s=timeout_s), call.result_type
        )

    def pipeline(self, call: methods.Call[Any]) -> int:
        """Send `call` without reading its answer; return its request id. For a caller
        that keeps several blocking calls open on one connection and reads whichever
        answers first with `next_frame` (the wake hook: `task.wait` and `message.wait`)."""
        return self.send_request(call.method, call.params)

    def call_raw(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> Response:
        """Send one request and return its response frame (notifications are queued aside)."""
        request_id = self.send_request(method, params)
        return self.answers([request_id], timeout_s)[request_id]

    def answers(self, ids: Sequence[int], timeout_s: float | None) -> dict[int, Response]:
        """The responses to the requests `ids` sent on this connection, in whatever order
        they come (notifications are queued aside); a frame-level error (no id) answers
        every one still open."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        found: dict[int, Response] = {}
        while len(found) < len(ids):
            response = self.next_frame(deadline)
            if response.method is not None and response.id is None:
                self.notifications.append(response)
            elif isinstance(response.id, int) and response.id in ids:
                found[response.id] = response
            elif response.id is None and response.error:
                return {request_id: found.get(request_id, response) for request_id in ids}
        return found

    def send_request(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        """Send one request without reading its answer; return its id (`pipeline`
        sends a built call so)."""
        self.connect()
        assert self._sock is not None
        request_id, frame = self._builder.build(method, params)
        try:
            self._sock.sendall(frame)
        except OSError as exc:
            self.close()
            raise DaemonUnavailable(f"connection lost while sending {method}: {exc}") from None
        return request_id

    def next_frame(self, deadline: float | None = None) -> Response:
        """Block for the next frame from the daemon (a response or a notification)."""
        assert self._sock is not None
        while True:
            try:
                payload = self._decoder.next_frame()
            except FrameError as exc:
                self.close()
                raise ProtocolError(f"bad frame from daemon: {exc}") from None
            if payload is not None:
                return decode_frame(payload)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                self.close()
                raise DaemonUnavailable(
                    "timed out waiting for the daemon's answer", outcome="unknown", reason="timeout"
                )
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            except OSError as exc:
                self.close()
                raise DaemonUnavailable(f"connection lost: {exc}", outcome="unknown") from None
            if not data:
                self.close()
                raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")
            self._decoder.feed(data)

    def supports(self, feature: str) -> bool:
        """Whether the daemon serves a protocol 1.1 feature (`deps`, `assignee`,
        `task_history`, ...): `server.info.features`, asked once per client."""
        if self._features is None:
            self._features = frozenset(self.server_info().features)
        return feature in self._features

    def subscribe(
        self,
        *,
        after_seq: int | None = None,
        project: str | None = None,
        types: Sequence[str] | None = None,
        reconnect: bool = True,
    ) -> EventStream:
        """Iterate events from a connection of its own; see `EventStream`."""
        return EventStream(
            self.socket_path, after_seq=after_seq, project=project, types=types, reconnect=reconnect
        )


class _EventParams(msgspec.Struct):
    subscription: int
    event: wire.Event


_event_params_decoder = msgspec.json.Decoder(_EventParams)


#: Seconds between reconnect attempts while the daemon is away.
RECONNECT_DELAY_S = 0.2


class EventStream:
    """Events in seq order, resuming without gaps across lag and daemon restarts.

    It remembers the last seq it yielded; when the subscription is closed
    (lagged, shutdown) or the connection drops, it subscribes again from
    there, so the caller sees every event once and in order.
    """

    def __init__(
        self,
        socket_path: Path,
        *,
        after_seq: int | None,
        project: str | None,
        types: Sequence[str] | None,
        reconnect: bool,
    ) -> None:
        self._socket_path = socket_path
        self.last_seq = after_seq
        self._project = project
        self._types = list(types) if types else None
        self._reconnect = reconnect
        self._client: Client | None = None
        self.subscription: int | None = None

    def __iter__(self) -> Iterator[wire.Event]:
        return self

    def _open(self) -> Client:
        client = Client(self._socket_path, timeout_s=DEFAULT_TIMEOUT_S).connect()
        call = methods.subscribe(after_seq=self.last_seq, project=self._project, types=self._types)
        result = client.send(call)
        self.subscription = result.subscription
        if self.last_seq is None:
            self.last_seq = result.last_seq
        return client

    def __next__(self) -> wire.Event:
        while True:
            try:
                if self._client is None:
                    self._client = self._open()
                client = self._client
                response = (
                    client.notifications.popleft() if client.notifications else client.next_frame()
                )
            except (DaemonUnavailable, ShuttingDown, Overloaded):
                # Gone, or draining for a restart (a subscribe that reaches a
                # connection accepted just before the drain gets -32005), or
                # busy: all pass; resubscribe from last_seq.
                self.close()
                if not self._reconnect:
                    raise StopIteration from None
                time.sleep(RECONNECT_DELAY_S)
                continue
            if response.method == "event":
                event = _event_params_decoder.decode(response.params).event
                if self.last_seq is not None and event.seq <= self.last_seq:
                    continue  # already yielded before a resume
                self.last_seq = event.seq
                return event
            if response.method == "subscription.closed":
                self.close()
                if not self._reconnect:
                    raise StopIteration
                continue

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Client", "CoordError", "EventStream"]
