"""The writer's last-seen cache follows what committed, never what was rolled back.

The cache says when each agent's `agents.last_seen` was last written, so a busy
agent costs one write a second. A command's writes are staged with its group
and remembered only after COMMIT: a failed command leaves the cache (and the
table) exactly as they were, and a failed command beside a successful one
takes nothing of the other's away.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
import trio

from coordd.clock import ManualClock, format_time
from coordd.lifecycle import Lifecycle
from coordd.store.commands import Answer
from coordd.store.connections import Durability
from coordd.store.transaction import CommittedEvent, Txn
from coordd.store.write_store import SqliteWriteStore
from coordd.store.writer import Writer
from coordd_wire.errors import CoordError, InternalError


def _touch(txn: Txn, agent: str) -> None:
    txn.touch_agent(agent)


def _touch_then_fail(txn: Txn, agent: str) -> None:
    txn.touch_agent(agent, force=True)  # written whatever the cache says
    raise RuntimeError("a command that fails after writing a last-seen")


def _ignore(events: list[CommittedEvent]) -> None:
    return None


def _stored_last_seen(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT agent, last_seen FROM agents").fetchall())
    finally:
        conn.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def writer(workdir: Path, clock: ManualClock) -> AsyncIterator[Writer]:
    w = Writer(
        SqliteWriteStore(workdir / "seen.db", durability=Durability.FULL, clock=clock),
        on_commit=_ignore,
        lifecycle=Lifecycle(),
    )
    w.open()
    w.start()
    yield w
    await w.stop()


async def test_a_failed_command_leaves_the_cache_exactly_as_before(
    writer: Writer, clock: ManualClock, workdir: Path
) -> None:
    with trio.fail_after(30):
        await writer.submit(_touch, "a")
        await writer.submit(_touch, "b")
        before: dict[str, datetime] = dict(writer.agents_seen)
        assert set(before) == {"a", "b"}
        clock.advance(5)  # past the resolution: a's last-seen is due again
        with pytest.raises(InternalError):
            await writer.submit(_touch_then_fail, "a")
    assert dict(writer.agents_seen) == before
    stored = _stored_last_seen(workdir / "seen.db")
    assert stored == {agent: format_time(moment) for agent, moment in before.items()}


async def test_a_failure_beside_a_success_keeps_the_successful_write(
    writer: Writer, clock: ManualClock, workdir: Path
) -> None:
    await writer.submit(_touch, "a")
    clock.advance(5)
    inside = threading.Event()
    release = threading.Event()

    def hold(txn: Txn) -> None:
        inside.set()
        release.wait(30)  # the writer is busy: the next two commands queue as one group

    outcomes: dict[str, CoordError | None] = {}
    answered = trio.Event()

    def answer_for(name: str) -> Answer:
        def answer(value: object, error: CoordError | None) -> None:
            outcomes[name] = error

        return answer

    def one_answered() -> None:
        if len(outcomes) == 2:
            answered.set()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.submit, hold)
            await trio.to_thread.run_sync(inside.wait, 30)
            # Queued synchronously, in this order, behind the held group.
            assert writer.enqueue_answered(_touch, "a", answer_for("ok"), one_answered)
            assert writer.enqueue_answered(_touch_then_fail, "a", answer_for("boom"), one_answered)
            release.set()
            await answered.wait()
    assert outcomes["ok"] is None and isinstance(outcomes["boom"], InternalError)
    assert writer.statistics().largest_group == 2  # they really shared one transaction
    now = clock.now()
    assert dict(writer.agents_seen) == {"a": now}
    assert _stored_last_seen(workdir / "seen.db") == {"a": format_time(now)}
