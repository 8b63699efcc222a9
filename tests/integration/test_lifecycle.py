"""PROTOCOL.md section 5, edge by edge, over the socket, with time moved by a ManualClock."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd_client import Blocked, Conflict, InvalidParams, LeaseLost, NotFound
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


# --- from pending ---------------------------------------------------------------


async def test_pending_refuses_holder_operations(aclient: AsyncClient) -> None:
    task_id = await fresh(aclient)
    for operation in (aclient.renew, aclient.release, aclient.complete, aclient.fail):
        with pytest.raises(LeaseLost) as info:
            await operation(task_id, "a")
        assert info.value.code == -32003 and info.value.data["task"]["state"] == "pending"
    with pytest.raises(Conflict) as conflict:
        await aclient.reopen(task_id)
    assert conflict.value.code == -32002


async def test_pending_cancel(aclient: AsyncClient) -> None:
    task_id = await fresh(aclient)
    task = (await aclient.cancel(task_id, agent="boss", reason="obsolete")).task
    assert task.state == "cancelled" and task.result == "obsolete" and task.claimed_by is None
    assert await event_types(aclient, task_id) == ["task.posted", "task.cancelled"]


async def test_unknown_task_is_not_found(aclient: AsyncClient) -> None:
    for call in (
        aclient.claim(404, "a"),
        aclient.complete(404, "a"),
        aclient.cancel(404),
        aclient.get(404),
    ):
        with pytest.raises(NotFound):
            await call


# --- from claimed ---------------------------------------------------------------


async def test_claim_sets_holder_lease_fence_attempts(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    task_id = await fresh(aclient)
    task = (await aclient.claim(task_id, "a", lease_s=30)).task
    assert task.state == "claimed" and task.claimed_by == "a"
    assert task.fence == 1 and task.attempts == 1
    assert task.lease_expires_at is not None and task.claimed_at is not None
    assert task.lease_expires_at > task.claimed_at


async def test_claim_by_holder_is_idempotent_and_renews(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    task_id, fence = await claimed(aclient, lease_s=30)
    first = (await aclient.get(task_id)).task
    clock.advance(10)
    again = await aclient.claim(task_id, "a", lease_s=30)
    assert again.won and again.task.fence == fence and again.task.attempts == 1
    assert again.task.lease_expires_at is not None and first.lease_expires_at is not None
    assert again.task.lease_expires_at > first.lease_expires_at
    assert await event_types(aclient, task_id) == ["task.posted", "task.claimed"]


async def test_claim_by_another_loses_and_names_the_holder(aclient: AsyncClient) -> None:
    task_id, _ = await claimed(aclient)
    lost = await aclient.claim(task_id, "b")
    assert not lost.won and lost.task.claimed_by == "a"


async def test_renew_by_holder_with_and_without_fence(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    task_id, fence = await claimed(aclient, lease_s=10)
    before = (await aclient.get(task_id)).task.lease_expires_at
    assert before is not None
    clock.advance(5)
    renewed = (await aclient.renew(task_id, "a", fence=fence, lease_s=10)).task.lease_expires_at
    assert renewed is not None and renewed > before
    assert (await aclient.renew(task_id, "a")).task.state == "claimed"


async def test_holder_operations_refuse_others_and_stale_fences(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    for operation in (aclient.renew, aclient.release, aclient.complete, aclient.fail):
        with pytest.raises(LeaseLost) as other:
            await operation(task_id, "b")
        assert other.value.data["task"]["claimed_by"] == "a"
        with pytest.raises(LeaseLost) as stale:
            await operation(task_id, "a", fence=fence + 1)
        assert "fence" in stale.value.message
    assert (await aclient.get(task_id)).task.state == "claimed"


async def test_release_returns_to_pending(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    task = (await aclient.release(task_id, "a", fence=fence)).task
    assert task.state == "pending" and task.claimed_by is None and task.claimed_at is None
    assert task.lease_expires_at is None and task.fence == fence
    assert await event_types(aclient, task_id) == ["task.posted", "task.claimed", "task.released"]


async def test_complete_keeps_holder_and_clears_lease(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    done = await aclient.complete(task_id, "a", fence=fence, result="fixed in abc123")
    assert done.task.state == "done" and done.task.result == "fixed in abc123"
    assert done.task.claimed_by == "a" and done.task.claimed_at is not None
    assert done.task.lease_expires_at is None and done.posted is None


async def test_repeated_complete_returns_the_first_outcome(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    first = await aclient.complete(
        task_id, "a", fence=fence, then_post={"title": "ack", "kind": "ack", "state": "done"}
    )
    assert first.posted is not None
    again = await aclient.complete(task_id, "a", fence=fence)
    assert again.task == first.task and again.posted == first.posted
    assert (await aclient.complete(task_id, "a")).task.state == "done"
    with pytest.raises(LeaseLost):
        await aclient.complete(task_id, "b")
    with pytest.raises(LeaseLost):
        await aclient.complete(task_id, "a", fence=fence + 5)
    assert await event_types(aclient, task_id) == ["task.posted", "task.claimed", "task.completed"]


async def test_then_post_commits_with_the_completion(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    done = await aclient.complete(
        task_id,
        "a",
        fence=fence,
        then_post={"title": "fixed the parser", "kind": "ack", "state": "done", "project": "/repo"},
    )
    assert done.posted is not None
    assert (
        done.posted.kind == "ack" and done.posted.state == "done" and done.posted.project == "/repo"
    )
    assert done.posted.created_by == "a"  # defaults to the completing agent
    events = (await aclient.events_since()).events
    completed = next(e for e in events if e.type == "task.completed")
    posted = next(e for e in events if e.type == "task.posted" and e.task_id == done.posted.id)
    assert posted.seq == completed.seq + 1


async def test_invalid_then_post_commits_nothing(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    with pytest.raises(InvalidParams) as info:
        await aclient.complete(
            task_id, "a", fence=fence, then_post={"title": "x", "kind": "NOT A KIND"}
        )
    assert info.value.data["field"] == "then_post.kind"
    assert (await aclient.get(task_id)).task.state == "claimed"
    assert len((await aclient.list_tasks()).tasks) == 1


async def test_fail_and_fail_with_retry(aclient: AsyncClient) -> None:
    task_id, fence = await claimed(aclient)
    failed = (await aclient.fail(task_id, "a", fence=fence, reason="tests red")).task
    assert failed.state == "failed" and failed.result == "tests red" and failed.claimed_by == "a"
    assert (await aclient.fail(task_id, "a", fence=fence)).task == failed  # a repeat
    retry_id, retry_fence = await claimed(aclient)
    retried = (
        await aclient.fail(retry_id, "a", fence=retry_fence, reason="flaky", retry=True)
    ).task
    assert (
        retried.state == "pending"
        and retried.claimed_by is None
        and retried.lease_expires_at is None
    )
    with pytest.raises(LeaseLost):  # a repeated retry cannot be recognised
        await aclient.fail(retry_id, "a", fence=retry_fence, retry=True)
    second = await aclient.claim(retry_id, "b")
    assert second.won and second.task.fence == retry_fence + 1 and second.task.attempts == 2


async def test_cancel_claimed_clears_the_claim(aclient: AsyncClient) -> None:
    task_id, _ = await claimed(aclient)
    task = (await aclient.cancel(task_id, reason="dup")).task
    assert task.state == "cancelled" and task.claimed_by is None and task.claimed_at is None
    with pytest.raises(LeaseLost):
        await aclient.complete(task_id, "a")


# --- from terminal states ---------------------------------------------------------


@pytest.mark.parametrize("terminal", ["done", "failed", "cancelled"])
async def test_terminal_states_refuse_cancel_and_reopen_to_pending(
    aclient: AsyncClient, terminal: str
) -> None:
    task_id, fence = await claimed(aclient)
    if terminal == "done":
        await aclient.complete(task_id, "a", fence=fence, result="r")
    elif terminal == "failed":
        await aclient.fail(task_id, "a", fence=fence)
    else:
        await aclient.cancel(task_id)
    with pytest.raises(Conflict) as info:
        await aclient.cancel(task_id)
    assert info.value.data["task"]["state"] == terminal
    lost = await aclient.claim(task_id, "b")
    assert not lost.won and lost.task.state == terminal
    reopened = (await aclient.reopen(task_id, agent="boss")).task
    assert reopened.state == "pending" and reopened.claimed_by is None and reopened.result is None
    again = await aclient.claim(task_id, "b")
    assert again.won and again.task.fence == fence + 1
    assert (await event_types(aclient, task_id))[-2:] == ["task.reopened", "task.claimed"]


async def test_post_done_announcement_and_idempotency_key(aclient: AsyncClient) -> None:
    ack = await aclient.post("fixed it", kind="ack", state="done", agent="a", idempotency_key="k1")
    assert ack.created and ack.task.state == "done" and ack.task.claimed_by is None
    again = await aclient.post("something else", idempotency_key="k1")
    assert not again.created and again.task == ack.task
    elsewhere = await aclient.post("other project", project="/other", idempotency_key="k1")
    assert elsewhere.created and elsewhere.task.id != ack.task.id


# --- leases, expiry, fences -----------------------------------------------------------


async def test_zombie_holder_cannot_overwrite_its_replacement(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    task_id, fence_a = await claimed(aclient, "a", lease_s=10)
    clock.advance(11)
    b = await aclient.claim(task_id, "b", lease_s=10)
    assert b.won and b.task.fence == fence_a + 1
    await aclient.complete(task_id, "b", fence=b.task.fence, result="b's work")
    with pytest.raises(LeaseLost):
        await aclient.complete(task_id, "a", fence=fence_a, result="a's stale work")
    final = (await aclient.get(task_id)).task
    assert final.result == "b's work" and final.claimed_by == "b"


async def test_expired_lease_refuses_its_holder(aclient: AsyncClient, clock: ManualClock) -> None:
    task_id, fence = await claimed(aclient, "a", lease_s=5)
    clock.advance(6)
    with pytest.raises(LeaseLost) as info:
        await aclient.renew(task_id, "a", fence=fence)
    assert "expired" in info.value.message or info.value.data["task"]["state"] == "pending"
    again = await aclient.claim(task_id, "a")
    assert again.won and again.task.fence == fence + 1


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


async def test_claim_next_takes_priority_then_age(aclient: AsyncClient) -> None:
    low = await fresh(aclient, priority=-5)
    first_high = await fresh(aclient, priority=10)
    second_high = await fresh(aclient, priority=10)
    normal = await fresh(aclient)
    order = [(await aclient.claim_next("w")).task.id for _ in range(4)]  # type: ignore[union-attr]
    assert order == [first_high, second_high, normal, low]
    assert (await aclient.claim_next("w")).task is None


async def test_claim_next_filters_by_project_kind_and_all_tags(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    await fresh(aclient, project="/p1", kind="bug", tags=["ui"])
    target = await fresh(aclient, project="/p1", kind="bug", tags=["ui", "parser", "urgent"])
    await fresh(aclient, project="/p2", kind="bug", tags=["ui", "parser"])
    got = await aclient.claim_next("w", project="/p1", kind="bug", tags=["parser", "ui"])
    assert got.task is not None and got.task.id == target
    assert (await aclient.claim_next("w", project="/p1", tags=["parser"])).task is None
    expired_id, _ = await claimed(aclient, "z", lease_s=5)
    clock.advance(6)
    reclaimed = await aclient.claim_next("w", project="default")
    assert (
        reclaimed.task is not None and reclaimed.task.id == expired_id and reclaimed.task.fence == 2
    )


async def test_claiming_a_lapsed_claim_that_is_now_blocked_changes_nothing(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    base = (await aclient.post("base")).task
    dependent = (await aclient.post("dependent", depends_on=[base.id])).task
    await aclient.claim(base.id, "a")
    await aclient.complete(base.id, "a")
    held = await aclient.claim(dependent.id, "holder", lease_s=5)
    await aclient.reopen(base.id)  # claimed before: it stays claimed, now blocked
    seq = (await aclient.server_info()).last_seq
    clock.advance(10)  # the lease lapses
    with pytest.raises(Blocked) as refused:
        await aclient.claim(dependent.id, "thief")
    shown = refused.value.data["task"]
    after = [(e.type, e.agent) for e in (await aclient.events_since(after_seq=seq)).events]
    if shown["state"] == "claimed":  # as it stands: the refusal committed nothing
        assert shown["fence"] == held.task.fence and after == []
    else:  # the reaper (every 0.5 s) expired it first, and said so in the log
        assert after == [("task.expired", "holder")]
