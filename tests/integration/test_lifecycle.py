"""PROTOCOL.md section 5 where it needs the daemon: claimants racing in one process, and
the reaper expiring leases on its own, with time moved by a ManualClock. The edges
one call at a time are the store tier's (tests/store/test_claims.py, test_holding.py,
test_writes.py)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends


async def fresh(client: AsyncClient, **kwargs: Any) -> int:
    return (await client.post("work", **kwargs)).task.id


async def claimed(client: AsyncClient, agent: str = "a", lease_s: float = 60) -> tuple[int, int]:
    task_id = await fresh(client)
    result = await client.claim(task_id, agent, lease_s=lease_s)
    assert result.won
    return task_id, result.task.fence


async def event_types(client: AsyncClient, task_id: int) -> list[str]:
    events = (await client.events_since()).events
    return [e.type for e in events if e.task_id == task_id]


# --- leases, expiry, fences -----------------------------------------------------------


async def test_expiry_racing_claimants_one_winner_one_expired_event(
    aclient: AsyncClient, clock: ManualClock, inproc: Daemon
) -> None:
    task_id, fence = await claimed(aclient, "a", lease_s=5)
    clock.advance(6)
    results = []

    async def contender(name: str) -> None:
        results.append((name, await aclient.claim(task_id, name)))

    async with trio.open_nursery() as nursery:
        for n in range(20):
            nursery.start_soon(contender, f"c{n}")
    winners = [name for name, result in results if result.won]
    assert len(winners) == 1
    assert all(result.task.claimed_by == winners[0] for _, result in results)
    types = await event_types(aclient, task_id)
    assert types == ["task.posted", "task.claimed", "task.expired", "task.claimed"]
    expired = next(e for e in (await aclient.events_since()).events if e.type == "task.expired")
    assert expired.task is not None
    assert expired.agent == "a" and expired.task.state == "pending"
    assert (await aclient.get(task_id)).task.fence == fence + 1


async def test_reaper_expires_without_any_claimant(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    task_id, _ = await claimed(aclient, "a", lease_s=5)
    clock.advance(6)
    with trio.fail_after(5):
        while (await aclient.get(task_id)).task.state != "pending":
            await trio.sleep(0.05)
    assert (await event_types(aclient, task_id)).count("task.expired") == 1


async def test_heartbeat_renews_every_live_lease_of_the_agent(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    ids = [(await claimed(aclient, "a", lease_s=10))[0] for _ in range(3)]
    other, _ = await claimed(aclient, "b", lease_s=10)
    for _ in range(5):
        clock.advance(8)
        assert (await aclient.heartbeat("a", lease_s=10)).renewed == 3
    for task_id in ids:
        assert (await aclient.get(task_id)).task.claimed_by == "a"
    with trio.fail_after(5):
        while (await aclient.get(other)).task.state != "pending":
            await trio.sleep(0.05)
    agents = {a.agent: a for a in (await aclient.agents()).agents}
    assert agents["a"].holding == 3 and agents["b"].holding == 0
