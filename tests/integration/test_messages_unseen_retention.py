"""Issue 44: what a name never seen was sent ends after a week; a name seen keeps its own.

The retention duty's step (`messages_unseen.purge`, run once a minute with event
retention) is driven directly on the daemon's writer, with the test's clock
moved past the age instead of waiting for it.
"""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd.limits import Limits
from coordd.store import messages_unseen
from coordd_client import NotFound, RecipientNeverSeen
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
WEEK = Limits.unseen_message_max_age_s


async def purge(inproc: Daemon) -> int:
    return int(await inproc.writer.submit(messages_unseen.purge))


async def test_messages_to_a_name_never_seen_end_after_the_age(
    inproc: Daemon, aclient: AsyncClient, clock: ManualClock
) -> None:
    old = await aclient.send_message("lost", to="typo", agent="codex", project=PROJECT)
    assert old.never_seen == ["typo"]
    clock.advance(WEEK - 60)
    assert await purge(inproc) == 0  # not yet a week
    clock.advance(120)
    fresh = await aclient.send_message("newer", to="typo", agent="codex", project=PROJECT)
    assert await purge(inproc) == 1
    with pytest.raises(NotFound):
        await aclient.get_message(old.message.id)
    inbox = await aclient.read_messages(agent="typo")
    assert [m.id for m in inbox.messages] == [fresh.message.id]


async def test_a_name_seen_later_keeps_its_messages(
    inproc: Daemon, aclient: AsyncClient, clock: ManualClock
) -> None:
    early = [
        await aclient.send_message(f"brief {n}", to="late-tab", agent="lead", project=PROJECT)
        for n in range(3)
    ]
    assert all(sent.never_seen == ["late-tab"] for sent in early)
    await aclient.post("started", agent="late-tab", project=PROJECT)  # the tab starts
    assert await purge(inproc) == 0  # its marks are released
    clock.advance(WEEK * 2)
    assert await purge(inproc) == 0
    inbox = await aclient.read_messages(agent="late-tab")
    assert [m.body for m in inbox.messages] == ["brief 0", "brief 1", "brief 2"]


async def test_the_cap_frees_up_when_the_old_messages_end(
    inproc: Daemon, aclient: AsyncClient, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Limits, "unseen_inbox_cap", 2)
    for n in range(2):
        await aclient.send_message(f"m{n}", to="typo", agent="codex", project=PROJECT)
    with pytest.raises(RecipientNeverSeen):
        await aclient.send_message("m2", to="typo", agent="codex", project=PROJECT)
    clock.advance(WEEK + 1)
    assert await purge(inproc) == 2
    await aclient.send_message("m3", to="typo", agent="codex", project=PROJECT)


async def test_a_thread_message_stays_for_its_other_members(
    inproc: Daemon, aclient: AsyncClient, clock: ManualClock
) -> None:
    task = (await aclient.post("t", assignee="later", agent="lead", project=PROJECT)).task
    await aclient.send_message("me too", task_id=task.id, agent="reviewer", project=PROJECT)
    sent = await aclient.send_message("plan", task_id=task.id, agent="lead", project=PROJECT)
    assert sent.never_seen == ["later"]
    clock.advance(WEEK + 1)
    assert await purge(inproc) == 2  # "later"'s two rows; "reviewer" was seen
    got = await aclient.get_message(sent.message.id)
    assert got.recipients == ["reviewer"]
