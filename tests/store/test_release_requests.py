"""1.2 section 12's release requests on the store (`store/release_requests.py`): a
claim handed over in one step, denied and narrowed requests, and the refusals.

Moved from tests/system/test_messages.py (issue 45 item 4), which keeps the approval
raced by a third process and the refusals of malformed params on the wire.
"""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd_client import Conflict, InvalidParams, LeaseLost, NotFound
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(board: Board, agent: str) -> Seat:
    return board.seat(agent, PROJECT)


def test_approve_hands_a_claim_over_in_one_step(board: Board) -> None:
    with client_for(board, "holder") as holder, client_for(board, "asker") as asker:
        task = holder.post("migrate").task
        claimed = holder.claim(task.id).task
        request = asker.request_release(task_id=task.id)
        last = asker.events_since().last_seq
        answered = holder.answer_request(request.request.id, "approve")
        assert answered.task is not None
        assert answered.task.claimed_by == "asker" and answered.task.fence == claimed.fence + 1
        types = [e.type for e in asker.events_since(after_seq=last).events]
        assert types == ["task.released", "task.claimed"]
        with pytest.raises(LeaseLost):
            holder.complete(task.id, fence=claimed.fence)


def test_deny_and_narrow(board: Board) -> None:
    with client_for(board, "holder") as holder, client_for(board, "asker") as asker:
        holder.reserve(["src/**"])
        denied = asker.request_release(patterns=["src/**"])
        result = holder.answer_request(denied.request.id, "deny", reason="mid-refactor")
        assert result.request.request is not None
        assert (result.request.request.status, result.request.request.reason) == (
            "denied",
            "mid-refactor",
        )
        assert result.reservations == [] and result.released == []
        assert [r.agent for r in holder.reservations(project=PROJECT).reservations] == ["holder"]
        narrowed = asker.request_release(patterns=["src/**"])
        result = holder.answer_request(narrowed.request.id, "narrow", patterns=["src/docs/**"])
        assert [r.pattern for r in result.reservations] == ["src/docs/**"]
        assert result.request.request is not None
        assert result.request.request.granted == ["src/docs/**"]
        # The holder's src/** overlapped what it handed over: it ended whole, and the
        # answer says so (a pattern cannot be cut in two), so the holder can re-reserve.
        assert result.released == ["src/**"]
        assert not holder.reservations(project=PROJECT, agent="holder").reservations
        bodies = [m.body for m in asker.read_messages().messages]
        assert bodies == [
            "denied: src/** stays with holder (mid-refactor)",
            "narrowed: you have src/docs/**",
        ]


def test_refusals(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        with pytest.raises(NotFound):
            a.request_release(patterns=["nobody/**"])
        task = a.post("t").task
        with pytest.raises(Conflict):
            a.request_release(task_id=task.id)  # pending: nobody to ask
        b.reserve(["x/**"])
        request = a.request_release(patterns=["x/**"])
        with pytest.raises(LeaseLost):
            a.answer_request(request.request.id, "approve")  # not addressed to a
        with pytest.raises(InvalidParams):
            b.answer_request(request.request.id, "narrow")  # narrow without patterns
        with pytest.raises(NotFound):
            a.get_message(10**6)
        with pytest.raises(InvalidParams):
            a.ack_messages(10**6)


# Moved from tests/integration/test_messages_expiry.py: the request's ttl on the test's clock.
def test_an_unanswered_request_expires(board: Board, clock: ManualClock) -> None:
    with board.seat() as holder, board.seat() as asker:
        holder.reserve(["src/**"], agent="holder", project=PROJECT)
        asked = asker.request_release(patterns=["src/**"], ttl_s=60, agent="asker", project=PROJECT)
        assert asked.request.open
        clock.advance(61)
        now = (asker.get_message(asked.request.id)).message
        assert now.request is not None and now.request.status == "expired"
        assert not now.open
        with pytest.raises(Conflict, match="expired"):
            holder.answer_request(asked.request.id, "approve", agent="holder")
        # Nothing changed hands.
        held = (holder.reservations(project=PROJECT)).reservations
        assert [r.agent for r in held] == ["holder"]
