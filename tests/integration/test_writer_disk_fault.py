"""The writer after a disk fault: nothing more committed, nothing more run, nothing closed.

A `SqliteWriteStore` whose COMMIT fails as an fdatasync that returned EIO
does (SQLITE_IOERR_FSYNC) stands in for the disk; tests/system/test_disk_fault.py
fails the real sync inside a real daemon.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest
import trio

from coordd.clock import ManualClock
from coordd.lifecycle import Lifecycle
from coordd.store import transaction
from coordd.store.connections import Durability
from coordd.store.write_store import SqliteWriteStore
from coordd.store.writer import Writer
from coordd_wire.errors import Overloaded, ShuttingDown

SQLITE_IOERR_FSYNC = 1034


class FailingDisk(SqliteWriteStore):
    """COMMIT fails like a failed fdatasync once `failing` is set."""

    failing = False

    def commit(self, last_seq: int | None, freed_projects: Collection[str]) -> None:
        if self.failing:
            self.db.execute("ROLLBACK")  # what SQLite does to the transaction itself
            exc = sqlite3.OperationalError("disk I/O error")
            exc.sqlite_errorcode = SQLITE_IOERR_FSYNC
            raise exc
        super().commit(last_seq, freed_projects)


def insert(txn: transaction.Txn, value: str) -> str:
    txn.conn.execute("INSERT INTO probe (value) VALUES (?)", (value,))
    return value


def rows(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [value for (value,) in conn.execute("SELECT value FROM probe ORDER BY rowid")]
    finally:
        conn.close()


def wal_size(path: Path) -> int:
    return Path(f"{path}-wal").stat().st_size


async def wait_until(condition: Callable[[], bool]) -> None:
    with trio.fail_after(30):
        while not condition():
            await trio.sleep(0.001)


async def test_a_failed_commit_stops_the_writer_and_leaves_the_log_for_recovery(
    workdir: Path,
) -> None:
    path = workdir / "w.db"
    store = FailingDisk(path, durability=Durability.FULL, clock=ManualClock())
    lifecycle = Lifecycle()
    faults: list[str] = []
    writer = Writer(
        store, on_commit=lambda _: None, lifecycle=lifecycle, on_disk_fault=faults.append
    )
    writer.open()
    writer.start()
    await writer.submit_outside_transaction(
        lambda db: db.execute("CREATE TABLE probe (value TEXT)")
    )
    assert await writer.submit(insert, "acknowledged") == "acknowledged"

    entered, gate = threading.Event(), threading.Event()
    ran: list[str] = []

    def hold(txn: transaction.Txn) -> None:
        entered.set()
        gate.wait(30)  # the writer stays in this group while two more commands queue
        insert(txn, "in flight")

    def queued(txn: transaction.Txn, value: str) -> str:
        ran.append(value)
        return insert(txn, value)

    outcomes: dict[str, Any] = {}

    async def run(name: str, fn: Callable[..., Any], *args: object) -> None:
        try:
            outcomes[name] = await writer.submit(fn, *args)
        except Exception as exc:
            outcomes[name] = exc

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "in flight", hold)
        await trio.to_thread.run_sync(entered.wait)
        nursery.start_soon(run, "behind 1", queued, "behind 1")
        nursery.start_soon(run, "behind 2", queued, "behind 2")
        await wait_until(lambda: writer.statistics().queued == 3)
        store.failing = True
        gate.set()

    in_flight = outcomes["in flight"]
    assert isinstance(in_flight, Overloaded) and in_flight.data["reason"] == "disk_error"
    for name in ("behind 1", "behind 2"):
        assert isinstance(outcomes[name], ShuttingDown), outcomes
    assert ran == []  # queued behind the fault: answered, never run
    assert lifecycle.draining
    with pytest.raises(ShuttingDown):
        await writer.submit(insert, "after")
    await wait_until(lambda: bool(faults))
    assert "disk I/O error" in faults[0]

    await writer.stop()
    # Not closed, so not checkpointed: the WAL is left for the next start to recover.
    assert wal_size(path) > 0
    store.db.close()
    assert rows(path) == ["acknowledged"]
