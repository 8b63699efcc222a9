"""Protocol 1.2 `agent.release` on the store (`store/holding.py`, docs/PROTOCOL-1.2.md
section 2): a human lets go of a dead tab's claims, reservations and assignments as
itself, in one transaction.

Moved from tests/system/test_release_agent.py (issue 45 item 4), which keeps the
wire's refusals, the CLI and the slots a release wakes waiters of.

What a holder does with its claim (PROTOCOL.md section 5: renew, release, complete,
fail, then_post, stale fences) moved from tests/integration/test_lifecycle.py.
"""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd_client import Conflict, InvalidParams, LeaseLost
from coordd_client.paging import task_history
from store.board import Board, Seat
from store.tasks import claimed, event_types, fresh

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
OTHER = "/other"
DEAD = "codex-mcp-client-4242-1a2b"
HUMAN = "human-alice"


def client_for(board: Board, agent: str, project: str = PROJECT) -> Seat:
    return board.seat(agent, project)


def test_release_names_the_caller_and_the_dead_holder_is_fenced_out(
    board: Board,
) -> None:
    with (
        client_for(board, DEAD) as dead,
        client_for(board, HUMAN) as human,
        client_for(board, "claude-2") as other,
    ):
        assert human.supports("agent_release")
        first = dead.post("parser").task
        second = dead.post("lexer", assignee=DEAD).task
        waiting = dead.post("docs", assignee=DEAD).task
        elsewhere = dead.post("other repo", project=OTHER).task
        kept = other.post("not theirs").task
        held = [dead.claim(t.id).task for t in (first, second)]
        dead.claim(elsewhere.id)
        other.claim(kept.id)
        dead.reserve(["src/**"], reason="refactor")
        dead.reserve(["lib/**"], task_id=first.id)
        dead.reserve(["x/**"], project=OTHER)
        other.reserve(["docs/**"])
        last = human.events_since().last_seq

        result = human.release_agent(DEAD, project=PROJECT, reason="tab crashed")
        assert (result.claims, result.reservations, result.unassigned) == (2, 2, 2)

        # The history of a released task says who let it go, whose it was and why.
        events = task_history(human, first.id)
        assert [e.type for e in events][-1] == "task.released"
        released = events[-1]
        assert released.task is not None
        assert (released.agent, released.of, released.reason) == (HUMAN, DEAD, "tab crashed")
        assert released.task.state == "pending" and released.task.claimed_by is None
        assert released.task.fence == held[0].fence
        # One transaction: consecutive seqs, releases then assignments, each by id.
        batch = human.events_since(after_seq=last).events
        assert [(e.type, e.task_id) for e in batch] == [
            ("task.released", first.id),
            ("task.released", second.id),
            ("task.assigned", second.id),
            ("task.assigned", waiting.id),
        ]
        assert [e.seq for e in batch] == list(range(last + 1, last + 5))
        assert all((e.agent, e.of, e.reason) == (HUMAN, DEAD, "tab crashed") for e in batch)
        assert human.get(second.id).task.assignee is None
        assert human.get(waiting.id).task.assignee is None

        # The dead holder's late complete is refused, before and after a new claim.
        with pytest.raises(LeaseLost):
            dead.complete(first.id, fence=held[0].fence, result="late")
        reclaimed = other.claim(first.id).task
        assert reclaimed.fence == held[0].fence + 1
        with pytest.raises(LeaseLost):
            dead.complete(first.id, fence=held[0].fence, result="late")
        assert human.get(first.id).task.claimed_by == "claude-2"

        # Its reservations here are gone; others' and other projects' stay.
        here = {(r.agent, r.pattern) for r in human.reservations(project=PROJECT).reservations}
        assert here == {("claude-2", "docs/**")}
        assert [r.pattern for r in human.reservations(project=OTHER).reservations] == ["x/**"]
        assert human.get(kept.id).task.claimed_by == "claude-2"
        assert human.get(elsewhere.id).task.claimed_by == DEAD

        # Without project: every project.
        rest = human.release_agent(DEAD)
        assert (rest.claims, rest.reservations, rest.unassigned) == (1, 1, 0)
        assert human.get(elsewhere.id).task.state == "pending"
        assert human.reservations(agent=DEAD).reservations == []


def test_nothing_held_answers_zeros_and_self_release_is_allowed(board: Board) -> None:
    with client_for(board, HUMAN) as human, client_for(board, "me") as me:
        last = human.events_since().last_seq
        nobody = human.release_agent("never-seen")
        assert (nobody.claims, nobody.reservations, nobody.unassigned) == (0, 0, 0)
        assert human.events_since(after_seq=last).events == []

        task = me.post("mine").task
        me.claim(task.id)
        mine = me.release_agent("me")
        assert (mine.claims, mine.reservations, mine.unassigned) == (1, 0, 0)
        event = task_history(me, task.id)[-1]
        assert (event.type, event.agent, event.of, event.reason) == (
            "task.released", "me", "me", None,
        )  # fmt: skip


# --- PROTOCOL.md section 5, edge by edge (moved from tests/integration/test_lifecycle.py) ---


def test_pending_refuses_holder_operations(client: Seat) -> None:
    task_id = fresh(client)
    for operation in (client.renew, client.release, client.complete, client.fail):
        with pytest.raises(LeaseLost) as info:
            operation(task_id, "a")
        assert info.value.code == -32003 and info.value.data["task"]["state"] == "pending"
    with pytest.raises(Conflict) as conflict:
        client.reopen(task_id)
    assert conflict.value.code == -32002


def test_renew_by_holder_with_and_without_fence(client: Seat, clock: ManualClock) -> None:
    task_id, fence = claimed(client, lease_s=10)
    before = (client.get(task_id)).task.lease_expires_at
    assert before is not None
    clock.advance(5)
    renewed = (client.renew(task_id, "a", fence=fence, lease_s=10)).task.lease_expires_at
    assert renewed is not None and renewed > before
    assert (client.renew(task_id, "a")).task.state == "claimed"


def test_holder_operations_refuse_others_and_stale_fences(client: Seat) -> None:
    task_id, fence = claimed(client)
    for operation in (client.renew, client.release, client.complete, client.fail):
        with pytest.raises(LeaseLost) as other:
            operation(task_id, "b")
        assert other.value.data["task"]["claimed_by"] == "a"
        with pytest.raises(LeaseLost) as stale:
            operation(task_id, "a", fence=fence + 1)
        assert "fence" in stale.value.message
    assert (client.get(task_id)).task.state == "claimed"


def test_release_returns_to_pending(client: Seat) -> None:
    task_id, fence = claimed(client)
    task = (client.release(task_id, "a", fence=fence)).task
    assert task.state == "pending" and task.claimed_by is None and task.claimed_at is None
    assert task.lease_expires_at is None and task.fence == fence
    assert event_types(client, task_id) == ["task.posted", "task.claimed", "task.released"]


def test_complete_keeps_holder_and_clears_lease(client: Seat) -> None:
    task_id, fence = claimed(client)
    done = client.complete(task_id, "a", fence=fence, result="fixed in abc123")
    assert done.task.state == "done" and done.task.result == "fixed in abc123"
    assert done.task.claimed_by == "a" and done.task.claimed_at is not None
    assert done.task.lease_expires_at is None and done.posted is None


def test_repeated_complete_returns_the_first_outcome(client: Seat) -> None:
    task_id, fence = claimed(client)
    first = client.complete(
        task_id, "a", fence=fence, then_post={"title": "ack", "kind": "ack", "state": "done"}
    )
    assert first.posted is not None
    again = client.complete(task_id, "a", fence=fence)
    assert again.task == first.task and again.posted == first.posted
    assert (client.complete(task_id, "a")).task.state == "done"
    with pytest.raises(LeaseLost):
        client.complete(task_id, "b")
    with pytest.raises(LeaseLost):
        client.complete(task_id, "a", fence=fence + 5)
    assert event_types(client, task_id) == ["task.posted", "task.claimed", "task.completed"]


def test_then_post_commits_with_the_completion(client: Seat) -> None:
    task_id, fence = claimed(client)
    done = client.complete(
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
    events = (client.events_since()).events
    completed = next(e for e in events if e.type == "task.completed")
    posted = next(e for e in events if e.type == "task.posted" and e.task_id == done.posted.id)
    assert posted.seq == completed.seq + 1


def test_invalid_then_post_commits_nothing(client: Seat) -> None:
    task_id, fence = claimed(client)
    with pytest.raises(InvalidParams) as info:
        client.complete(task_id, "a", fence=fence, then_post={"title": "x", "kind": "NOT A KIND"})
    assert info.value.data["field"] == "then_post.kind"
    assert (client.get(task_id)).task.state == "claimed"
    assert len((client.list_tasks()).tasks) == 1


def test_fail_and_fail_with_retry(client: Seat) -> None:
    task_id, fence = claimed(client)
    failed = (client.fail(task_id, "a", fence=fence, reason="tests red")).task
    assert failed.state == "failed" and failed.result == "tests red" and failed.claimed_by == "a"
    assert (client.fail(task_id, "a", fence=fence)).task == failed  # a repeat
    retry_id, retry_fence = claimed(client)
    retried = (client.fail(retry_id, "a", fence=retry_fence, reason="flaky", retry=True)).task
    assert (
        retried.state == "pending"
        and retried.claimed_by is None
        and retried.lease_expires_at is None
    )
    with pytest.raises(LeaseLost):  # a repeated retry cannot be recognised
        client.fail(retry_id, "a", fence=retry_fence, retry=True)
    second = client.claim(retry_id, "b")
    assert second.won and second.task.fence == retry_fence + 1 and second.task.attempts == 2


def test_a_release_asked_again_after_another_claim_answers_the_task(client: Seat) -> None:
    """1.2 section 5b: a release whose answer was lost, asked again with `repeat` once
    another agent holds the task, answers with the task as it stands, recording
    nothing; without `repeat`, or by another agent, or at another fence, -32003."""
    assert client.supports("holder_repeat")
    task_id, fence = claimed(client)
    client.release(task_id, "a", fence=fence)
    taken = client.claim(task_id, "b")
    assert taken.won
    with pytest.raises(LeaseLost):
        client.release(task_id, "a", fence=fence)
    again = client.release(task_id, "a", fence=fence, repeat=True).task
    assert again == taken.task and again.claimed_by == "b"
    assert client.release(task_id, "a", repeat=True).task == taken.task
    for agent, at in (("c", fence), ("a", fence + 1)):
        with pytest.raises(LeaseLost):
            client.release(task_id, agent, fence=at, repeat=True)
    assert event_types(client, task_id) == [
        "task.posted", "task.claimed", "task.released", "task.claimed",
    ]  # fmt: skip


def test_a_repeat_is_not_found_once_its_agent_claimed_again(client: Seat) -> None:
    """The first attempt is the agent's release after its last claim: released,
    claimed again and lapsed or taken, a `repeat` release is refused."""
    task_id, fence = claimed(client)
    client.release(task_id, "a", fence=fence)
    second = client.claim(task_id, "a").task
    client.release(task_id, "a", fence=second.fence)
    client.claim(task_id, "b")
    assert client.release(task_id, "a", fence=second.fence, repeat=True).task.claimed_by == "b"
    with pytest.raises(LeaseLost):  # that fence's claim was released, but claimed again since
        client.release(task_id, "a", fence=fence, repeat=True)


def test_a_retried_fail_asked_again_is_recognised(client: Seat) -> None:
    task_id, fence = claimed(client)
    client.fail(task_id, "a", fence=fence, reason="flaky", retry=True)
    client.claim(task_id, "b")
    again = client.fail(task_id, "a", fence=fence, retry=True, repeat=True).task
    assert again.claimed_by == "b" and again.state == "claimed"
    with pytest.raises(LeaseLost):  # a release is not the fail it repeats
        client.release(task_id, "a", fence=fence, repeat=True)
