"""Background duties run through the writer: the lease reaper, event retention, the watchdog."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import timedelta

import trio

from coordd.clock import format_time
from coordd.events import EventHub
from coordd.platform.systemd import Notifier
from coordd.store import queries
from coordd.store.writer import Writer
from coordd_client.protocol.errors import CoordError, ShuttingDown

log = logging.getLogger(__name__)

#: The reaper's period: PROTOCOL.md asks for at least once a second.
REAP_INTERVAL_S = 0.5


async def run_reaper(writer: Writer) -> None:
    while True:
        await trio.sleep(REAP_INTERVAL_S)
        try:
            expired = await writer.submit(queries.reap_expired)
        except ShuttingDown:
            return
        except CoordError as exc:
            log.warning("reaper: %s", exc.message)
            continue
        if expired:
            log.info("reaper returned %d expired claim(s) to pending", expired)


@dataclass(frozen=True)
class Retention:
    """How much of the event log to keep: events older than `max_age_s` or
    beyond the newest `max_events` go, but never one a live subscriber has not
    yet been given."""

    max_age_s: float = 7 * 24 * 3600.0
    max_events: int = 1_000_000
    interval_s: float = 60.0
    batch: int = 10_000


def trim_events(txn: queries.Txn, retention: Retention, keep_after: int) -> int:
    """Delete old events in one bounded batch; never those after `keep_after`."""
    cutoff_time = format_time(txn.now - timedelta(seconds=retention.max_age_s))
    newest = queries.last_seq(txn.conn)
    count_cutoff = newest - retention.max_events
    (by_age,) = txn.conn.execute(
        "SELECT coalesce(max(seq), 0) FROM events WHERE at < ?", (cutoff_time,)
    ).fetchone()
    limit = min(max(by_age, count_cutoff), keep_after)
    if limit <= 0:
        return 0
    cursor = txn.conn.execute(
        "DELETE FROM events WHERE seq IN"
        " (SELECT seq FROM events WHERE seq <= ? ORDER BY seq LIMIT ?)",
        (limit, retention.batch),
    )
    return cursor.rowcount


async def run_retention(writer: Writer, hub: EventHub, retention: Retention) -> None:
    while True:
        await trio.sleep(retention.interval_s)
        try:
            deleted = await writer.submit(trim_events, retention, hub.oldest_subscriber_position())
        except ShuttingDown:
            return
        except CoordError as exc:
            log.warning("event retention: %s", exc.message)
            continue
        if deleted:
            log.info("event retention removed %d old event(s)", deleted)


#: How long the writer may take to answer a no-op before the watchdog stays silent.
WATCHDOG_PROBE_TIMEOUT_S = 5.0


def _noop(conn: sqlite3.Connection) -> None:
    return None


async def run_watchdog(writer: Writer, notifier: Notifier) -> None:
    """WATCHDOG=1 at half the interval, only after a round trip through the writer thread."""
    assert notifier.watchdog_interval_s
    interval = notifier.watchdog_interval_s / 2
    while True:
        with trio.move_on_after(min(WATCHDOG_PROBE_TIMEOUT_S, interval)):
            try:
                await writer.submit_outside_transaction(_noop)
            except ShuttingDown:
                return
            except CoordError:
                pass
            else:
                notifier.notify("WATCHDOG=1")
        await trio.sleep(interval)
