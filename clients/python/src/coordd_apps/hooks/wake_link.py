"""The wake hook's way back to the board: a connection made again after the daemon goes.

An idle tab's waiter may outlive the daemon it waits on (a crash, `kill -9`, a
restart for an upgrade). A waiter that gave up then would leave the tab asleep
until the person types, with its messages and assignments unread. So the
waiter keeps trying to reach the board, at first often and then every
`RETRY_MAX_S`, for as long as it would have waited: until its host process is
gone or its own time is up. Where a client may start a daemon (autostart not
turned off), it starts one on the socket it used, at most once every
`START_EVERY_S`; a socket keeps its board (`autostart`), so that daemon
serves the store the last one served.

A daemon that answers on that socket but serves another board than the one
the waiter first reached is not waited on: the waiter stops and says so
(`WrongBoard`), as the tab's other surfaces refuse it.
"""

from __future__ import annotations

import time
from pathlib import Path

from coordd_client import tabs
from coordd_client.client import Client
from coordd_wire.errors import (
    DaemonUnavailable,
    Overloaded,
    ProtocolError,
    ShuttingDown,
    WrongBoard,
)
from coordd_wire.server_info import ServerInfo

#: What a daemon going away (or being too busy for a moment) looks like to a waiter:
#: each is met by connecting again, never by giving up.
GONE = (DaemonUnavailable, ShuttingDown, Overloaded, ProtocolError)
#: Seconds before the first attempt to connect again; doubled after each failure.
RETRY_FIRST_S = 0.1
#: The longest pause between two attempts: a message sent once the daemon is back
#: wakes the tab within about this long.
RETRY_MAX_S = 2.0
#: A waiter starts a daemon at most this often (a start that fails, say on a store
#: that is gone, is not repeated at every attempt).
START_EVERY_S = 30.0


class Link:
    """Connections to one socket's board for one waiter, made until it stops waiting."""

    def __init__(
        self,
        socket: Path,
        *,
        autostart: bool,
        derived: bool,
        host: tabs.Process | None,
        deadline: float,
    ) -> None:
        self.socket = socket
        self.autostart = autostart
        self.derived = derived
        self.host = host
        self.deadline = deadline
        #: The board of the first daemon reached (None: not yet, or a daemon without ids).
        self.board: str | None = None
        #: How many connections were made (the first, then one per return of the daemon).
        self.connections = 0
        self._started_at: float | None = None

    def over(self) -> bool:
        """The waiter's time is up, or its host process (the tab) is gone."""
        if self.deadline - time.monotonic() <= 0:
            return True
        return self.host is not None and not tabs.alive(self.host)

    def open(self) -> tuple[Client, ServerInfo] | None:
        """A connected client and the daemon's `server.info`; None when the waiter's time
        ran out or its host went while the daemon was away. Raises `WrongBoard` when the
        daemon reached serves another board than the first one did."""
        delay = RETRY_FIRST_S
        while True:
            client: Client | None = None
            try:
                client = self._connect()
                info = client.server_info()
            except GONE:
                if client is not None:
                    client.close()
            else:
                self._check_board(client, info)
                self.connections += 1
                return client, info
            if self.over():
                return None
            time.sleep(max(0.0, min(delay, self.deadline - time.monotonic())))
            delay = min(delay * 2, RETRY_MAX_S)

    def _connect(self) -> Client:
        try:
            return Client(self.socket).connect()
        except DaemonUnavailable:
            if not self._may_start_now():
                raise
        from coordd_client.autostart import connect  # only a waiter whose daemon went

        self._started_at = time.monotonic()
        return connect(self.socket, autostart=True, derived=self.derived)

    def _may_start_now(self) -> bool:
        if not self.autostart:
            return False
        return self._started_at is None or time.monotonic() - self._started_at >= START_EVERY_S

    def _check_board(self, client: Client, info: ServerInfo) -> None:
        if self.board is None:
            self.board = info.board_id
            return
        if info.board_id is None or info.board_id == self.board:
            return
        client.close()
        raise WrongBoard(
            f"the daemon on {client.socket_path} came back serving board {info.board_id},"
            f" not board {self.board}, which this tab was waiting on",
            expected=self.board,
            reached=info.board_id,
            socket=str(client.socket_path),
        )
