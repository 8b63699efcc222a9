"""The writer thread on a real SQLite file: group commit, failure isolation, ack after commit."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from coordd.store import claims, transaction, writes
from coordd.store.writer import Writer
from coordd_wire import params as P
from coordd_wire.errors import InternalError, NotFound


def count_tasks(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM tasks").fetchone()[0])
    finally:
        conn.close()


async def test_concurrent_commands_share_transactions(writer: Writer) -> None:
    async with trio.open_nursery() as nursery:
        for n in range(400):
            nursery.start_soon(writer.submit, writes.post_task, P.PostParams(title=f"t{n}"))
    stats = writer.statistics()
    assert stats.commands == 400
    assert stats.transactions < 400 and stats.largest_group > 1
    assert [e.seq for e in writer.published] == list(range(1, 401))  # type: ignore[attr-defined]


async def test_failing_command_does_not_poison_its_batch(writer: Writer, workdir: Path) -> None:
    gate = threading.Event()

    def hold(txn: transaction.Txn) -> None:
        gate.wait(10)  # keeps the writer busy so the next commands queue up together

    def boom(txn: transaction.Txn) -> None:
        txn.conn.execute(
            "INSERT INTO tasks (project, kind, title, body, state, priority, tags,"
            " created_at, updated_at) VALUES ('p','k','partial','', 'pending', 0, '[]', 'x', 'x')"
        )
        raise RuntimeError("bug in a command")

    outcomes: dict[str, object] = {}

    async def run(name: str, fn: Callable[..., Any], *args: object) -> None:
        try:
            outcomes[name] = await writer.submit(fn, *args)
        except Exception as exc:
            outcomes[name] = exc

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "hold", hold)
        await trio.sleep(0.05)
        nursery.start_soon(run, "before", writes.post_task, P.PostParams(title="before"))
        await trio.sleep(0.01)
        nursery.start_soon(run, "boom", boom)
        await trio.sleep(0.01)
        nursery.start_soon(run, "claim", claims.claim_task, P.ClaimParams(id=999, agent="a"))
        await trio.sleep(0.01)
        nursery.start_soon(run, "after", writes.post_task, P.PostParams(title="after"))
        await trio.sleep(0.05)
        gate.set()
    assert isinstance(outcomes["boom"], InternalError)
    assert isinstance(outcomes["claim"], NotFound)
    assert outcomes["before"]["created"] is True  # type: ignore[index]
    assert outcomes["after"]["created"] is True  # type: ignore[index]
    assert writer.statistics().largest_group >= 4  # they really shared one transaction
    conn = sqlite3.connect(workdir / "w.db")
    titles = sorted(t for (t,) in conn.execute("SELECT title FROM tasks"))
    conn.close()
    assert titles == ["after", "before"]  # the failed command's insert was rolled back


async def test_nothing_is_answered_before_commit(writer: Writer, workdir: Path) -> None:
    inside = threading.Event()
    release = threading.Event()

    def slow_post(txn: transaction.Txn) -> dict[str, Any]:
        result = writes.post_task(txn, P.PostParams(title="slow"))
        inside.set()
        release.wait(10)
        return result

    answered = trio.Event()

    async def submit() -> None:
        await writer.submit(slow_post)
        # At the moment of the answer, another connection must already see the row.
        assert count_tasks(workdir / "w.db") == 1
        answered.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(submit)
        await trio.to_thread.run_sync(inside.wait, 10)
        await trio.sleep(0.05)
        assert not answered.is_set()
        assert count_tasks(workdir / "w.db") == 0  # executed, not committed, not answered
        release.set()
    assert answered.is_set()


async def test_cancelled_caller_still_waits_for_the_outcome(writer: Writer, workdir: Path) -> None:
    inside = threading.Event()
    release = threading.Event()

    def slow(txn: transaction.Txn) -> dict[str, Any]:
        inside.set()
        release.wait(10)
        return writes.post_task(txn, P.PostParams(title="kept"))

    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.submit, slow)
            await trio.to_thread.run_sync(inside.wait, 10)
            scope.cancel()  # the caller gives up while its command is running
            threading.Timer(0.1, release.set).start()
    # The shielded wait returned only once the command had committed.
    assert scope.cancel_called
    assert count_tasks(workdir / "w.db") == 1
