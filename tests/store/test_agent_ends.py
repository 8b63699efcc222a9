"""1.2 `agent.end` on the store (`store/agent_ends.py`, docs/PROTOCOL-1.2.md section 2a):
an agent whose tab exited is shown as ended, a hand-over to it is refused, and a
person frees its reservations (`of` on `reservation.release`, section 10b).
"""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd_client import Conflict
from coordd_wire.errors import AgentEnded
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
GONE = "codex-mcp-client-4242-1a2b"
HUMAN = "human-alice"


def client_for(board: Board, agent: str) -> Seat:
    return board.seat(agent, PROJECT)


def seen(seat: Seat, agent: str) -> tuple[str, str | None]:
    """`agent`'s last-seen and reported end, as `agent.list` says them."""
    (info,) = [a for a in seat.agents().agents if a.agent == agent]
    return info.last_seen, info.ended_at


def test_an_ended_agent_is_listed_as_ended_until_it_calls_again(
    board: Board, clock: ManualClock
) -> None:
    with client_for(board, GONE) as gone, client_for(board, HUMAN) as human:
        gone.reserve(["src/**"])
        before, ended = seen(human, GONE)
        assert ended is None
        clock.advance(5)
        assert gone.end_agent().ended
        after, ended = seen(human, GONE)
        assert ended is not None and ended > before
        assert after == before  # its end is no sign of life
        clock.advance(0.1)  # within the writer's last-seen resolution: written all the same
        gone.reserve(["docs/**"])
        assert seen(human, GONE)[1] is None
        # Another reports it (a client that found its tab record dead); a name never
        # seen gets no row.
        clock.advance(5)
        assert human.end_agent(GONE).ended
        assert seen(human, GONE)[1] is not None
        assert not human.end_agent("never-seen").ended
        assert "never-seen" not in [a.agent for a in human.agents().agents]


def test_a_hand_over_to_an_ended_requester_is_refused(board: Board, clock: ManualClock) -> None:
    with client_for(board, "holder") as holder, client_for(board, GONE) as gone:
        holder.reserve(["src/**"])
        request = gone.request_release(patterns=["src/**"])
        task = holder.post("t").task
        holder.claim(task.id)
        asked_claim = gone.request_release(task_id=task.id)
        clock.advance(10)
        gone.end_agent()
        for decision, asked in (
            ("approve", request),
            ("narrow", request),
            ("approve", asked_claim),
        ):
            patterns = ["src/a/**"] if decision == "narrow" else None
            with pytest.raises(AgentEnded) as refused:
                holder.answer_request(asked.request.id, decision, patterns=patterns)  # type: ignore[arg-type]
            assert isinstance(refused.value, Conflict)
            assert refused.value.data["agent"] == GONE and refused.value.data["ended_at"]
        # Nothing moved; a deny is still the holder's answer.
        assert [r.agent for r in holder.reservations(project=PROJECT).reservations] == ["holder"]
        assert holder.get(task.id).task.claimed_by == "holder"
        denied = holder.answer_request(request.request.id, "deny")
        assert denied.request.request is not None
        assert denied.request.request.status == "denied"


def test_a_hand_over_does_not_make_the_requester_seen(board: Board, clock: ManualClock) -> None:
    with client_for(board, "holder") as holder, client_for(board, "asker") as asker:
        holder.reserve(["src/**"])
        request = asker.request_release(patterns=["src/**"])
        asked_at = seen(holder, "asker")[0]
        clock.advance(30)
        done = holder.answer_request(request.request.id, "approve")
        assert [r.agent for r in done.reservations] == ["asker"]
        assert seen(holder, "asker")[0] == asked_at
        assert seen(holder, "holder")[0] > asked_at


def test_a_person_frees_another_agents_reservations(board: Board) -> None:
    with client_for(board, GONE) as gone, client_for(board, HUMAN) as human:
        gone.reserve(["src/**", "docs/**"])
        freed = human.unreserve(["src/**"], of=GONE)
        assert freed.released == 1
        assert [r.pattern for r in human.reservations(project=PROJECT).reservations] == ["docs/**"]
        assert human.unreserve(of=GONE).released == 1
        assert human.reservations(project=PROJECT).reservations == []


def test_a_sender_is_told_which_recipients_have_ended(board: Board) -> None:
    """Section 2a: a message to a tab whose end was reported is kept, and the sender
    hears that nothing runs to wake it; once the name calls again it is not ended."""
    with client_for(board, GONE) as gone, client_for(board, HUMAN) as human:
        gone.post("was here")
        assert gone.end_agent().ended
        sent = human.send_message("are you there?", to=GONE)
        assert sent.recipients == [GONE] and sent.ended == [GONE]
        again = human.send_message("are you there?", to=GONE, idempotency_key="k")
        assert again.ended == [GONE]
        gone.post("back again")  # the name is seen: not ended any more
        assert human.send_message("welcome back", to=GONE).ended == []
