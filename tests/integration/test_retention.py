"""Event retention keeps the log bounded but never drops what a live subscriber is owed."""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd.limits import Retention
from coordd.store.writes import trim_events
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends


async def seqs(client: AsyncClient) -> list[int]:
    return [e.seq for e in (await client.events_since(limit=10000)).events]


async def test_count_limit_trims_the_oldest(inproc: Daemon, aclient: AsyncClient) -> None:
    for n in range(30):
        await aclient.post(f"t{n}")
    deleted = await inproc.writer.submit(trim_events, Retention(max_events=10), 30)
    assert deleted == 20 and await seqs(aclient) == list(range(21, 31))


async def test_live_subscriber_position_is_never_trimmed(
    inproc: Daemon, aclient: AsyncClient
) -> None:
    for n in range(30):
        await aclient.post(f"t{n}")
    await inproc.writer.submit(trim_events, Retention(max_events=10), 5)
    assert await seqs(aclient) == list(range(6, 31))


async def test_age_limit(inproc: Daemon, aclient: AsyncClient, clock: ManualClock) -> None:
    for n in range(5):
        await aclient.post(f"old {n}")
    clock.advance(3600)
    await aclient.post("new")
    await inproc.writer.submit(trim_events, Retention(max_age_s=60), 6)
    assert await seqs(aclient) == [6]
    assert (await aclient.events_since()).last_seq == 6
    assert (await aclient.post("after trim")).task.id == 7  # ids and seqs are never reused
    assert (await aclient.events_since(after_seq=6)).events[0].seq == 7
