"""Measurements that explain the headline figures rather than add to them.

Two questions decide what to optimise next: which of the daemon's threads
spends the CPU per claim, and how much the writer thread pays for sharing
the GIL with a busy event loop. Both are measured in the same run as the
figures they explain.
"""

from __future__ import annotations

import os
import resource
import socket
import threading
import time
from pathlib import Path
from typing import Any

from coordd.clock import SystemClock
from coordd.store import claims, writes
from coordd.store.connections import Durability
from coordd.store.group import run_each
from coordd.store.write_store import SqliteWriteStore
from coordd_wire import params as P


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) per thread id of a Linux process; {} elsewhere."""
    ticks = os.sysconf("SC_CLK_TCK")
    totals: dict[int, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        totals[int(tid)] = (int(fields[11]) + int(fields[12])) / ticks
    return totals


def cpu_per_op_by_role(
    pid: int, before: dict[int, float], after: dict[int, float], ops: int
) -> dict[str, float]:
    """Microseconds of CPU per operation: event loop, writer, and the rest.

    Python 3.11 does not name OS threads, so the writer is recognised as the
    busiest thread besides the main one; during a claim run it is (the
    reader threads are idle then).
    """
    delta = {tid: after[tid] - before.get(tid, 0.0) for tid in after}
    loop = delta.pop(pid, 0.0)
    writer_tid = max(delta, key=delta.__getitem__, default=None)
    writer = delta.pop(writer_tid, 0.0) if writer_tid is not None else 0.0
    return {
        "trio event loop (main thread)": loop / ops * 1e6,
        "writer thread": writer / ops * 1e6,
        "all other threads": sum(delta.values()) / ops * 1e6,
    }


def _board_with_pending_tasks(path: Path, count: int, durability: Durability) -> SqliteWriteStore:
    """A daemon-schema database holding `count` pending tasks (ids 1..count), open for writing."""
    store = SqliteWriteStore(path, durability=durability, clock=SystemClock())
    store.open()
    params = [P.PostParams(title=f"probe {n}", body="x" * 200) for n in range(count)]
    run_each(store, writes.post_task, params, {})
    return store


def writer_claim_cost_with_and_without_gil_contention(
    path: Path, count: int = 800, group: int = 8
) -> tuple[float, float]:
    """Writer-thread CPU per claim (us), alone and beside a busy Python thread.

    Runs the daemon's own `claim_task` in groups of `group` per transaction
    (as group commit does under load), once with the interpreter to itself
    and once while another thread alternates Python work with a syscall, the
    way the trio event loop does. The second figure over the first is what
    the GIL costs the writer.
    """
    if not hasattr(resource, "RUSAGE_THREAD"):  # Linux only
        return float("nan"), float("nan")
    store = _board_with_pending_tasks(path, 2 * count, Durability.NORMAL)
    seen: dict[str, Any] = {}

    def run(first_id: int) -> float:
        before = resource.getrusage(resource.RUSAGE_THREAD)
        for start in range(first_id, first_id + count, group):
            claims_of_group = [
                P.ClaimParams(id=task_id, agent="probe") for task_id in range(start, start + group)
            ]
            run_each(store, claims.claim_task, claims_of_group, seen)
        after = resource.getrusage(resource.RUSAGE_THREAD)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return used / count * 1e6

    alone = run(1)
    stop = threading.Event()

    def busy_loop() -> None:
        left, right = socket.socketpair()
        while not stop.is_set():
            total = 0
            for value in range(200):
                total += value
            left.send(b"x")
            right.recv(16)
        left.close()
        right.close()

    thread = threading.Thread(target=busy_loop, daemon=True)
    thread.start()
    time.sleep(0.05)
    try:
        contended = run(1 + count)
    finally:
        stop.set()
        thread.join()
        store.close()
    return alone, contended


def coordd_claim_transaction_latencies(path: Path, count: int) -> list[float]:
    """Microseconds per durable transaction of one daemon claim, in-process, sequential.

    The same FULL-durability commit per claim as the baseline, but with the
    daemon's schema and its `claim_task` (the row, its pending and live-claim
    index entries, the event row). A lone client's claim through the daemon costs this plus
    the transport; the difference from the baseline is the schema's price.
    """
    store = _board_with_pending_tasks(path, count, Durability.FULL)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    latencies = []
    clock_us = time.perf_counter
    seen: dict[str, Any] = {}
    for task_id in range(1, count + 1):
        start = clock_us()
        run_each(store, claims.claim_task, [P.ClaimParams(id=task_id, agent="single")], seen)
        latencies.append((clock_us() - start) * 1e6)
    store.close()
    return latencies
