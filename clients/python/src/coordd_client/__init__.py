"""Thin client for coordd: a blocking `Client`, a trio `AsyncClient` (extra `trio`),
typed results, and one exception per error kind."""

from coordd_client.client import Client, EventStream
from coordd_client.errors import (
    Conflict,
    CoordError,
    DaemonUnavailable,
    InternalError,
    InvalidParams,
    LeaseLost,
    NotFound,
    Overloaded,
    ProtocolError,
    ShuttingDown,
)
from coordd_client.paths import default_socket_path
from coordd_client.wire import Event, Task

__all__ = [
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
    "ShuttingDown",
    "Task",
    "default_socket_path",
]
