"""Issue 34 on the daemon's own clock (tests move it): the trio client's message calls,
including a `message.wait` woken by a message from another connection. An unanswered
request's expiry is the store tier's (tests/store/test_release_requests.py)."""

from __future__ import annotations

import pytest
import trio

from coordd.daemon import Daemon
from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


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
