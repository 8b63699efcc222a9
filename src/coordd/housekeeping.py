"""Background duties run through the writer: the lease reaper, event retention, the watchdog."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

from coordd.limits import Limits, Retention
from coordd.platform.systemd import Notifier
from coordd.store import claims, edits, landing, messages_unseen, reservations, writes
from coordd.store.sql import Db
from coordd.store.transaction import Txn
from coordd.store.writer import Writer
from coordd_wire.errors import CoordError, ShuttingDown

log = logging.getLogger(__name__)


async def _every(
    interval_s: float, duty: Callable[[], Awaitable[int]], name: str, done: str
) -> None:
    """Run `duty` every `interval_s` until the daemon drains; log what it did.

    A refused run (the database locked, the disk full, the team store away)
    is logged and tried again next time: a background duty never takes the
    daemon down. The same refusal again is not logged again (a store down
    for an hour must not write 7,200 lines); the recovery is.
    """
    refused: str | None = None
    while True:
        await trio.sleep(interval_s)
        try:
            count = await duty()
        except ShuttingDown:
            return
        except CoordError as exc:
            if exc.message != refused:
                log.warning("%s: %s", name, exc.message)
                refused = exc.message
            continue
        if refused is not None:
            log.info("%s: running again", name)
            refused = None
        if count:
            log.info("%s %s", name, done % count)


def reap_lapsed(tx: Txn) -> int:
    """Expired claims back to pending (ending their reservations), expired reservations gone."""
    reservations.purge_expired(tx)
    landing.reap_all(tx)  # issue 35: slot leases and landings that lapsed
    return claims.reap_expired(tx)


async def run_reaper(writer: Writer, look: Callable[[], Awaitable[bool]] | None = None) -> None:
    """Expire lapsed claims and reservations every `reap_interval_s`.

    `look` (team mode) first asks a reader whether anything has lapsed, and
    the write group runs only if so: on a shared store every group takes the
    team's write lock, and an idle team should not take it twice a second per
    daemon. The group itself decides by the database's clock, so a look that
    runs a little early only defers the expiry to the next tick.
    """

    async def reap() -> int:
        if look is not None and not await look():
            return 0
        return int(await writer.submit(reap_lapsed))

    await _every(Limits.reap_interval_s, reap, "reaper", "returned %d expired claim(s) to pending")


async def run_retention(
    writer: Writer, keep_after: Callable[[], int], retention: Retention
) -> None:
    """Trim the log, never past what a live subscriber (of any daemon on the store) may need."""

    async def trim() -> int:
        await writer.submit(edits.purge_old)  # section 11's records: a day (issue 33)
        # Messages to names never seen, past their week (issue 44).
        if dropped := int(await writer.submit(messages_unseen.purge)):
            log.info("message retention removed %d message(s) to names never seen", dropped)
        return int(await writer.submit(writes.trim_events, retention, keep_after()))

    await _every(retention.interval_s, trim, "event retention", "removed %d old event(s)")


def _noop(conn: Db) -> None:
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
