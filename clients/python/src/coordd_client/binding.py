"""A builder made a method of a client: the one wrapper each client applies to every
builder, in the generated `rpc_methods.py`.

A builder (`methods*.py`) turns typed arguments into a `Call`; as a method of
`Client` it sends that call and returns the decoded result, as one of `AsyncClient`
it awaits it. The wrapper keeps the builder's signature for the type checker
(`ParamSpec`), and its name, docstring and signature for `help()` and IDEs: the
signature is set (`__signature__`, the builder's with `self` first), not reached
through `__wrapped__`, since a bound method would then drop the builder's first
parameter instead of `self`. Setting them costs about 1.3 ms once, where the
clients are imported.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

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

    _describe(call, builder)
    return call


def async_method(
    builder: Callable[P, Call[R]],
) -> Callable[Concatenate[AsyncRequests, P], Awaitable[R]]:
    async def call(self: AsyncRequests, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.request(builder(*args, **kwargs))

    _describe(call, builder)
    return call


_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)


def _describe(method: Callable[..., Any], builder: Callable[..., Any]) -> None:
    """`method` named, documented and signed as `builder`, taking `self` first and
    returning what the builder's `Call[...]` decodes to."""
    signature = inspect.signature(builder)
    returns = signature.return_annotation  # a string: the modules defer annotations
    if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
        returns = returns[len("Call[") : -1]
    method.__name__ = builder.__name__
    method.__module__ = builder.__module__
    method.__doc__ = builder.__doc__
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[_SELF, *signature.parameters.values()], return_annotation=returns
    )
