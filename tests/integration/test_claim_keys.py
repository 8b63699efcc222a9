"""docs/PROTOCOL-1.2.md section 5a: a claim repeated with its `request_key` returns what the
first call won, never a second task (issue 44 item 7), over the socket, on both stores.

The calls are sent raw (`call_raw`) so that each test says exactly which key travels:
the clients' own key-and-retry is tested in tests/system/test_claim_retry.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from coordd.clock import ManualClock
from coordd_client import InvalidParams
from coordd_client.aio import AsyncClient
from coordd_client.protocol import wire
from coordd_client.rpc import unwrap

pytestmark = pytest.mark.both_backends

KEY = "0123456789abcdef0123456789abcdef"


async def claim_next(client: AsyncClient, agent: str, **params: Any) -> wire.Task | None:
    response = await client.call_raw("task.claim_next", {"agent": agent, **params})
    return unwrap(response, wire.MaybeTaskResult).task


async def post_three(client: AsyncClient) -> list[int]:
    return [(await client.post(f"work {n}")).task.id for n in range(3)]


async def test_a_repeated_claim_next_returns_the_task_its_key_won(aclient: AsyncClient) -> None:
    ids = await post_three(aclient)
    first = await claim_next(aclient, "w", request_key=KEY, lease_s=60)
    again = await claim_next(aclient, "w", request_key=KEY, repeat=True, lease_s=60)
    assert first is not None and again is not None
    assert first.id == again.id == ids[0]
    # The same claim, not a second one: same fence, one attempt, one task.claimed.
    assert (again.fence, again.attempts, again.claimed_by) == (first.fence, 1, "w")
    claimed = (await aclient.list_tasks(state="claimed")).tasks
    assert [t.id for t in claimed] == [ids[0]]
    history = (await aclient.events_since(task_id=ids[0])).events
    assert [e.type for e in history].count("task.claimed") == 1


async def test_another_key_or_another_agent_claims_afresh(aclient: AsyncClient) -> None:
    ids = await post_three(aclient)
    first = await claim_next(aclient, "w", request_key=KEY)
    other_key = await claim_next(aclient, "w", request_key=KEY[::-1], repeat=True)
    other_agent = await claim_next(aclient, "v", request_key=KEY, repeat=True)
    assert [t.id for t in (first, other_key, other_agent) if t is not None] == ids


async def test_without_repeat_a_key_is_a_new_call(aclient: AsyncClient) -> None:
    """Only a repeat pays for the lookup: a first attempt cannot have won anything yet.
    (A client never sends one key as two first attempts.)"""
    ids = await post_three(aclient)
    first = await claim_next(aclient, "w", request_key=KEY)
    second = await claim_next(aclient, "w", request_key=KEY)
    assert [t.id for t in (first, second) if t is not None] == ids[:2]


async def test_repeat_needs_a_key(aclient: AsyncClient) -> None:
    await aclient.post("work")
    with pytest.raises(InvalidParams, match="repeat"):
        await claim_next(aclient, "w", repeat=True)


async def test_a_key_whose_claim_ended_claims_afresh(
    aclient: AsyncClient, clock: ManualClock
) -> None:
    """Released, finished or lapsed since, the first win is no longer the caller's: the
    repeat is a new claim (the call asked for work), never the old task handed back."""
    ids = await post_three(aclient)
    first = await claim_next(aclient, "w", request_key=KEY, lease_s=5)
    assert first is not None
    await aclient.complete(first.id, "w", fence=first.fence)
    second = await claim_next(aclient, "w", request_key=KEY, repeat=True, lease_s=5)
    assert second is not None and second.id == ids[1]
    clock.advance(6)  # lapsed: the reaper of the next claim_next returns it to pending
    third = await claim_next(aclient, "w", request_key=KEY, repeat=True, lease_s=5)
    assert third is not None and third.id == ids[1] and third.fence == second.fence + 1


async def test_claim_takes_a_key_and_a_repeat_still_wins(aclient: AsyncClient) -> None:
    (task_id, *_) = await post_three(aclient)
    params: dict[str, Any] = {"id": task_id, "agent": "w", "request_key": KEY}
    first = unwrap(await aclient.call_raw("task.claim", params), wire.ClaimResult)
    again = unwrap(
        await aclient.call_raw("task.claim", {**params, "repeat": True}), wire.ClaimResult
    )
    assert first.won and again.won and again.task.fence == first.task.fence
    rival = {**params, "agent": "v"}
    assert not unwrap(await aclient.call_raw("task.claim", rival), wire.ClaimResult).won


@pytest.mark.parametrize("key", ["", "x" * 129, "has space", "tab\there"])
async def test_a_bad_key_is_refused(aclient: AsyncClient, key: str) -> None:
    await aclient.post("work")
    with pytest.raises(InvalidParams, match="request_key"):
        await claim_next(aclient, "w", request_key=key)


async def test_the_daemon_names_the_feature(aclient: AsyncClient) -> None:
    assert await aclient.supports("claim_request_key")
