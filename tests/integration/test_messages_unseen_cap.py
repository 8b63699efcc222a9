"""Issue 44: messages to a name the daemon has never seen are capped, per name and in all.

A typo used to be kept forever (3,000 x 8 KiB to one misspelt name: +48 MiB).
These run the real `message.send` through an in-process daemon and count the
store's rows; they fail on a daemon without the cap (every send is taken).
They import nothing the cap added, so they run, and fail, on the old tree.
"""

from __future__ import annotations

import pytest

from coordd.daemon import Daemon
from coordd.limits import Limits
from coordd.store.transaction import Txn
from coordd_client import InvalidParams
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
#: docs/PROTOCOL-1.2.md's figure, written out so this file also runs on a tree without it.
CAP = 100
BODY = "x" * 8192


def _count(tx: Txn, table: str) -> int:
    (count,) = tx.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(count)


async def rows(inproc: Daemon, table: str) -> int:
    return int(await inproc.writer.submit(_count, table))


def test_the_documented_cap_is_the_daemons() -> None:
    assert getattr(Limits, "unseen_inbox_cap", None) == CAP


async def test_a_name_never_seen_is_refused_past_its_cap(
    inproc: Daemon, aclient: AsyncClient
) -> None:
    for _ in range(CAP):
        sent = await aclient.send_message(BODY, to="claud-1", agent="codex", project=PROJECT)
        assert sent.recipients == ["claud-1"]
    for _ in range(3):  # still refused: nothing more is stored for the typo
        with pytest.raises(InvalidParams) as refused:
            await aclient.send_message(BODY, to="claud-1", agent="codex", project=PROJECT)
        error = refused.value
        assert error.data["kind"] == "recipient_never_seen"
        assert error.data["field"] == "to"
        assert (error.data["agent"], error.data["unread"], error.data["limit"]) == (
            "claud-1",
            CAP,
            CAP,
        )
        assert "never been seen" in error.message and "coord agents --all" in error.message
    assert await rows(inproc, "messages") == CAP
    assert await rows(inproc, "message_recipients") == CAP
    # The cap is per name: another name is still taken.
    await aclient.send_message("hi", to="claude-2", agent="codex", project=PROJECT)


async def test_a_reply_that_resolves_to_a_name_never_seen_is_capped_too(
    inproc: Daemon, aclient: AsyncClient
) -> None:
    first = await aclient.send_message("q", to="typo", agent="codex", project=PROJECT)
    for _ in range(CAP - 1):  # my own message's reply goes to its `to`
        await aclient.send_message(
            "more", reply_to=first.message.id, agent="codex", project=PROJECT
        )
    with pytest.raises(InvalidParams) as refused:
        await aclient.send_message(
            "more", reply_to=first.message.id, agent="codex", project=PROJECT
        )
    assert refused.value.data["kind"] == "recipient_never_seen"
    assert refused.value.data["field"] == "reply_to"


async def test_all_names_never_seen_share_one_cap(
    inproc: Daemon, aclient: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One message each to many typos must not grow either; the real cap is 1,000,
    # a handful here keeps the test short (the daemon reads the class's value).
    monkeypatch.setattr(Limits, "unseen_messages_cap", 5)
    for n in range(5):
        await aclient.send_message(BODY, to=f"typo-{n}", agent="codex", project=PROJECT)
    with pytest.raises(InvalidParams) as refused:
        await aclient.send_message(BODY, to="typo-5", agent="codex", project=PROJECT)
    assert refused.value.data["kind"] == "recipient_never_seen"
    assert (refused.value.data["unread"], refused.value.data["limit"]) == (5, 5)
    assert "in all" in refused.value.message
    assert await rows(inproc, "messages") == 5
    # A name that has been seen is not held to it.
    await aclient.post("anything", agent="claude-1", project=PROJECT)
    sent = await aclient.send_message("still fine", to="claude-1", agent="codex", project=PROJECT)
    assert sent.recipients == ["claude-1"] and sent.never_seen == []


async def test_a_seen_recipient_is_not_capped(inproc: Daemon, aclient: AsyncClient) -> None:
    await aclient.post("hello", agent="claude-1", project=PROJECT)  # claude-1 is seen
    for n in range(CAP + 5):
        sent = await aclient.send_message(f"m{n}", to="claude-1", agent="codex", project=PROJECT)
        assert sent.never_seen == []
    unread = await aclient.read_messages(agent="claude-1", limit=1000)
    assert len(unread.messages) == CAP + 5


async def test_a_thread_member_never_seen_is_left_out_not_refused(
    inproc: Daemon, aclient: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "unseen_inbox_cap", 2)
    task = (await aclient.post("t", assignee="later", agent="lead", project=PROJECT)).task
    await aclient.post("hello", agent="reviewer", project=PROJECT)
    joined = await aclient.send_message("in", task_id=task.id, agent="reviewer", project=PROJECT)
    assert joined.recipients == ["later", "lead"]  # "later"'s first
    sent = [
        await aclient.send_message(f"n{n}", task_id=task.id, agent="lead", project=PROJECT)
        for n in range(3)
    ]
    assert [s.recipients for s in sent] == [["later", "reviewer"]] + [["reviewer"]] * 2
    assert [s.never_seen for s in sent] == [["later"]] + [[]] * 2
