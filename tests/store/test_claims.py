"""docs/PROTOCOL-1.2.md section 5a on the store (`store/claims.py`): a claim repeated with
its `request_key` returns what the first call won, never a second task (issue 44 item 7),
on both stores.

The calls are sent raw (`call_raw`) so that each test says exactly which key travels:
the clients' own key-and-retry is tested in tests/system/test_claim_retry.py. Moved
from tests/integration/test_claim_keys.py (issue 45 item 4), which keeps the feature
flag the daemon names.

Claims edge by edge (PROTOCOL.md section 5: holder, lease, fence, claim_next's order
and filters, lapsed leases) moved from tests/integration/test_lifecycle.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from coordd.clock import ManualClock
from coordd_client import Blocked, InvalidParams, LeaseLost
from coordd_client.rpc import unwrap
from coordd_wire import wire
from store.board import Seat
from store.tasks import claimed, event_types, fresh

pytestmark = pytest.mark.both_backends

KEY = "0123456789abcdef0123456789abcdef"


def claim_next(client: Seat, agent: str, **params: Any) -> wire.Task | None:
    response = client.call_raw("task.claim_next", {"agent": agent, **params})
    return unwrap(response, wire.MaybeTaskResult).task


def post_three(client: Seat) -> list[int]:
    return [(client.post(f"work {n}")).task.id for n in range(3)]


def test_a_repeated_claim_next_returns_the_task_its_key_won(client: Seat) -> None:
    ids = post_three(client)
    first = claim_next(client, "w", request_key=KEY, lease_s=60)
    again = claim_next(client, "w", request_key=KEY, repeat=True, lease_s=60)
    assert first is not None and again is not None
    assert first.id == again.id == ids[0]
    # The same claim, not a second one: same fence, one attempt, one task.claimed.
    assert (again.fence, again.attempts, again.claimed_by) == (first.fence, 1, "w")
    claimed = (client.list_tasks(state="claimed")).tasks
    assert [t.id for t in claimed] == [ids[0]]
    history = (client.events_since(task_id=ids[0])).events
    assert [e.type for e in history].count("task.claimed") == 1


def test_another_key_or_another_agent_claims_afresh(client: Seat) -> None:
    ids = post_three(client)
    first = claim_next(client, "w", request_key=KEY)
    other_key = claim_next(client, "w", request_key=KEY[::-1], repeat=True)
    other_agent = claim_next(client, "v", request_key=KEY, repeat=True)
    assert [t.id for t in (first, other_key, other_agent) if t is not None] == ids


def test_without_repeat_a_key_is_a_new_call(client: Seat) -> None:
    """Only a repeat pays for the lookup: a first attempt cannot have won anything yet.
    (A client never sends one key as two first attempts.)"""
    ids = post_three(client)
    first = claim_next(client, "w", request_key=KEY)
    second = claim_next(client, "w", request_key=KEY)
    assert [t.id for t in (first, second) if t is not None] == ids[:2]


def test_repeat_needs_a_key(client: Seat) -> None:
    client.post("work")
    with pytest.raises(InvalidParams, match="repeat"):
        claim_next(client, "w", repeat=True)


def test_a_key_whose_claim_ended_claims_afresh(client: Seat, clock: ManualClock) -> None:
    """Released, finished or lapsed since, the first win is no longer the caller's: the
    repeat is a new claim (the call asked for work), never the old task handed back."""
    ids = post_three(client)
    first = claim_next(client, "w", request_key=KEY, lease_s=5)
    assert first is not None
    client.complete(first.id, "w", fence=first.fence)
    second = claim_next(client, "w", request_key=KEY, repeat=True, lease_s=5)
    assert second is not None and second.id == ids[1]
    clock.advance(6)  # lapsed: the reaper of the next claim_next returns it to pending
    third = claim_next(client, "w", request_key=KEY, repeat=True, lease_s=5)
    assert third is not None and third.id == ids[1] and third.fence == second.fence + 1


def test_claim_takes_a_key_and_a_repeat_still_wins(client: Seat) -> None:
    (task_id, *_) = post_three(client)
    params: dict[str, Any] = {"id": task_id, "agent": "w", "request_key": KEY}
    first = unwrap(client.call_raw("task.claim", params), wire.ClaimResult)
    again = unwrap(client.call_raw("task.claim", {**params, "repeat": True}), wire.ClaimResult)
    assert first.won and again.won and again.task.fence == first.task.fence
    rival = {**params, "agent": "v"}
    assert not unwrap(client.call_raw("task.claim", rival), wire.ClaimResult).won


@pytest.mark.parametrize("key", ["", "x" * 129, "has space", "tab\there"])
def test_a_bad_key_is_refused(client: Seat, key: str) -> None:
    client.post("work")
    with pytest.raises(InvalidParams, match="request_key"):
        claim_next(client, "w", request_key=key)


# --- PROTOCOL.md section 5, edge by edge (moved from tests/integration/test_lifecycle.py) ---


def test_claim_sets_holder_lease_fence_attempts(client: Seat, clock: ManualClock) -> None:
    task_id = fresh(client)
    task = (client.claim(task_id, "a", lease_s=30)).task
    assert task.state == "claimed" and task.claimed_by == "a"
    assert task.fence == 1 and task.attempts == 1
    assert task.lease_expires_at is not None and task.claimed_at is not None
    assert task.lease_expires_at > task.claimed_at


def test_claim_by_holder_is_idempotent_and_renews(client: Seat, clock: ManualClock) -> None:
    task_id, fence = claimed(client, lease_s=30)
    first = (client.get(task_id)).task
    clock.advance(10)
    again = client.claim(task_id, "a", lease_s=30)
    assert again.won and again.task.fence == fence and again.task.attempts == 1
    assert again.task.lease_expires_at is not None and first.lease_expires_at is not None
    assert again.task.lease_expires_at > first.lease_expires_at
    assert event_types(client, task_id) == ["task.posted", "task.claimed"]


def test_claim_by_another_loses_and_names_the_holder(client: Seat) -> None:
    task_id, _ = claimed(client)
    lost = client.claim(task_id, "b")
    assert not lost.won and lost.task.claimed_by == "a"


def test_expired_lease_refuses_its_holder(client: Seat, clock: ManualClock) -> None:
    task_id, fence = claimed(client, "a", lease_s=5)
    clock.advance(6)
    with pytest.raises(LeaseLost) as info:
        client.renew(task_id, "a", fence=fence)
    assert "expired" in info.value.message or info.value.data["task"]["state"] == "pending"
    again = client.claim(task_id, "a")
    assert again.won and again.task.fence == fence + 1


def test_zombie_holder_cannot_overwrite_its_replacement(client: Seat, clock: ManualClock) -> None:
    task_id, fence_a = claimed(client, "a", lease_s=10)
    clock.advance(11)
    b = client.claim(task_id, "b", lease_s=10)
    assert b.won and b.task.fence == fence_a + 1
    client.complete(task_id, "b", fence=b.task.fence, result="b's work")
    with pytest.raises(LeaseLost):
        client.complete(task_id, "a", fence=fence_a, result="a's stale work")
    final = (client.get(task_id)).task
    assert final.result == "b's work" and final.claimed_by == "b"


def test_claim_next_takes_priority_then_age(client: Seat) -> None:
    low = fresh(client, priority=-5)
    first_high = fresh(client, priority=10)
    second_high = fresh(client, priority=10)
    normal = fresh(client)
    order = [(client.claim_next("w")).task.id for _ in range(4)]  # type: ignore[union-attr]
    assert order == [first_high, second_high, normal, low]
    assert (client.claim_next("w")).task is None


def test_claim_next_filters_by_project_kind_and_all_tags(client: Seat, clock: ManualClock) -> None:
    fresh(client, project="/p1", kind="bug", tags=["ui"])
    target = fresh(client, project="/p1", kind="bug", tags=["ui", "parser", "urgent"])
    fresh(client, project="/p2", kind="bug", tags=["ui", "parser"])
    got = client.claim_next("w", project="/p1", kind="bug", tags=["parser", "ui"])
    assert got.task is not None and got.task.id == target
    assert (client.claim_next("w", project="/p1", tags=["parser"])).task is None
    expired_id, _ = claimed(client, "z", lease_s=5)
    clock.advance(6)
    reclaimed = client.claim_next("w", project="default")
    assert (
        reclaimed.task is not None and reclaimed.task.id == expired_id and reclaimed.task.fence == 2
    )


def test_claiming_a_lapsed_claim_that_is_now_blocked_changes_nothing(
    client: Seat, clock: ManualClock
) -> None:
    base = (client.post("base")).task
    dependent = (client.post("dependent", depends_on=[base.id])).task
    client.claim(base.id, "a")
    client.complete(base.id, "a")
    held = client.claim(dependent.id, "holder", lease_s=5)
    client.reopen(base.id)  # claimed before: it stays claimed, now blocked
    seq = (client.events_since()).last_seq
    clock.advance(10)  # the lease lapses
    with pytest.raises(Blocked) as refused:
        client.claim(dependent.id, "thief")
    shown = refused.value.data["task"]
    after = [(e.type, e.agent) for e in (client.events_since(after_seq=seq)).events]
    if shown["state"] == "claimed":  # as it stands: the refusal committed nothing
        assert shown["fence"] == held.task.fence and after == []
    else:  # the reaper (every 0.5 s) expired it first, and said so in the log
        assert after == [("task.expired", "holder")]
