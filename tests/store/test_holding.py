"""Protocol 1.2 `agent.release` on the store (`store/holding.py`, docs/PROTOCOL-1.2.md
section 2): a human lets go of a dead tab's claims, reservations and assignments as
itself, in one transaction.

Moved from tests/system/test_release_agent.py (issue 45 item 4), which keeps the
wire's refusals, the CLI and the slots a release wakes waiters of.
"""

from __future__ import annotations

import pytest

from coordd_client import LeaseLost
from coordd_client.paging import task_history
from store.board import Board, Seat

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
