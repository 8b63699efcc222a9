"""docs/PROTOCOL-1.2.md section 5a on the store (`store/claims.py`): a claim repeated with
its `request_key` returns what the first call won, never a second task (issue 44 item 7),
on both stores.

The calls are sent raw (`call_raw`) so that each test says exactly which key travels:
the clients' own key-and-retry is tested in tests/system/test_claim_retry.py. Moved
from tests/integration/test_claim_keys.py (issue 45 item 4), which keeps the feature
flag the daemon names.
"""

from __future__ import annotations

from typing import Any

import pytest

from coordd.clock import ManualClock
from coordd_client import InvalidParams
from coordd_client.protocol import wire
from coordd_client.rpc import unwrap
from store.board import Seat

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
