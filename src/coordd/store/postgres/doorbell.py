"""LISTEN on its own thread: another daemon committed, so look at the log.

A notification is only a doorbell (TEAM-MODE.md section 4): the log is the
truth, read by the daemon's `LogFollower` in seq order. A listener that was
disconnected misses notifications for good, so after every (re)connect it
LISTENs first and then rings once, which makes the follower catch up and
every reservation waiter look again.

The thread waits in `select` on the connection and on one end of a socket
pair, whose other end `stop` writes to: a stop wakes it at once, instead of
at its next look at a stop flag (once a `team_poll_s`, which made a team-mode
stop take a second).
"""

from __future__ import annotations

import json
import logging
import select
import socket
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import trio

from coordd.limits import Limits
from coordd.store.postgres import connection as pg
from coordd.store.postgres.writer import EVENTS_CHANNEL, RESERVATIONS_CHANNEL

log = logging.getLogger(__name__)


class Doorbell:
    """Calls `on_events()` or `on_reservations(project | None)` on the trio thread, and
    `on_connected()` each time it has (re)connected: the store is reachable."""

    def __init__(
        self,
        dsn: str,
        node: str,
        on_events: Callable[[], None],
        on_reservations: Callable[[str | None], None],
        on_connected: Callable[[], None],
    ) -> None:
        self._dsn = dsn
        self._node = node
        self._on_events = on_events
        self._on_reservations = on_reservations
        self._on_connected = on_connected
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: Set once LISTEN is in place (the first time): the daemon serves after it, so
        #: the catch-up ring of a late first connect cannot retry a fresh waiter.
        self.listening = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        #: `stop` writes a byte to the first; the thread selects on the second.
        self._pair: tuple[socket.socket, socket.socket] | None = None
        #: Why the thread left (None while it runs): "woken" when `stop` woke it from
        #: its wait, "stopped" when it saw the stop between waits (connecting, say),
        #: "run finished" when the trio run it rang into had ended.
        self.left: str | None = None

    def start(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._pair = socket.socketpair()
        self._thread = threading.Thread(target=self._run, name="coordd-doorbell", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Wake the thread wherever it waits, and join it (bounded: a connect that
        hangs on an unreachable store is not waited for past the bound)."""
        self._stopping.set()
        if self._thread is None or self._pair is None:
            return  # never started
        wake, woken = self._pair
        try:
            wake.send(b"\0")
        except OSError:  # stopped before: the pair is closed, or its buffer is full
            pass
        self._thread.join(timeout=2 * Limits.team_poll_s + 1)
        if not self._thread.is_alive():  # else it may still select on `woken`
            wake.close()
            woken.close()

    def _ring(self, callback: Callable[..., None], *args: Any) -> None:
        assert self._token is not None
        try:
            self._token.run_sync_soon(callback, *args)
        except trio.RunFinishedError:
            self.left = "run finished"
            self._stopping.set()

    def _run(self) -> None:
        try:
            self._serve()
        finally:
            if self.left is None:
                self.left = "stopped"

    def _serve(self) -> None:
        complained = False
        while not self._stopping.is_set():
            try:
                conn = pg.connect(self._dsn, f"coordd-{self._node}-doorbell")
            except psycopg.Error as exc:
                if not complained:
                    log.warning("doorbell: cannot reach the team store: %s", pg.describe(exc))
                    complained = True
                self._stopping.wait(Limits.pg_reconnect_interval_s)
                continue
            complained = False
            try:
                with conn:
                    conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    conn.execute(f"LISTEN {RESERVATIONS_CHANNEL}")
                    self.listening.set()
                    # Listening now: whatever was missed while away is in the log.
                    self._ring(self._on_connected)
                    self._ring(self._on_events)
                    self._ring(self._on_reservations, None)
                    self._listen(conn)
            except psycopg.Error as exc:
                if not self._stopping.is_set():
                    log.warning("doorbell: lost the team store: %s", pg.describe(exc))

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stopping.is_set():
            rang_events = False
            # What arrived is read without waiting (timeout 0 polls once), the
            # notifications psycopg kept from the LISTENs included; then wait for more.
            for notice in conn.notifies(timeout=0, stop_after=256):
                sender, subject = _parse(notice.payload)
                if sender == self._node:
                    continue  # our own commit: the writer handed it over already
                if notice.channel == EVENTS_CHANNEL:
                    rang_events = True
                else:
                    self._ring(self._on_reservations, subject)
            if rang_events:
                self._ring(self._on_events)
            assert self._pair is not None
            woken = self._pair[1].fileno()
            ready, _, _ = select.select([conn.fileno(), woken], [], [])
            if woken in ready:
                self.left = "woken"
                return


def _parse(payload: str) -> tuple[str | None, str | None]:
    """`[node, subject]` as the writer sends it; anything else rings for everything."""
    try:
        sender, subject = json.loads(payload)
    except (ValueError, TypeError):
        return None, None
    return (
        sender if isinstance(sender, str) else None,
        subject if isinstance(subject, str) else None,
    )
