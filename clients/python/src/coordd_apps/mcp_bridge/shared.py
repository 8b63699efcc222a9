"""The shared MCP server: the SDK loaded once, every tab's relay served as its own session.

`python -m coordd_apps.mcp_bridge.shared --socket PATH --ready-fd N`, started
by the first tab's relay (`coordd_apps.mcp_relay.relay`) in a session of
its own. It binds `PATH` (0600, in the private directory the relay checked;
a stale socket nobody answers on is replaced), builds the server once, and
writes `ready` to fd N. Then, for each connection:

1. the peer must be this user (`SO_PEERCRED`; macOS `LOCAL_PEERCRED`), or it
   is closed before a byte is read;
2. its first line, within `HELLO_DEADLINE_S`, is the hello (`hello.py`),
   answered `ok` or `refused <why>`;
3. then it is one MCP session (`session.serve`) with the tab's own agent,
   project and daemon connection, until the relay closes its side.

It exits on its own: after `IDLE_S` with no relay connected (10 minutes;
`$COORD_MCP_IDLE_S` changes it), or within `WATCH_S` of its socket file being
removed or replaced, or of `$HOME` going away (a test's private machine
torn down, the user's runtime directory cleaned at logout): a server nobody
can reach serves nobody. After an upgrade (the code installed now is not the
code it loaded, `_upgraded`) it exits as soon as no relay is connected.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import socket
import sys
from collections.abc import Sequence

import trio
from mcp.server.mcpserver import MCPServer

from coordd_apps.cli.registry import package_version
from coordd_apps.mcp_bridge.hello import Refused, tab_of
from coordd_apps.mcp_bridge.server import build_server
from coordd_apps.mcp_bridge.session import serve
from coordd_apps.mcp_relay.lines import MAX_LINE_BYTES
from coordd_apps.mcp_relay.place import code_stamp
from coordd_wire.peercred import peer_uid

#: Seconds with no relay connected before the server exits.
IDLE_S = 600.0
IDLE_ENV = "COORD_MCP_IDLE_S"
#: Seconds between checks that the socket and the home are still there.
WATCH_S = 2.0
#: Seconds a connection has to send its hello (a relay sends it at once).
HELLO_DEADLINE_S = 10.0
#: Connections waiting to be accepted.
BACKLOG = 128

log = logging.getLogger("coord.mcp.shared")


class _Relays:
    """How many relays are connected, and since when none is."""

    def __init__(self) -> None:
        self.connected = 0
        self.idle_since = trio.current_time()

    def opened(self) -> None:
        self.connected += 1

    def closed(self) -> None:
        self.connected -= 1
        if self.connected == 0:
            self.idle_since = trio.current_time()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="coordd_apps.mcp_bridge.shared")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--ready-fd", type=int, default=None)
    args = parser.parse_args(argv)
    os.chdir("/")  # hold no tab's directory busy
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
    trio.run(_serve, args.socket, args.ready_fd, idle)
    return 0


async def _serve(path: str, ready_fd: int | None, idle_s: float) -> None:
    listener = await _bind(path)
    mine = os.stat(path)
    server = build_server(package_version())
    # Everything loaded so far (the SDK, pydantic's schemas: most of the heap) lives as
    # long as the process. Frozen, the collector stops walking it: without this, the
    # first full collection, early in the second tab's session, took 0.1-0.2 s.
    gc.collect()
    gc.freeze()
    if ready_fd is not None:
        os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    relays = _Relays()
    try:
        async with trio.open_nursery() as nursery:
            identity = (mine.st_dev, mine.st_ino)
            nursery.start_soon(_watch, path, identity, relays, idle_s, nursery.cancel_scope)
            while True:
                sock, _ = await listener.accept()
                nursery.start_soon(_connection, server, sock, relays)
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            now = os.stat(path)
            if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                os.unlink(path)


async def _bind(path: str) -> trio.socket.SocketType:
    """Listen on `path`, replacing a stale socket file (one nobody accepts on). The relay
    that started this process holds the start lock, so no live server is replaced."""
    with contextlib.suppress(FileNotFoundError):
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)
        else:
            raise SystemExit(f"another shared MCP server already listens on {path}")
        finally:
            probe.close()
    listener = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is born 0600
    try:
        await listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(BACKLOG)
    return listener


async def _watch(
    path: str, mine: tuple[int, int], relays: _Relays, idle_s: float, scope: trio.CancelScope
) -> None:
    """Stop the server (cancel `scope`) when it is idle or can no longer be reached."""
    home = os.environ.get("HOME")
    while True:
        await trio.sleep(WATCH_S)
        why = _why_stop(path, mine, home)
        idle = relays.connected == 0 and trio.current_time() - relays.idle_since >= idle_s
        if why is None and idle:
            why = f"no relay for {idle_s:g} s"
        if why is None and relays.connected == 0 and _upgraded(path):
            why = "no relay connected, and the code installed now is not the code it loaded"
        if why is not None:
            log.warning("coord mcp shared server exits: %s", why)
            scope.cancel()
            return


def _upgraded(path: str) -> bool:
    """Whether the code installed now has another stamp than this server's socket is
    named for (`mcp-<stamp>.sock`, `mcp_relay.place`): relays started now go to a
    server of the new code, so this one retires once its last relay is gone rather
    than idling for `IDLE_S`. A relay still connected keeps it: ending a tab's session
    under it would fail that tab's MCP server."""
    stamp = os.path.basename(path).removesuffix(".sock").rpartition("-")[2]
    return code_stamp(os.environ.get("HOME") or os.path.expanduser("~")) != stamp


def _why_stop(path: str, mine: tuple[int, int], home: str | None) -> str | None:
    try:
        now = os.stat(path)
    except OSError:
        return f"its socket {path} is gone"
    if (now.st_dev, now.st_ino) != mine:
        return f"its socket {path} was replaced"
    if home and not os.path.isdir(home):
        return f"the home {home} is gone"
    return None


async def _connection(server: MCPServer, sock: trio.socket.SocketType, relays: _Relays) -> None:
    stream = trio.SocketStream(sock)
    relays.opened()
    try:
        uid, pid = _peer(sock)
        if uid is not None and uid != os.geteuid():
            return  # another user's: not a byte read
        with trio.move_on_after(HELLO_DEADLINE_S):
            line, rest = await _hello_line(stream)
        if line is None:
            return
        try:
            tab = tab_of(line, pid)
        except Refused as exc:
            await stream.send_all(b"refused " + str(exc).encode(errors="replace") + b"\n")
            return
        await stream.send_all(b"ok\n")
        await serve(server, _Prefixed(stream, rest), tab)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the relay went away
    except Exception:
        log.exception("a tab's session failed")  # one tab's failure is not every tab's
    finally:
        relays.closed()
        await stream.aclose()


def _peer(sock: trio.socket.SocketType) -> tuple[int | None, int | None]:
    """The peer's uid and pid where the platform tells (Linux: both)."""
    if hasattr(socket, "SO_PEERCRED"):
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        pid, uid, _gid = (int.from_bytes(raw[i : i + 4], sys.byteorder) for i in (0, 4, 8))
        return uid, pid
    return peer_uid(sock), None  # type: ignore[arg-type]


async def _hello_line(stream: trio.SocketStream) -> tuple[bytes | None, bytes]:
    """The first line, and what came after it; (None, b"") if the stream ended first."""
    received = bytearray()
    while b"\n" not in received:
        if len(received) > MAX_LINE_BYTES:
            return None, b""
        data = await stream.receive_some(65536)
        if not data:
            return None, b""
        received += data
    line, _, rest = bytes(received).partition(b"\n")
    return line, rest


class _Prefixed:
    """A stream that yields `first` before what it reads from `inner`."""

    def __init__(self, inner: trio.SocketStream, first: bytes) -> None:
        self._inner = inner
        self._first = first

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._first:
            first, self._first = self._first, b""
            return first
        return await self._inner.receive_some(max_bytes)

    async def send_all(self, data: bytes) -> None:
        await self._inner.send_all(data)

    async def aclose(self) -> None:
        await self._inner.aclose()


if __name__ == "__main__":
    sys.exit(main())
