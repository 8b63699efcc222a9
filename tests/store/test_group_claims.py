"""A group of claims answers as the same claims run one by one, on both stores.

On PostgreSQL a group's leading claims run as one statement before its commands
(`WriteStore.claim_ahead`, docs/TEAM-MODE.md "A write group on PostgreSQL"); every
claim must still answer, emit and be numbered as it would alone, in order: the
loser of a held task, the same id claimed twice in one group, a task assigned to
someone else, a blocked task (whose refusal makes the group run again with a
savepoint per command), and a claim after another command.
"""

from __future__ import annotations

import msgspec
import pytest

from coordd.store import claims, writes
from coordd.store.group import Call
from coordd_wire import params as P
from coordd_wire.errors import Blocked
from coordd_wire.wire import ClaimResult
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends


def on_the_wire(value: object) -> ClaimResult:
    """A claim's answer as its client decodes it (the store hands the task over raw)."""
    return msgspec.json.decode(msgspec.json.encode(value), type=ClaimResult)


def claim(task_id: int, agent: str) -> Call:
    return Call(claims.claim_task, (P.ClaimParams(id=task_id, agent=agent, lease_s=60),))


def test_a_group_of_claims_answers_as_claims_one_by_one(board: Board, client: Seat) -> None:
    held, free, theirs, later = (client.post(f"t{n}").task.id for n in range(4))
    client.assign(theirs, "other")
    board.run(claims.claim_task, P.ClaimParams(id=held, agent="w"))
    last_seq = board.events[-1].seq
    done = board.group(
        claim(held, "a"),  # held by w: lost
        claim(free, "a"),  # won
        claim(free, "b"),  # the same task again: lost to a
        claim(theirs, "a"),  # assigned to someone else: lost
        Call(writes.post_task, (P.PostParams(title="between"),)),
        claim(later, "a"),  # after another command
    )
    answers = [(value, error) for value, error in done.results]
    assert all(error is None for _, error in answers)
    claimed = [on_the_wire(value) for value, _ in answers if isinstance(value, ClaimResult)]
    assert [(c.won, c.task.id, c.task.claimed_by) for c in claimed] == [
        (False, held, "w"),
        (True, free, "a"),
        (False, free, "a"),
        (False, theirs, None),
        (True, later, "a"),
    ]
    assert [c.task.fence for c in claimed if c.won] == [1, 1]
    assert [(e.type, e.task_id) for e in done.events] == [
        ("task.claimed", free),
        ("task.posted", done.events[1].task_id),
        ("task.claimed", later),
    ]
    assert [e.seq for e in done.events] == [last_seq + 1, last_seq + 2, last_seq + 3]
    stored = client.events_since(after_seq=last_seq).events
    assert [(e.seq, e.type, e.task_id) for e in stored] == [
        (e.seq, e.type, e.task_id) for e in done.events
    ]
    assert [t.id for t in client.list_tasks(state="claimed").tasks] == [held, free, later]


def test_a_refused_claim_in_a_group_undoes_only_itself(board: Board, client: Seat) -> None:
    first, base, second = (client.post(f"t{n}").task.id for n in range(3))
    blocked = client.post("blocked", depends_on=[base]).task.id
    done = board.group(claim(first, "a"), claim(blocked, "a"), claim(second, "b"))
    (won_first, none), (nothing, refusal), (won_second, none_again) = done.results
    assert isinstance(refusal, Blocked) and nothing is None
    assert none is None and none_again is None
    first_answer, second_answer = on_the_wire(won_first), on_the_wire(won_second)
    assert (first_answer.won, first_answer.task.claimed_by) == (True, "a")
    assert (second_answer.won, second_answer.task.claimed_by) == (True, "b")
    assert [(e.type, e.task_id) for e in done.events] == [
        ("task.claimed", first),
        ("task.claimed", second),
    ]
    assert client.get(blocked).task.state == "pending"
