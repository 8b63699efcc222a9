"""LISTEN on its own thread: another daemon committed, so look at the log.

A notification is only a doorbell (TEAM-MODE.md section 4): the log is the
truth, read by the daemon's `LogFollower` in seq order. A listener that was
disconnected misses notifications for good, so after every (re)connect it
LISTENs first and then rings once, which makes the follower catch up and
every reservation waiter look again.
"""

from __future__ import annotations

import json
import logging
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
        self._conn: psycopg.Connection[Any] | None = None

    def start(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._thread = threading.Thread(target=self._run, name="coordd-doorbell", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * Limits.team_poll_s + 1)

    def _ring(self, callback: Callable[..., None], *args: Any) -> None:
        assert self._token is not None
        try:
            self._token.run_sync_soon(callback, *args)
        except trio.RunFinishedError:
            self._stopping.set()

    def _run(self) -> None:
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
            for notice in conn.notifies(timeout=Limits.team_poll_s, stop_after=256):
                sender, subject = _parse(notice.payload)
                if sender == self._node:
                    continue  # our own commit: the writer handed it over already
                if notice.channel == EVENTS_CHANNEL:
                    rang_events = True
                else:
                    self._ring(self._on_reservations, subject)
            if rang_events:
                self._ring(self._on_events)


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
