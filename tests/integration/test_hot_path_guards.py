"""Regression guards for the hot paths that are not timings: the Python work each request
costs the daemon, counted (function calls seen by a profile hook), never timed.

A ping is answered in the connection's read loop, and a claim is queued by the
connection and run and answered by the writer thread. The counts are deterministic
up to the background duties (the reaper, the checkpointer) that run meanwhile;
the bounds leave room for those and fail if a request grows a layer of calls.
And the pages a group of claims writes, counted in the WAL: what a claim changes
besides its row is the largest part of the writer's cost per claim.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import trio

from coordd.clock import ManualClock
from coordd.daemon import Daemon
from coordd.lifecycle import Lifecycle
from coordd.store import claims, writes
from coordd.store.connections import Durability
from coordd.store.group import run_each
from coordd.store.write_store import SqliteWriteStore
from coordd.store.writer import Writer
from coordd_wire import params as P

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = 400

#: Python (and C) calls per request, measured when the guards were written: a ping
#: 136 on the event loop (221 when it still spawned a task per request); a claim 208
#: on the event loop and 59 on the writer thread (64 since schema step 5: a lone
#: claim's group links its event and moves its task's newest seq). The counts repeat to within 1%;
#: the bounds are about 1.2x, room for the background duties and small changes.
PING_EVENT_LOOP_BOUND = 165
CLAIM_EVENT_LOOP_BOUND = 250
CLAIM_WRITER_BOUND = 72


class CallCounter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            self.calls += 1


async def _event_loop_calls_per_request(daemon: Daemon, mode: str, first_id: int) -> float:
    """Run `bench.worker` (a separate process) for REQUESTS sequential requests while
    this thread, the daemon's event loop, counts its calls."""
    command = [sys.executable, "-m", "bench.worker", str(daemon.config.socket_path), mode]
    command += ["guard", str(REQUESTS), str(first_id)]
    worker = await trio.lowlevel.open_process(command, stdin=-1, stdout=-1, cwd=str(ROOT))
    counter = CallCounter()
    try:
        assert worker.stdin is not None and worker.stdout is not None
        buffered = b""
        while b"ready\n" not in buffered:
            buffered += await worker.stdout.receive_some()
        sys.setprofile(counter)
        try:
            await worker.stdin.send_all(b"go\n")
            while not buffered.endswith(b"}\n"):
                chunk = await worker.stdout.receive_some()
                assert chunk, "the worker ended without its result"
                buffered += chunk
        finally:
            sys.setprofile(None)
    finally:
        await worker.wait()
        for stream in (worker.stdin, worker.stdout):
            if stream is not None:
                await stream.aclose()
    assert worker.returncode == 0
    return counter.calls / REQUESTS


async def test_a_ping_costs_the_event_loop_a_bounded_number_of_calls(inproc: Daemon) -> None:
    per_ping = await _event_loop_calls_per_request(inproc, "ping", 0)
    assert per_ping <= PING_EVENT_LOOP_BOUND, per_ping


async def test_a_claim_costs_the_event_loop_a_bounded_number_of_calls(inproc: Daemon) -> None:
    first = None
    for n in range(REQUESTS):
        posted = await inproc.writer.submit(writes.post_task, P.PostParams(title=f"g{n}"))
        if first is None:
            first = int(bytes(posted["task"]).split(b'"id":')[1].split(b",")[0])
    assert first is not None
    per_claim = await _event_loop_calls_per_request(inproc, "claim", first)
    assert per_claim <= CLAIM_EVENT_LOOP_BOUND, per_claim


async def test_a_claim_costs_the_writer_thread_a_bounded_number_of_calls(workdir: Path) -> None:
    counter = CallCounter()
    threading.setprofile(counter)  # threads started from now on: the writer's
    try:
        writer = Writer(
            SqliteWriteStore(workdir / "g.db", durability=Durability.NORMAL, clock=ManualClock()),
            on_commit=lambda events: None,
            lifecycle=Lifecycle(),
        )
        writer.open()
        writer.start()
    finally:
        threading.setprofile(None)
    try:
        ids = []
        for n in range(REQUESTS):
            posted = await writer.submit(writes.post_task, P.PostParams(title=f"g{n}"))
            ids.append(int(bytes(posted["task"]).split(b'"id":')[1].split(b",")[0]))
        before = counter.calls
        for task_id in ids:  # one claim per group, as a lone client's
            await writer.submit(claims.claim_task, P.ClaimParams(id=task_id, agent="guard"))
        per_claim = (counter.calls - before) / REQUESTS
    finally:
        await writer.stop()
    assert per_claim <= CLAIM_WRITER_BOUND, per_claim


#: WAL frames (pages) one group commit of 8 claims far apart writes, measured when
#: this guard was written: 49.8 with the schema of before step 4 (a claim moved an
#: entry in the queue index and added one to the holder and event-task indexes),
#: 39.4 after step 4, 31.0 after step 5 (schema.py). A claim's own row is about one
#: page of those 31, as it is for the floor's (bench/floor.py). Deterministic: the
#: same tasks and the same clock write the same pages.
CLAIM_GROUP_FRAMES_BOUND = 34


def test_a_group_of_claims_far_apart_writes_a_bounded_number_of_pages(workdir: Path) -> None:
    """What each claim writes besides its row is the group commit's price: each page
    a group dirties is a WAL frame written and synced. Eight claims from eight ranges
    of the board (sixteen agents, each claiming its own block, as the bench's clients
    do) land on rows far apart, the worst case for every index a claim touches; a new
    index on the claim path, or a bigger event row, shows here as more frames."""
    path = workdir / "frames.db"
    store = SqliteWriteStore(path, durability=Durability.NORMAL, clock=ManualClock())
    store.open()
    store.db.execute("PRAGMA wal_autocheckpoint = 0")
    seen: dict[str, Any] = {}
    ranges, per_range, group = 16, 300, 8
    run_each(
        store,
        writes.post_task,
        [P.PostParams(title=f"frames {n}", body="x" * 200) for n in range(ranges * per_range)],
        seen,
    )
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(f"{path}-wal")
    order = [
        P.ClaimParams(id=1 + r * per_range + k, agent=f"agent-{r}")
        for k in range(per_range)
        for r in range(ranges)
    ]
    (page_size,) = store.db.execute("PRAGMA page_size").fetchone()
    frames = []
    for start in range(0, len(order), group):
        before = wal.stat().st_size if wal.exists() else 0
        results = run_each(store, claims.claim_task, order[start : start + group], seen)
        assert all(result["won"] for result in results)
        frames.append((wal.stat().st_size - before) / (page_size + 24))
    store.close()
    per_group = sum(frames[2:]) / len(frames[2:])  # past the WAL's header and first pages
    assert per_group <= CLAIM_GROUP_FRAMES_BOUND, per_group
