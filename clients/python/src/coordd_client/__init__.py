"""Thin client for coordd: a blocking `Client`, a trio `AsyncClient` (extra `trio`),
typed results, and one exception per error kind.

The library's face, imported eagerly: every name below but `AsyncClient` is loaded
with the package. Nothing that must stay cheap imports this package any more: the
daemon imports the wire package (`coordd_wire`) alone, and the quick relay and `coord
mcp`'s relay are apps (`coordd_apps`) that import `coordd_wire.location` and the
standard library only (issue 45 item 2).

`AsyncClient` alone is loaded on first use (PEP 562): its module imports trio, which
the client-only install has only with its `trio` extra (`pip install
'./clients/python[trio]'`), so `import coordd_client` must work without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordd_client.client import Client, EventStream
from coordd_client.identity import (
    default_agent,
    default_project,
    resolve_agent,
    resolve_project,
)
from coordd_wire.errors import (
    Blocked,
    Conflict,
    CoordError,
    DaemonUnavailable,
    InternalError,
    InvalidParams,
    LeaseLost,
    NotFound,
    Overloaded,
    ProtocolError,
    RecipientNeverSeen,
    Reserved,
    ShuttingDown,
    UntrustedSocket,
)
from coordd_wire.paths import default_socket_path
from coordd_wire.wire import Event, Reservation, Task

if TYPE_CHECKING:
    from coordd_client.aio import AsyncClient

__all__ = [
    "AsyncClient",
    "Blocked",
    "Client",
    "Conflict",
    "CoordError",
    "DaemonUnavailable",
    "Event",
    "EventStream",
    "InternalError",
    "InvalidParams",
    "LeaseLost",
    "NotFound",
    "Overloaded",
    "ProtocolError",
    "RecipientNeverSeen",
    "Reservation",
    "Reserved",
    "ShuttingDown",
    "Task",
    "UntrustedSocket",
    "default_agent",
    "default_project",
    "default_socket_path",
    "resolve_agent",
    "resolve_project",
]


def __getattr__(name: str) -> Any:
    """`AsyncClient`, imported with trio on first use (above: trio is an extra)."""
    if name == "AsyncClient":
        from coordd_client.aio import AsyncClient

        return AsyncClient
    raise AttributeError(f"module 'coordd_client' has no attribute {name!r}")
