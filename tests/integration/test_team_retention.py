"""Team mode: event retention on one daemon never trims what a live subscriber of another
daemon on the same store may still need, and restart grace is skipped while peers live."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from coordd.config import DaemonConfig
from coordd.daemon import Daemon
from coordd.limits import Limits, Retention
from coordd.store.postgres.backend import TeamMode
from coordd.store.writes import trim_events
from coordd_client.aio import AsyncClient
from postgres import create_database, psql
from servers import PostgresPeer
from support import short_tmpdir


@pytest.fixture
async def pair(postgres_cluster: PostgresPeer) -> AsyncIterator[tuple[Daemon, Daemon]]:
    """Daemons A and B in this process, on one fresh team store."""
    store = create_database(postgres_cluster)
    root: Path = short_tmpdir("tr")
    daemons = []
    async with trio.open_nursery() as nursery:
        for name in ("a", "b"):
            config = DaemonConfig(
                db_path=root / f"{name}.db",
                socket_path=root / f"{name}.sock",
                handle_signals=False,
                store_dsn=store,
                node=name,
            )
            daemons.append(await nursery.start(Daemon(config).run))
        yield daemons[0], daemons[1]
        for daemon in daemons:
            daemon.request_stop()


def team_of(daemon: Daemon) -> TeamMode:
    assert isinstance(daemon.store, TeamMode)
    return daemon.store


async def test_retention_keeps_what_another_daemons_subscriber_needs(
    pair: tuple[Daemon, Daemon],
) -> None:
    a, b = pair
    async with AsyncClient.connect(a.config.socket_path) as client:
        for n in range(30):
            await client.post(f"t{n}")
    await trio.sleep(0.2)  # B's follower has published the 30 events
    # A subscriber on B that has been delivered only up to seq 5.
    subscriber = b.hub.subscribe(None, None)
    subscriber.last_delivered = 5
    with trio.fail_after(10):
        while team_of(a).heartbeat.team_keep_after != 5:
            await trio.sleep(Limits.node_heartbeat_s / 4)
    deleted = await a.writer.submit(trim_events, Retention(max_events=10), a.store.keep_after())
    assert deleted == 5  # seqs 1..5 only, though the count limit alone would trim 20
    async with AsyncClient.connect(b.config.socket_path) as client:
        events = (await client.events_since(after_seq=5, limit=100)).events
    assert [e.seq for e in events] == list(range(6, 31))
    b.hub.unsubscribe(subscriber, "unsubscribed")


async def test_peers_are_live_both_ways_and_leave_on_a_clean_stop(
    pair: tuple[Daemon, Daemon],
) -> None:
    a, b = pair
    with trio.fail_after(10):
        while [p.node for p in a.store.peers()] != ["b"] or [p.node for p in b.store.peers()] != [
            "a"
        ]:
            await trio.sleep(0.1)
    b.request_stop()  # a clean stop deletes B's row: A stops counting it at once
    with trio.fail_after(10):
        while a.store.peers():
            await trio.sleep(0.1)
    assert psql(a.config.store_dsn or "", "SELECT node FROM coordd_daemons") == [("a",)]


async def test_an_idle_team_takes_no_write_lock_and_still_expires_leases(
    pair: tuple[Daemon, Daemon],
) -> None:
    a, b = pair
    await trio.sleep(2 * Limits.reap_interval_s)  # past the start's own groups
    groups = a.writer.statistics().transactions + b.writer.statistics().transactions
    await trio.sleep(4 * Limits.reap_interval_s)
    idle = a.writer.statistics().transactions + b.writer.statistics().transactions
    assert idle == groups  # the reapers looked through a reader and found nothing
    async with AsyncClient.connect(a.config.socket_path) as client:
        task = (await client.post("short lease")).task
        assert (await client.claim(task.id, "holder", lease_s=1)).won
        with trio.fail_after(10):
            while (await client.get(task.id)).task.state != "pending":
                await trio.sleep(0.1)
        history = (await client.events_since(task_id=task.id)).events
    assert [e.type for e in history] == ["task.posted", "task.claimed", "task.expired"]
