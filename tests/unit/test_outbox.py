"""The Outbox over a real socketpair: whole frames in order, from any thread, and backpressure."""

from __future__ import annotations

import socket
import threading

import trio

from coordd.limits import Limits
from coordd.outbox import Outbox


def _pair() -> tuple[trio.socket.SocketType, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    return trio.socket.from_stdlib_socket(ours), theirs


async def _read_all(sock: socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = await trio.to_thread.run_sync(sock.recv, 1 << 20)
        assert chunk
        data += chunk
    return bytes(data)


async def test_frames_from_both_threads_arrive_whole_and_in_order() -> None:
    ours, theirs = _pair()
    outbox = Outbox(ours, trio.lowlevel.current_trio_token())
    frames = [bytes([n % 256]) * 300_000 for n in range(8)]  # far more than a socket buffer
    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.flush_forever, 10.0, lambda: None)
        outbox.put(frames[0])
        assert outbox.backlog_bytes > 0  # the kernel refused part of it: queued
        thread = threading.Thread(target=lambda: list(map(outbox.put_threadsafe, frames[1:])))
        thread.start()
        received = await _read_all(theirs, sum(map(len, frames)))
        thread.join()
        await outbox.wait_empty()
        nursery.cancel_scope.cancel()
    assert received == b"".join(frames)
    outbox.close()
    ours.close()
    theirs.close()


async def test_senders_wait_above_the_high_water_mark_and_resume() -> None:
    ours, theirs = _pair()
    outbox = Outbox(ours, trio.lowlevel.current_trio_token())
    big = b"x" * (Limits.outbox_high_water_bytes * 2)
    resumed = trio.Event()

    async def sender() -> None:
        outbox.put(big)
        await outbox.wait_writable_room()
        resumed.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(outbox.flush_forever, 10.0, lambda: None)
        nursery.start_soon(sender)
        await trio.sleep(0.2)
        assert not resumed.is_set()  # nobody reads: the sender is held back
        received = await _read_all(theirs, len(big))
        await resumed.wait()
        nursery.cancel_scope.cancel()
    assert received == big
    outbox.close()
    ours.close()
    theirs.close()


async def test_a_peer_that_never_reads_is_reported_stuck() -> None:
    ours, theirs = _pair()
    outbox = Outbox(ours, trio.lowlevel.current_trio_token())
    stuck = trio.Event()
    outbox.put(b"y" * 4_000_000)
    with trio.fail_after(10):
        await outbox.flush_forever(0.3, stuck.set)
    assert stuck.is_set() and outbox.backlog_bytes > 0
    outbox.close()
    assert outbox.backlog_bytes == 0
    ours.close()
    theirs.close()


async def test_a_closed_peer_breaks_the_outbox_instead_of_raising() -> None:
    ours, theirs = _pair()
    outbox = Outbox(ours, trio.lowlevel.current_trio_token())
    theirs.close()
    outbox.put(b"z" * 100)
    assert outbox.broken and outbox.backlog_bytes == 0
    outbox.close()
    ours.close()
