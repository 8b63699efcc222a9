"""A leased port that is free on this machine too (`coord port`, the MCP `lease_port`).

The daemon's `port.lease` knows only other leases: a port some other program
listens on (a database, another user's server, a process started without
coord) is handed out all the same. The client is on the machine where the port
will be used, so it checks: it binds the leased port on every address and on the
loopbacks (IPv6 where there is one), and when another program holds it, releases
that lease and leases
the next port up, at most `MAX_TRIES` times, saying which it skipped.

A renewal (the port this agent already held under the name) is not checked: the
program holding it is, as often as not, the agent's own server.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from dataclasses import dataclass

from coordd_client.client import Client
from coordd_wire.errors import Conflict
from coordd_wire.wire_slots import SlotResult

#: The daemon's default range (docs/PROTOCOL-1.2.md section 13).
DEFAULT_LOW = 20000
DEFAULT_HIGH = 29999
#: Ports in use by other programs skipped before giving up.
MAX_TRIES = 20
#: Where a port is tried: every address (a bind there fails while any address of
#: the family has a listener on the port: 127.0.0.2, this machine's LAN address),
#: and the loopbacks (a listener there with SO_REUSEADDR set may still share the
#: wildcard with us; a bind of its own address does not).
_ADDRESSES = (
    (socket.AF_INET, "0.0.0.0"),
    (socket.AF_INET6, "::"),
    (socket.AF_INET, "127.0.0.1"),
    (socket.AF_INET6, "::1"),
)


def in_use(port: int) -> bool:
    """Whether another program listens on `port`, at any address of this machine.

    SO_REUSEADDR as a server sets it, so a port with only closing connections left
    (TIME_WAIT) counts as free; a ::1 this machine does not have is passed over."""
    for family, host in _ADDRESSES:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 in this kernel
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((host, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return True
    return False


@dataclass(frozen=True)
class Leased:
    """The lease, and the ports leased first but given back: other programs held them."""

    result: SlotResult
    skipped: tuple[int, ...]

    def note(self) -> str:
        """What to tell the caller about the skipped ports ("" when none)."""
        if not self.skipped:
            return ""
        ports = ", ".join(str(p) for p in self.skipped)
        return f"skipped {ports}: in use by another program on this machine"


@dataclass(frozen=True)
class PortRequest:
    name: str
    agent: str | None = None
    project: str | None = None
    low: int | None = None
    high: int | None = None
    ttl_s: float | None = None
    task_id: int | None = None


def lease_free_port(
    client: Client, want: PortRequest, busy: Callable[[int], bool] = in_use
) -> Leased:
    """`port.lease`, then the bind check; a busy port's lease is released and the next
    port up leased (within the range, at most `MAX_TRIES` skips)."""
    before = client.slots(project=want.project, name=want.name).leases
    low = DEFAULT_LOW if want.low is None else want.low
    high = DEFAULT_HIGH if want.high is None else want.high
    skipped: list[int] = []
    while True:
        result = client.lease_port(
            want.name, agent=want.agent, project=want.project, low=low, high=high,
            ttl_s=want.ttl_s, task_id=want.task_id,
        )  # fmt: skip
        port = result.lease.port
        renewal = any(x.port == port and x.agent == result.lease.agent for x in before)
        if port is None or renewal or not busy(port):
            return Leased(result, tuple(skipped))
        skipped.append(port)
        client.release_slots([want.name], agent=want.agent, project=want.project)
        if port >= high or len(skipped) >= MAX_TRIES:
            raise Conflict(
                f"no port free on this machine: {', '.join(map(str, skipped))} were leased"
                " but another program holds each (their leases are given back);"
                " ask for another range",
                skipped=skipped,
            )
        low = port + 1
