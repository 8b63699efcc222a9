"""Issue 44 on the store (`store/messages_unseen.py`): messages to a name the board has
never seen are capped, per name, per sender and in all, and end after a week; a name seen keeps
its own.

A typo used to be kept forever (3,000 x 8 KiB to one misspelt name: +48 MiB). These
run the real `message.send` and count the store's rows; the retention duty's step
(`messages_unseen.purge`, run once a minute with event retention) runs as one
transaction, with the test's clock moved past the age instead of waiting for it.
Moved from tests/integration/test_messages_unseen_cap.py and
test_messages_unseen_retention.py (issue 45 item 4).
"""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd.limits import Limits
from coordd.store import messages_unseen
from coordd.store.transaction import Txn
from coordd_client import InvalidParams, NotFound, RecipientNeverSeen
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
#: docs/PROTOCOL-1.2.md's figure, written out so this file also runs on a tree without it.
CAP = 100
BODY = "x" * 8192
WEEK = Limits.unseen_message_max_age_s


def _count(tx: Txn, table: str) -> int:
    (count,) = tx.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(count)


def rows(board: Board, table: str) -> int:
    return board.run(_count, table)


def purge(board: Board) -> int:
    return board.run(messages_unseen.purge)


def test_the_documented_cap_is_the_daemons() -> None:
    assert getattr(Limits, "unseen_inbox_cap", None) == CAP


def test_a_name_never_seen_is_refused_past_its_cap(board: Board, client: Seat) -> None:
    for _ in range(CAP):
        sent = client.send_message(BODY, to="claud-1", agent="codex", project=PROJECT)
        assert sent.recipients == ["claud-1"]
    for _ in range(3):  # still refused: nothing more is stored for the typo
        with pytest.raises(InvalidParams) as refused:
            client.send_message(BODY, to="claud-1", agent="codex", project=PROJECT)
        error = refused.value
        assert error.data["kind"] == "recipient_never_seen"
        assert error.data["field"] == "to"
        assert (error.data["agent"], error.data["unread"], error.data["limit"]) == (
            "claud-1",
            CAP,
            CAP,
        )
        assert "never been seen" in error.message and "coord agents --all" in error.message
    assert rows(board, "messages") == CAP
    assert rows(board, "message_recipients") == CAP
    # The cap is per name: another name is still taken.
    client.send_message("hi", to="claude-2", agent="codex", project=PROJECT)


def test_a_reply_that_resolves_to_a_name_never_seen_is_capped_too(
    board: Board, client: Seat
) -> None:
    first = client.send_message("q", to="typo", agent="codex", project=PROJECT)
    for _ in range(CAP - 1):  # my own message's reply goes to its `to`
        client.send_message("more", reply_to=first.message.id, agent="codex", project=PROJECT)
    with pytest.raises(InvalidParams) as refused:
        client.send_message("more", reply_to=first.message.id, agent="codex", project=PROJECT)
    assert refused.value.data["kind"] == "recipient_never_seen"
    assert refused.value.data["field"] == "reply_to"


def test_one_sender_fills_its_own_allowance_not_the_boards(
    board: Board, client: Seat, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One message each to many typos must not grow either; the real cap is 1,000 per
    sender, a handful here keeps the test short (the daemon reads the class's value).
    A looping sender that reaches it is refused, and every other agent can still
    message a tab that has not started yet."""
    monkeypatch.setattr(Limits, "unseen_sender_cap", 5)
    for n in range(5):
        client.send_message(BODY, to=f"typo-{n}", agent="codex", project=PROJECT)
    with pytest.raises(InvalidParams) as refused:
        client.send_message(BODY, to="typo-5", agent="codex", project=PROJECT)
    assert refused.value.data["kind"] == "recipient_never_seen"
    assert (refused.value.data["unread"], refused.value.data["limit"]) == (5, 5)
    assert "from one sender" in refused.value.message
    assert rows(board, "messages") == 5
    later = client.send_message("when you start", to="claude-9", agent="codex-2", project=PROJECT)
    assert later.recipients == ["claude-9"] and later.never_seen == ["claude-9"]
    # A name that has been seen is not held to it.
    client.post("anything", agent="claude-1", project=PROJECT)
    sent = client.send_message("still fine", to="claude-1", agent="codex", project=PROJECT)
    assert sent.recipients == ["claude-1"] and sent.never_seen == []


def test_all_names_never_seen_share_one_cap_whoever_sent(
    board: Board, client: Seat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "unseen_messages_cap", 4)
    for n in range(4):
        client.send_message(BODY, to=f"typo-{n}", agent=f"codex-{n % 2}", project=PROJECT)
    with pytest.raises(InvalidParams) as refused:
        client.send_message(BODY, to="typo-4", agent="codex-9", project=PROJECT)
    assert (refused.value.data["unread"], refused.value.data["limit"]) == (4, 4)
    assert "in all" in refused.value.message


def test_the_person_is_never_a_name_never_seen(
    board: Board, client: Seat, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`human-<user>` is the person on every surface: a message to them is kept like
    any other before any surface of theirs has called, and counts against no cap."""
    for cap in ("unseen_inbox_cap", "unseen_sender_cap", "unseen_messages_cap"):
        monkeypatch.setattr(Limits, cap, 0)
    for _ in range(3):
        sent = client.send_message(BODY, to="human-alice", agent="codex", project=PROJECT)
        assert sent.recipients == ["human-alice"] and sent.never_seen == []
    clock.advance(WEEK + 86400)
    assert purge(board) == 0
    assert len(client.read_messages(agent="human-alice", limit=10).messages) == 3


def test_a_seen_recipient_is_not_capped(board: Board, client: Seat) -> None:
    client.post("hello", agent="claude-1", project=PROJECT)  # claude-1 is seen
    for n in range(CAP + 5):
        sent = client.send_message(f"m{n}", to="claude-1", agent="codex", project=PROJECT)
        assert sent.never_seen == []
    unread = client.read_messages(agent="claude-1", limit=1000)
    assert len(unread.messages) == CAP + 5


def test_a_thread_member_never_seen_is_left_out_not_refused(
    board: Board, client: Seat, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "unseen_inbox_cap", 2)
    task = (client.post("t", assignee="later", agent="lead", project=PROJECT)).task
    client.post("hello", agent="reviewer", project=PROJECT)
    joined = client.send_message("in", task_id=task.id, agent="reviewer", project=PROJECT)
    assert joined.recipients == ["later", "lead"]  # "later"'s first
    sent = [
        client.send_message(f"n{n}", task_id=task.id, agent="lead", project=PROJECT)
        for n in range(3)
    ]
    assert [s.recipients for s in sent] == [["later", "reviewer"]] + [["reviewer"]] * 2
    assert [s.never_seen for s in sent] == [["later"]] + [[]] * 2


def test_messages_to_a_name_never_seen_end_after_the_age(
    board: Board, client: Seat, clock: ManualClock
) -> None:
    old = client.send_message("lost", to="typo", agent="codex", project=PROJECT)
    assert old.never_seen == ["typo"]
    clock.advance(WEEK - 60)
    assert purge(board) == 0  # not yet a week
    clock.advance(120)
    fresh = client.send_message("newer", to="typo", agent="codex", project=PROJECT)
    assert purge(board) == 1
    with pytest.raises(NotFound):
        client.get_message(old.message.id)
    inbox = client.read_messages(agent="typo")
    assert [m.id for m in inbox.messages] == [fresh.message.id]


def test_a_name_seen_later_keeps_its_messages(
    board: Board, client: Seat, clock: ManualClock
) -> None:
    early = [
        client.send_message(f"brief {n}", to="late-tab", agent="lead", project=PROJECT)
        for n in range(3)
    ]
    assert all(sent.never_seen == ["late-tab"] for sent in early)
    client.post("started", agent="late-tab", project=PROJECT)  # the tab starts
    assert purge(board) == 0  # its marks are released
    clock.advance(WEEK * 2)
    assert purge(board) == 0
    inbox = client.read_messages(agent="late-tab")
    assert [m.body for m in inbox.messages] == ["brief 0", "brief 1", "brief 2"]


def test_the_cap_frees_up_when_the_old_messages_end(
    board: Board, client: Seat, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "unseen_inbox_cap", 2)
    for n in range(2):
        client.send_message(f"m{n}", to="typo", agent="codex", project=PROJECT)
    with pytest.raises(RecipientNeverSeen):
        client.send_message("m2", to="typo", agent="codex", project=PROJECT)
    clock.advance(WEEK + 1)
    assert purge(board) == 2
    client.send_message("m3", to="typo", agent="codex", project=PROJECT)


def test_a_thread_message_stays_for_its_other_members(
    board: Board, client: Seat, clock: ManualClock
) -> None:
    task = (client.post("t", assignee="later", agent="lead", project=PROJECT)).task
    client.send_message("me too", task_id=task.id, agent="reviewer", project=PROJECT)
    sent = client.send_message("plan", task_id=task.id, agent="lead", project=PROJECT)
    assert sent.never_seen == ["later"]
    clock.advance(WEEK + 1)
    assert purge(board) == 2  # "later"'s two rows; "reviewer" was seen
    got = client.get_message(sent.message.id)
    assert got.recipients == ["reviewer"]
