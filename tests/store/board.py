"""A fresh store in this process, and the calls the protocol-semantics tests make on it.

The store tier (`make test-store`) runs the protocol's semantics where they live,
in the store functions, `(Txn, params) -> result`, without a daemon process, a
socket or an event loop: milliseconds a case instead of a daemon's boot.

- `Board.run(fn, params)` runs one store function in one write transaction,
  through the writer's own group step (`coordd.store.group.run_transaction`),
  and returns its result; `Board.events` are the events that transaction
  committed.
- `Board.seat(agent)` is a client on the board: the `Client`'s own methods,
  built by the client's builders, decoded by the daemon's params decoder and
  run by the method's handler on this board's store (a write in one
  transaction, a read on the board's connection), the result decoded into the
  client's result type, as over the wire. Blocking methods that would wait, and
  anything that needs a connection (subscriptions, notifications), are the
  system tier's.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

import msgspec

from coordd import housekeeping
from coordd.clock import Clock, ManualClock, format_time
from coordd.lifecycle import Lifecycle
from coordd.methods import METHODS, Services, Session
from coordd.methods.server import FEATURES
from coordd.protocol import jsonrpc
from coordd.store import group, transaction
from coordd.store.write_store import WriteStore
from coordd_client import methods
from coordd_client.client import Client
from coordd_client.rpc import Response
from coordd_wire.errors import CoordError, error_from_wire

R = TypeVar("R")


class StoreClock:
    """The board's time: the test's clock on SQLite, the database's on PostgreSQL
    (shifted by the test's clock, as the in-process daemon's is)."""

    def __init__(self, store: WriteStore, clock: ManualClock, team: bool) -> None:
        self._store = store
        self._clock = clock
        self._team = team

    def now(self) -> datetime:
        return self._store.now() if self._team else self._clock.now()


class Board:
    """One fresh store, its writer connection, and the writer's last-seen cache."""

    def __init__(self, store: WriteStore, clock: ManualClock, *, backend: str) -> None:
        self.store = store
        self.clock = clock
        self.backend = backend
        self.time: Clock = StoreClock(store, clock, backend != "sqlite")
        self.agents_seen: dict[str, datetime] = {}
        #: The events the last transaction committed.
        self.events: list[transaction.CommittedEvent] = []
        self._services = _services(self)

    @property
    def now_text(self) -> str:
        return format_time(self.time.now())

    def group(self, *steps: group.Step) -> group.Group:
        """Run `steps` as one group commit, as the writer runs a batch."""
        done = group.run_transaction(self.store, steps, self.agents_seen)
        self.agents_seen.update(done.seen)
        self.events = done.events
        return done

    def run(self, fn: Callable[..., R], *args: Any) -> R:
        """`fn(txn, *args)` in one write transaction; its result, or its wire error raised."""
        ((value, error),) = self.group(group.Call(fn, args)).results
        if error is not None:
            raise error
        return cast(R, value)

    def reap(self) -> int:
        """One round of the daemon's reaper: lapsed claims back to pending, lapsed
        reservations, slot leases and landings gone."""
        return self.run(housekeeping.reap_lapsed)

    def read(self, fn: Callable[..., R], *args: Any) -> R:
        """`fn(connection, *args)` outside a write transaction, as a reader runs it."""
        return fn(self.store.db, *args)

    def request(self, call: methods.Call[R]) -> R:
        """`call` as the daemon answers it, decoded into the client's result type."""
        return msgspec.json.decode(self.answer(call.method, call.params), type=call.result_type)

    def answer(self, method: str, params: Mapping[str, Any] | None) -> bytes:
        """`method`'s answer, encoded: params decoded by the method's decoder (None
        left out, as the client sends them), its handler run on this board."""
        entry = METHODS[method]
        cleaned = {k: v for k, v in (params or {}).items() if v is not None}
        decoded = jsonrpc.decode_params(msgspec.Raw(msgspec.json.encode(cleaned)), entry.decoder)
        session = cast(Session, types.SimpleNamespace(reads=None))
        try:
            if entry.inline is not None:
                answer = entry.inline(self._services, decoded)
            else:
                answer = _finish(entry.handler(self._services, decoded, session), method)
        except CoordError as exc:
            # As the client meets it: encoded by the daemon, rebuilt from the wire.
            frame = msgspec.json.decode(jsonrpc.encode_response(jsonrpc.error_object(1, exc)))
            raise error_from_wire(frame["error"]) from None
        return msgspec.json.encode(answer)

    def seat(self, agent: str | None = None, project: str | None = None) -> Seat:
        """A client on this board with `agent` and `project` as its defaults."""
        return Seat(self, agent, project)


class Seat(Client):
    """The blocking `Client`'s methods, answered by a `Board` instead of a socket."""

    def __init__(self, board: Board, agent: str | None, project: str | None) -> None:
        # No socket: only what `Client.request` and its callers read.
        self.board = board
        self.agent = agent
        self.project = project

    def request(self, call: methods.Call[R]) -> R:
        return self.board.request(methods.with_defaults(call, self.agent, self.project))

    def call_raw(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> Response:
        return Response(id=1, result=msgspec.Raw(self.board.answer(method, params)))

    def supports(self, feature: str) -> bool:
        return feature in FEATURES

    def close(self) -> None:
        pass

    def __enter__(self) -> Seat:
        return self


def _finish(awaitable: Awaitable[Any], method: str) -> Any:
    """Run a handler that never waits to its end; one that would wait is not a store test."""
    coroutine = cast(Coroutine[Any, Any, Any], awaitable)  # handlers are `async def`
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError(f"{method} waited: test it in the system tier")


class _Readers:
    """Reads on the board's connection, at once (a reader pool that never waits)."""

    def __init__(self, board: Board) -> None:
        self._board = board

    async def run(self, fn: Callable[..., R], *args: Any, share: object = None) -> R:
        return self._board.read(fn, *args)

    async def point_read(self, fn: Callable[..., R], *args: Any) -> R:
        return self._board.read(fn, *args)


class _Writer:
    """The writer's `submit`, run at once in one transaction of its own."""

    def __init__(self, board: Board) -> None:
        self._board = board

    async def submit(self, fn: Callable[..., R], *args: Any) -> R:
        return self._board.run(fn, *args)


def _services(board: Board) -> Services:
    """What the non-blocking handlers touch of `Services`, on this board."""
    return cast(
        Services,
        types.SimpleNamespace(
            readers=_Readers(board),
            writer=_Writer(board),
            clock=board.time,
            lifecycle=Lifecycle(),
            draining=False,
            matching=lambda paths: contextlib.nullcontext(),
        ),
    )


@contextlib.contextmanager
def open_board(store: WriteStore, clock: ManualClock, backend: str) -> Iterator[Board]:
    store.open()
    try:
        yield Board(store, clock, backend=backend)
    finally:
        store.close()
