"""Thin client for coordd: a blocking `Client`, a trio `AsyncClient` (extra `trio`),
typed results, and one exception per error kind.

The names below are loaded on first use (PEP 562), so importing
`coordd_wire` (as the daemon does) loads no client.
"""

from __future__ import annotations

#: Not `typing`'s: importing `typing` would cost `coord mcp`'s relay (this package is
#: imported before it) about a bare interpreter's start again; mypy reads it the same.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from coordd_client.aio import AsyncClient
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

#: Where each public name lives (kept in step with `__all__` by a test).
_HOMES = {
    "Client": "coordd_client.client",
    "AsyncClient": "coordd_client.aio",
    "EventStream": "coordd_client.client",
    "Event": "coordd_wire.wire",
    "Task": "coordd_wire.wire",
    "Reservation": "coordd_wire.wire",
    "default_socket_path": "coordd_wire.paths",
    "default_agent": "coordd_client.identity",
    "default_project": "coordd_client.identity",
    "resolve_agent": "coordd_client.identity",
    "resolve_project": "coordd_client.identity",
    **dict.fromkeys(
        (
            "Conflict",
            "CoordError",
            "DaemonUnavailable",
            "InternalError",
            "InvalidParams",
            "LeaseLost",
            "NotFound",
            "Overloaded",
            "ProtocolError",
            "Blocked",
            "RecipientNeverSeen",
            "Reserved",
            "ShuttingDown",
            "UntrustedSocket",
        ),
        "coordd_wire.errors",
    ),
}

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
    import importlib  # here, not above: `coord mcp`'s relay imports this package

    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'coordd_client' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
