"""1.2 section 12's messages on the store (`store/messages.py`): delivery once per
recipient by the cursor, audiences, idempotency keys and the event a send appends.

Moved from tests/system/test_messages.py (issue 45 item 4), which keeps what needs
a process: a restart, a blocking wait, a race between processes, the wire's refusals.
"""

from __future__ import annotations

import msgspec
import pytest

from coordd_wire.wire_messages import MessageEvent
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(board: Board, agent: str) -> Seat:
    return board.seat(agent, PROJECT)


def test_a_recipient_that_drops_mid_stream_gets_everything_unacked_once(board: Board) -> None:
    with client_for(board, "codex-3") as codex:
        for n in range(3):
            codex.send_message(f"m{n}", to="claude-1")
        with client_for(board, "claude-1") as claude:
            assert len(claude.read_messages().messages) == 3  # read, then gone before its ack
        for n in range(3, 5):
            codex.send_message(f"m{n}", to="claude-1")
        with client_for(board, "claude-1") as claude:
            first = claude.read_messages(limit=2)
            assert [m.body for m in first.messages] == ["m0", "m1"] and first.more
            claude.ack_messages(first.messages[-1].id)
        with client_for(board, "claude-1") as claude:
            rest = claude.read_messages()
            assert [m.body for m in rest.messages] == ["m2", "m3", "m4"] and not rest.more
            claude.ack_messages(rest.messages[-1].id)
            assert claude.read_messages().messages == []


def test_project_and_thread_audiences(board: Board) -> None:
    with (
        client_for(board, "a") as a,
        client_for(board, "b") as b,
        client_for(board, "c") as c,
    ):
        task = a.post("parser").task
        b.claim(task.id)
        c.reserve(["docs/**"])
        everyone = a.send_message("standup in 5")
        assert everyone.message.audience == "project"
        assert everyone.recipients == ["b", "c"]
        thread = c.send_message("is the lexer in scope?", task_id=task.id, kind="question")
        assert thread.message.audience == "task" and thread.message.open
        assert thread.recipients == ["a", "b"]
        # A reply goes to the question's sender and answers it.
        reply = b.send_message("no, parser only", reply_to=thread.message.id)
        assert reply.message.to == "c" and reply.message.task_id == task.id
        assert not c.get_message(thread.message.id).message.open
        assert [m.body for m in c.read_messages().messages] == ["standup in 5", "no, parser only"]
        # A task event stream that names no types never sees a message.
        plain = a.events_since()
        assert all(e.type.startswith("task.") for e in plain.events)
        named = msgspec.json.decode(
            a.call_raw("events.since", {"types": ["message.sent"], "task_id": task.id}).result
        )
        assert [e["seq"] for e in named["events"]] == [thread.message.seq, reply.message.seq]


def test_idempotency_key_sends_once(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        first = a.send_message("once", to="b", idempotency_key="k1")
        again = a.send_message("once", to="b", idempotency_key="k1")
        assert first.created and not again.created
        assert again.message.id == first.message.id
        assert len(b.read_messages().messages) == 1


def test_message_event_shape(board: Board) -> None:
    with client_for(board, "a") as a:
        sent = a.send_message("hello", to="b")
        raw = msgspec.json.decode(a.call_raw("events.since", {"types": ["message.sent"]}).result)
        (event,) = raw["events"]
        decoded = msgspec.convert(event, MessageEvent)
        assert decoded.message.id == sent.message.id and decoded.recipients == ["b"]
