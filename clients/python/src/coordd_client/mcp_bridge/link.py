"""The MCP server's connection to the daemon: opened on first use, replaced when it breaks.

A tool call never retries a request it sent (its outcome may be unknown);
it only refuses to use a connection already seen broken, so after a daemon
restart the next tool call connects afresh (starting a daemon if allowed,
as the CLI does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from coordd_client import methods
from coordd_client.aio import AsyncClient
from coordd_client.autostart import start_daemon, wait_until_ready
from coordd_client.protocol.errors import DaemonUnavailable
from coordd_client.rpc import unwrap

#: Seconds a call other than a wait may take before the tool reports the daemon stuck.
CALL_TIMEOUT_S = 60.0
#: Extra seconds beyond a wait's own time for its answer to arrive.
WAIT_SLACK_S = 10.0


class DaemonLink:
    def __init__(self, nursery: trio.Nursery, socket_path: Path, *, autostart: bool) -> None:
        self._nursery = nursery
        self.socket_path = socket_path
        self._autostart = autostart
        self._client: AsyncClient | None = None
        self._connecting = trio.Lock()

    async def request(self, call: methods.Call[Any]) -> dict[str, Any]:
        """The method's result object, as the daemon sent it (fields a newer daemon adds
        included); a protocol error raises its `CoordError`."""
        client = await self._connected()
        with trio.move_on_after(call.waits_s + WAIT_SLACK_S if call.waits_s else CALL_TIMEOUT_S):
            response = await client.call_raw(call.method, call.params)
            result: dict[str, Any] = unwrap(response, dict[str, Any])
            return result
        raise DaemonUnavailable(
            f"coordd did not answer {call.method} within the time allowed; the outcome is"
            " unknown (claims, completions and posts are safe to repeat)",
            outcome="unknown",
        )

    async def typed(self, call: methods.Call[Any]) -> Any:
        """The result decoded to the builder's type (for the server's own use)."""
        client = await self._connected()
        return await client.request(call)

    async def _connected(self) -> AsyncClient:
        async with self._connecting:
            if self._client is not None and not self._client.broken:
                return self._client
            if self._client is not None:
                await self._client.aclose()
                self._client = None
            try:
                self._client = await AsyncClient.open(self._nursery, self.socket_path)
            except DaemonUnavailable:
                if not self._autostart:
                    raise
                await trio.to_thread.run_sync(self._start_daemon)
                self._client = await AsyncClient.open(self._nursery, self.socket_path)
            return self._client

    def _start_daemon(self) -> None:
        wait_until_ready(self.socket_path, spawned=start_daemon(self.socket_path))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
