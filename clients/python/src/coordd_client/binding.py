"""A builder made a method of a client: the one wrapper each client applies to every
builder, in the generated `rpc_methods.py`.

A builder (`methods*.py`) turns typed arguments into a `Call`; as a method of
`Client` it sends that call and returns the decoded result, as one of `AsyncClient`
it awaits it. The wrapper keeps the builder's signature for the type checker
(`ParamSpec`), its name and its docstring.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from coordd_wire.method_table import Call

P = ParamSpec("P")
R = TypeVar("R")


class Requests(Protocol):
    """What a blocking client gives its methods: a call sent, its result returned."""

    def request(self, call: Call[R]) -> R: ...


class AsyncRequests(Protocol):
    """What the trio client gives its methods: a call sent, its result awaited."""

    async def request(self, call: Call[R]) -> R: ...


def sync_method(builder: Callable[P, Call[R]]) -> Callable[Concatenate[Requests, P], R]:
    def call(self: Requests, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.request(builder(*args, **kwargs))

    call.__name__ = builder.__name__
    call.__doc__ = builder.__doc__
    return call


def async_method(
    builder: Callable[P, Call[R]],
) -> Callable[Concatenate[AsyncRequests, P], Awaitable[R]]:
    async def call(self: AsyncRequests, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.request(builder(*args, **kwargs))

    call.__name__ = builder.__name__
    call.__doc__ = builder.__doc__
    return call
