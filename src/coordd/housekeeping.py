"""Background duties run through the writer: the lease reaper, event retention, the watchdog."""

from __future__ import annotations

import logging
import sqlite3

import trio

from coordd.events import EventHub
from coordd.limits import Limits, Retention
from coordd.platform.systemd import Notifier
from coordd.store import writes
from coordd.store.writer import Writer
from coordd_client.protocol.errors import CoordError, ShuttingDown

log = logging.getLogger(__name__)


async def run_reaper(writer: Writer) -> None:
    while True:
        await trio.sleep(Limits.reap_interval_s)
        try:
            expired = await writer.submit(writes.reap_expired)
        except ShuttingDown:
            return
        except CoordError as exc:
            log.warning("reaper: %s", exc.message)
            continue
        if expired:
            log.info("reaper returned %d expired claim(s) to pending", expired)


async def run_retention(writer: Writer, hub: EventHub, retention: Retention) -> None:
    while True:
        await trio.sleep(retention.interval_s)
        try:
            deleted = await writer.submit(
                writes.trim_events, retention, hub.oldest_subscriber_position()
            )
        except ShuttingDown:
            return
        except CoordError as exc:
            log.warning("event retention: %s", exc.message)
            continue
        if deleted:
            log.info("event retention removed %d old event(s)", deleted)


def _noop(conn: sqlite3.Connection) -> None:
    return None


async def run_watchdog(writer: Writer, notifier: Notifier) -> None:
    """WATCHDOG=1 at half the interval, only after a round trip through the writer thread."""
    assert notifier.watchdog_interval_s
    interval = notifier.watchdog_interval_s / 2
    while True:
        with trio.move_on_after(min(Limits.watchdog_probe_timeout_s, interval)):
            try:
                await writer.submit_outside_transaction(_noop)
            except ShuttingDown:
                return
            except CoordError:
                pass
            else:
                notifier.notify("WATCHDOG=1")
        await trio.sleep(interval)
