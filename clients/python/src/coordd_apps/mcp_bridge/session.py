"""One tab's MCP session over any byte stream: the relay's socket, or this process's stdio.

The SDK's `stdio_server` reads lines without a bound and drops a line it
cannot parse without a word to the client (the host then waits on that
request until it times out: issue 29 item 15). This reader is the MCP stdio
transport as the specification words it, plus the answers it leaves out:

- lines are read with `mcp_relay.lines`' 4 MiB bound; a longer line is
  answered -32600 (id null) and dropped as it arrives, never held whole;
- a line that is not JSON is answered -32700 (id null);
- JSON that is not a JSON-RPC message is answered -32600, with its id when it
  has one;
- and the session goes on after each.

Everything else is the SDK's own: each line that is a message goes to the
low-level server's `run` as a `SessionMessage`, and what it sends back is
written one JSON line each, as `stdio_server` writes them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import anyio
import trio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter
from pydantic import ValidationError

from coordd_apps.mcp_bridge.bridge import TabSession, enter
from coordd_apps.mcp_bridge.link import DaemonLink
from coordd_apps.mcp_relay.lines import (
    INVALID_REQUEST,
    OVERLONG_ANSWER,
    PARSE_ERROR,
    LineSplitter,
    error_line,
)
from coordd_client.discovery import SocketRoute
from coordd_client.identity import Resolved, host_project

#: Bytes read from the stream at a time.
CHUNK = 65536

NOT_JSON = error_line(PARSE_ERROR, "Parse error: the line is not JSON")

Send = Callable[[bytes], Awaitable[None]]


class ByteStream(Protocol):
    """What a session needs of its transport (a trio `SocketStream`, a `StapledStream`
    of stdio's descriptors, or the shared server's stream with the hello's rest)."""

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray: ...

    async def send_all(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Tab:
    """Who a session serves, as its `coord mcp` process saw itself."""

    env: dict[str, str]
    #: The tab's working directory (None: this process's).
    cwd: str | None
    #: The tab's `coord mcp` process (None: this process).
    process: int | None
    host: str | None
    project: str | None
    route: SocketRoute
    autostart: bool


async def serve(server: MCPServer, stream: ByteStream, tab: Tab) -> None:
    """Serve `tab` on `stream` until its input ends, then close the stream."""
    async with trio.open_nursery() as nursery:
        link = DaemonLink(
            nursery, tab.route, autostart=tab.autostart, environ=tab.env, process=tab.process
        )
        if tab.project:
            project = Resolved(tab.project, "--project")
        else:  # git runs here: in a thread, so other tabs' sessions go on meanwhile
            project = await trio.to_thread.run_sync(host_project, tab.env, tab.cwd)
        enter(TabSession(link, tab.env, tab.host, project, tab.process))
        try:
            await _run(server, stream)
        finally:
            await link.aclose()
            nursery.cancel_scope.cancel()


async def _run(server: MCPServer, stream: ByteStream) -> None:
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async uses it so
    to_server, from_reader = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_writer, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    sending = trio.Lock()

    async def send(data: bytes) -> None:
        async with sending:
            await stream.send_all(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_read, stream, to_server, send)
        nursery.start_soon(_write, from_server, send)
        async with to_writer:
            await lowlevel.run(from_reader, to_writer, lowlevel.create_initialization_options())
    await stream.aclose()


async def _read(
    stream: ByteStream, to_server: MemoryObjectSendStream[SessionMessage | Exception], send: Send
) -> None:
    splitter = LineSplitter()
    async with to_server:
        while True:
            try:
                data = bytes(await stream.receive_some(CHUNK))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            lines = splitter.feed(data) if data else splitter.end()
            for line in lines:
                if line is None:
                    await send(OVERLONG_ANSWER)
                    continue
                message, refusal = parse(line)
                if refusal is not None:
                    await send(refusal)
                elif message is not None:
                    await to_server.send(message)
            if not data:
                return


async def _write(from_server: MemoryObjectReceiveStream[SessionMessage], send: Send) -> None:
    async with from_server:
        async for outgoing in from_server:
            text = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
            try:
                await send(text.encode() + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return  # the tab is gone; its session ends with its input


def parse(line: bytes) -> tuple[SessionMessage | None, bytes | None]:
    """A message for the SDK, or the answer to a line that is not one."""
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False)), None
    except ValidationError:
        pass
    try:
        document = json.loads(line)
    except (ValueError, RecursionError):
        return None, NOT_JSON
    ident = document.get("id") if isinstance(document, dict) else None
    if not isinstance(ident, (str, int)) or isinstance(ident, bool):
        ident = None
    answer = {
        "jsonrpc": "2.0",
        "id": ident,
        "error": {"code": INVALID_REQUEST, "message": "Invalid Request: not a JSON-RPC message"},
    }
    return None, json.dumps(answer).encode() + b"\n"
