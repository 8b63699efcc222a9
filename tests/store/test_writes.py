"""Protocol 1.1 section 9 on the store (`store/writes.py`): dependencies, readiness
and assignment.

Moved from tests/system/test_plans.py (issue 45 item 4), which keeps what needs a
process: a chain and an assigned task raced by processes, a waiter woken by an
unblocked task, assignment and release handing work to a waiter, the wire's
refusals, an upgrade, the CLI.

Posting, cancelling and reopening (PROTOCOL.md section 5) moved from
tests/integration/test_lifecycle.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from coordd.clock import ManualClock
from coordd.limits import Retention
from coordd.store.writes import trim_events
from coordd_client import Blocked, Conflict, LeaseLost, NotFound
from store.board import Board, Seat
from store.tasks import claimed, event_types, fresh

pytestmark = pytest.mark.both_backends


def events_of(client: Seat, after_seq: int = 0) -> list[tuple[str, int | None]]:
    return [(e.type, e.task_id) for e in client.events_since(after_seq=after_seq).events]


def test_a_diamond_unblocks_its_join_once_both_sides_are_done(board: Board) -> None:
    with board.seat("me") as client:
        top = client.post("top").task
        left = client.post("left", depends_on=[top.id]).task
        right = client.post("right", depends_on=[top.id]).task
        join = client.post("join", depends_on=[right.id, left.id, right.id]).task
        assert join.depends_on == [left.id, right.id] and join.blocked_by == [left.id, right.id]
        for task in (top, left):
            client.claim(task.id)
            client.complete(task.id)
        assert client.get(join.id).task.blocked_by == [right.id]
        client.claim(right.id)
        done_right = client.complete(right.id)
        assert done_right.task.state == "done" and client.get(join.id).task.ready
        log = events_of(client)
    assert log.count(("task.unblocked", join.id)) == 1
    assert ("task.unblocked", left.id) in log and ("task.unblocked", right.id) in log


def test_reopening_a_dependency_blocks_ready_dependents_only(board: Board) -> None:
    with board.seat("me") as client:
        base = client.post("base").task
        ready = client.post("ready one", depends_on=[base.id]).task
        running = client.post("running one", depends_on=[base.id]).task
        client.claim(base.id)
        client.complete(base.id)
        client.claim(running.id)
        seq = client.events_since().last_seq
        client.reopen(base.id)
        assert events_of(client, seq) == [("task.reopened", base.id), ("task.blocked", ready.id)]
        with pytest.raises(Blocked) as refused:
            client.claim(ready.id)
        assert refused.value.data["task"]["blocked_by"] == [base.id]
        assert f"#{base.id}" in refused.value.message
        assert client.get(running.id).task.state == "claimed"  # claimed before: stays claimed
        released = client.release(running.id)  # back to pending: blocked again, in its event
        assert released.task.blocked_by == [base.id]
        assert [t.id for t in client.list_tasks(ready=False).tasks] == [ready.id, running.id]
        next_up = client.claim_next().task  # the only ready task is the reopened base
        assert next_up is not None and next_up.id == base.id


# --- PROTOCOL.md section 5, edge by edge (moved from tests/integration/test_lifecycle.py) ---


def test_pending_cancel(client: Seat) -> None:
    task_id = fresh(client)
    task = (client.cancel(task_id, agent="boss", reason="obsolete")).task
    assert task.state == "cancelled" and task.result == "obsolete" and task.claimed_by is None
    assert event_types(client, task_id) == ["task.posted", "task.cancelled"]


def test_unknown_task_is_not_found(client: Seat) -> None:
    calls: list[Callable[[], object]] = [
        lambda: client.claim(404, "a"),
        lambda: client.complete(404, "a"),
        lambda: client.cancel(404),
        lambda: client.get(404),
    ]
    for call in calls:
        with pytest.raises(NotFound):
            call()


def test_cancel_claimed_clears_the_claim(client: Seat) -> None:
    task_id, _ = claimed(client)
    task = (client.cancel(task_id, reason="dup")).task
    assert task.state == "cancelled" and task.claimed_by is None and task.claimed_at is None
    with pytest.raises(LeaseLost):
        client.complete(task_id, "a")


@pytest.mark.parametrize("terminal", ["done", "failed", "cancelled"])
def test_terminal_states_refuse_cancel_and_reopen_to_pending(client: Seat, terminal: str) -> None:
    task_id, fence = claimed(client)
    if terminal == "done":
        client.complete(task_id, "a", fence=fence, result="r")
    elif terminal == "failed":
        client.fail(task_id, "a", fence=fence)
    else:
        client.cancel(task_id)
    with pytest.raises(Conflict) as info:
        client.cancel(task_id)
    assert info.value.data["task"]["state"] == terminal
    lost = client.claim(task_id, "b")
    assert not lost.won and lost.task.state == terminal
    reopened = (client.reopen(task_id, agent="boss")).task
    assert reopened.state == "pending" and reopened.claimed_by is None and reopened.result is None
    again = client.claim(task_id, "b")
    assert again.won and again.task.fence == fence + 1
    assert (event_types(client, task_id))[-2:] == ["task.reopened", "task.claimed"]


def test_post_done_announcement_and_idempotency_key(client: Seat) -> None:
    ack = client.post("fixed it", kind="ack", state="done", agent="a", idempotency_key="k1")
    assert ack.created and ack.task.state == "done" and ack.task.claimed_by is None
    again = client.post("something else", idempotency_key="k1")
    assert not again.created and again.task == ack.task
    elsewhere = client.post("other project", project="/other", idempotency_key="k1")
    assert elsewhere.created and elsewhere.task.id != ack.task.id


# --- event retention (moved from tests/integration/test_retention.py) -------------------
# The log stays bounded but never drops what a live subscriber is owed (`trim_events`,
# the retention duty's step, run here as one transaction).


def seqs(client: Seat) -> list[int]:
    return [e.seq for e in (client.events_since(limit=10000)).events]


def test_count_limit_trims_the_oldest(board: Board, client: Seat) -> None:
    for n in range(30):
        client.post(f"t{n}")
    deleted = board.run(trim_events, Retention(max_events=10), 30)
    assert deleted == 20 and seqs(client) == list(range(21, 31))


def test_live_subscriber_position_is_never_trimmed(board: Board, client: Seat) -> None:
    for n in range(30):
        client.post(f"t{n}")
    board.run(trim_events, Retention(max_events=10), 5)
    assert seqs(client) == list(range(6, 31))


def test_age_limit(board: Board, client: Seat, clock: ManualClock) -> None:
    for n in range(5):
        client.post(f"old {n}")
    clock.advance(3600)
    client.post("new")
    board.run(trim_events, Retention(max_age_s=60), 6)
    assert seqs(client) == [6]
    assert (client.events_since()).last_seq == 6
    assert (client.post("after trim")).task.id == 7  # ids and seqs are never reused
    assert (client.events_since(after_seq=6)).events[0].seq == 7
