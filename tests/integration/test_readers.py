"""Read paths on a real SQLite file: inline point reads, and their fallback to the pool."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import trio

from coordd.store import reads, writes
from coordd.store.readers import ReaderPool
from coordd.store.writer import Writer
from coordd_wire import params as P


def field(raw: msgspec.Raw, name: str) -> object:
    return msgspec.json.decode(bytes(raw))[name]


async def test_point_read_runs_inline_and_sees_committed_rows(
    writer: Writer, workdir: Path
) -> None:
    posted = await writer.submit(writes.post_task, P.PostParams(title="inline"))
    pool = ReaderPool(workdir / "w.db")
    pool.open()
    try:
        # Inline means no checkpoint: the read completes even in a scope that is
        # already cancelled, where a trio.to_thread hop would raise Cancelled.
        with trio.CancelScope() as scope:
            scope.cancel()
            result = await pool.point_read(reads.read_task, field(posted["task"], "id"))
        assert not scope.cancelled_caught
        assert field(result["task"], "title") == "inline"
        with trio.CancelScope() as scope:
            scope.cancel()
            await pool.run(reads.read_task, field(posted["task"], "id"))
        assert scope.cancelled_caught  # the pool path does hop (and checkpoint)
    finally:
        pool.close()


async def test_busy_point_read_falls_back_to_the_pool_without_blocking_the_loop(
    writer: Writer, workdir: Path
) -> None:
    """A reader almost never meets SQLITE_BUSY in WAL mode; an exclusive-mode
    connection forces it. The inline read must not wait on the event loop:
    it retries on the pool, which waits for the lock in a worker thread."""
    posted = await writer.submit(writes.post_task, P.PostParams(title="locked out"))
    await writer.stop()  # the exclusive connection needs the file to itself
    pool = ReaderPool(workdir / "w.db")
    hog = sqlite3.connect(workdir / "w.db", isolation_level=None)
    hog.execute("PRAGMA locking_mode = EXCLUSIVE")
    hog.execute("SELECT count(*) FROM tasks").fetchall()  # takes and keeps the lock
    pool.open()
    ticks = 0
    try:

        async def release_later() -> None:
            nonlocal ticks
            for _ in range(30):  # the loop keeps running while the read waits
                await trio.sleep(0.01)
                ticks += 1
            hog.close()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(release_later)
            result = await pool.point_read(reads.read_task, field(posted["task"], "id"))
        assert field(result["task"], "title") == "locked out"
        assert ticks == 30  # the read finished only after the lock was released
    finally:
        pool.close()
