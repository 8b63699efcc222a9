"""Issue 34 on the daemon's own clock (tests move it): an unanswered release request
expires (no longer open, cannot be answered), and the trio client's message calls,
including a `message.wait` woken by a message from another connection."""

from __future__ import annotations

import pytest
import trio

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd_client import Conflict
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


async def test_an_unanswered_request_expires(inproc: Daemon, clock: ManualClock) -> None:
    path = inproc.config.socket_path
    async with AsyncClient.connect(path) as holder, AsyncClient.connect(path) as asker:
        await holder.reserve(["src/**"], agent="holder", project=PROJECT)
        asked = await asker.request_release(
            patterns=["src/**"], ttl_s=60, agent="asker", project=PROJECT
        )
        assert asked.request.open
        clock.advance(61)
        now = (await asker.get_message(asked.request.id)).message
        assert now.request is not None and now.request.status == "expired"
        assert not now.open
        with pytest.raises(Conflict, match="expired"):
            await holder.answer_request(asked.request.id, "approve", agent="holder")
        # Nothing changed hands.
        held = (await holder.reservations(project=PROJECT)).reservations
        assert [r.agent for r in held] == ["holder"]


async def test_a_trio_waiter_is_woken_by_a_message_from_another_connection(
    inproc: Daemon,
) -> None:
    path = inproc.config.socket_path
    async with AsyncClient.connect(path) as waiter, AsyncClient.connect(path) as sender:
        got: list[str] = []

        async def wait() -> None:
            found = await waiter.wait_messages(60, agent="idle")
            got.extend(m.body for m in found.messages)

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(wait)
                services = inproc.services
                assert services is not None
                while not services.hub.listeners:  # registered: send now
                    await trio.lowlevel.checkpoint()
                await sender.send_message("wake up", to="idle", agent="s", project=PROJECT)
        assert got == ["wake up"]
        # The wait read it, not acknowledged it: still unread until an ack.
        assert [m.body for m in (await waiter.read_messages(agent="idle")).messages] == got
