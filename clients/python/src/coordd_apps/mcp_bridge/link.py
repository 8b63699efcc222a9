"""The MCP server's connection to the daemon: opened on first use, replaced when it breaks.

A tool call never retries a request it sent (its outcome may be unknown),
except a claim, whose key makes asking again safe, and a release, which asks
again as a `repeat` (`claim_retry`); it only
refuses to use a connection already seen broken, so after a daemon restart
the next tool call connects afresh (finding the user's daemon or starting
one if allowed, as the CLI does).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import trio

from coordd_client import boards, methods, tabs
from coordd_client.aio import AsyncClient
from coordd_client.autostart import start_and_wait
from coordd_client.discovery import SocketRoute
from coordd_client.rpc import unwrap
from coordd_wire.errors import DaemonUnavailable
from coordd_wire.rendezvous import users_board

#: Seconds a call other than a wait may take before the tool reports the daemon stuck.
CALL_TIMEOUT_S = 60.0
#: Extra seconds beyond a wait's own time for its answer to arrive.
WAIT_SLACK_S = 10.0


class DaemonLink:
    def __init__(
        self,
        nursery: trio.Nursery,
        route: SocketRoute,
        *,
        autostart: bool,
        environ: Mapping[str, str] | None = None,
        process: int | None = None,
    ) -> None:
        self._nursery = nursery
        #: The tab's `coord mcp` process (None: this one): its tab's board is checked.
        self._process = process
        #: The tab's environment (default: this process's): where it looks for the
        #: user's daemon and what a daemon it starts inherits.
        self._environ = environ
        self.route = route
        #: The socket of the connection in use (or last tried), for `whoami`.
        self.socket_path = route.path
        self._autostart = autostart
        self._client: AsyncClient | None = None
        self._connecting = trio.Lock()

    async def request(self, call: methods.Call[Any]) -> dict[str, Any]:
        """The method's result object, as the daemon sent it (fields a newer daemon adds
        included); a protocol error raises its `CoordError`.

        A claim is asked again with its `request_key`, on a new connection, when
        its answer was lost (`claim_retry`), so that a tool call learns the task
        it won rather than leaving it held by nobody; a release (or a fail with
        retry) is asked again as a `repeat`, so that one that went through is
        not reported lost once another agent took the task.
        """
        from coordd_client import claim_retry

        client = await self._connected()
        if call.method in methods.KEYED_METHODS and await client.supports("claim_request_key"):
            first = claim_retry.keyed(call)
        elif call.method in methods.REPEATABLE_METHODS and await client.supports("holder_repeat"):
            first = call
        else:
            return await self._request_on(client, call)
        return await claim_retry.retrying_async(
            first, partial(self._request_on, client), self._request_anew, trio.sleep
        )

    async def _request_anew(self, call: methods.Call[Any]) -> dict[str, Any]:
        return await self._request_on(await self._connected(), call)

    async def _request_on(self, client: AsyncClient, call: methods.Call[Any]) -> dict[str, Any]:
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
        """Section 1's socket; else, if it was derived, the user's daemon found elsewhere
        (`discovery`: hosts such as Codex drop `$XDG_RUNTIME_DIR`); else a daemon
        started there, if allowed. Looked up afresh on every reconnect."""
        async with self._connecting:
            if self._client is not None and not self._client.broken:
                return self._client
            if self._client is not None:
                await self._client.aclose()
                self._client = None
            client = await self._open()
            try:
                await self._check_board(client)
            except BaseException:
                await client.aclose()
                raise
            self._client = client
            return client

    async def _check_board(self, client: AsyncClient) -> None:
        """Refuse a daemon that serves another board than this tab's (`boards.py`):
        this server may have found, or started, another one than the tab's hooks use."""
        tab = await trio.to_thread.run_sync(lambda: tabs.find(of=self._process))
        if tab is None or tab.board is None:
            return
        info = await client.request(methods.server_info())
        refusal = boards.mismatch(tab, info.board_id, self.socket_path)
        if refusal is not None:
            raise refusal

    async def _open(self) -> AsyncClient:
        prefer = await self._tab_board()
        try:
            client = await self._open_at(self.route.path)
        except DaemonUnavailable as unavailable:
            return await self._elsewhere(unavailable, prefer)
        try:  # a derived socket answers: there, unless the board this tab means is elsewhere
            where = await trio.to_thread.run_sync(
                lambda: self.route.rerouted(self._environ, prefer=prefer)
            )
        except BaseException:
            await client.aclose()
            raise
        if where == self.route.path:
            return client
        await client.aclose()
        return await self._open_at(where)

    async def _elsewhere(self, unavailable: DaemonUnavailable, prefer: str | None) -> AsyncClient:
        """Nobody answers on the socket: the user's daemon found elsewhere (never for an
        asked-for socket), else one started there if allowed."""
        found = await trio.to_thread.run_sync(
            lambda: self.route.fallback(self._environ, prefer=prefer)
        )
        if found is not None:
            return await self._open_at(found.socket)
        if not self._autostart:
            raise unavailable
        socket = await trio.to_thread.run_sync(self._start_daemon)
        return await self._open_at(socket)

    async def _tab_board(self) -> str | None:
        """The board this server's tab works on, else the user's board: which one it
        means when several are live (`discovery.preferred_board`, for the tab's process)."""

        def look() -> str | None:
            tab = tabs.find(of=self._process)
            if tab is not None and tab.board is not None:
                return tab.board
            board = users_board(self._environ)
            return None if board is None else board.board_id

        return await trio.to_thread.run_sync(look)

    async def _open_at(self, path: Path) -> AsyncClient:
        self.socket_path = path
        return await AsyncClient.open(self._nursery, path)

    def _start_daemon(self) -> Path:
        return start_and_wait(self.route.path, self._environ, may_reroute=not self.route.explicit)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
