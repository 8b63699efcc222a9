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

from coordd.clock import SystemClock
from coordd.protocol import params as P
from coordd.store import queries
from coordd.store.connections import Durability, open_writer_connection
from coordd.store.schema import migrate


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) per thread name of a Linux process; {} elsewhere."""
    ticks = os.sysconf("SC_CLK_TCK")
    totals: dict[str, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                name = comm.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        # Pool threads are named by what they run last; fold them together.
        name = "trio event loop" if tid == str(pid) else name
        if name not in ("trio event loop", "coordd-writer"):
            name = "reader and helper threads"
        totals[name] = totals.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return totals


def writer_claim_cost_with_and_without_gil_contention(
    path: Path, claims: int = 800, group: int = 8
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
    conn = open_writer_connection(path, Durability.NORMAL)
    migrate(conn)
    clock = SystemClock()
    conn.execute("BEGIN IMMEDIATE")
    txn = queries.Txn(conn, clock.now(), {}, 1)
    for n in range(2 * claims):
        queries.post_task(txn, P.PostParams(title=f"probe {n}", body="x" * 200))
    conn.execute("COMMIT")
    next_seq = txn.next_seq

    def run(first_id: int) -> float:
        nonlocal next_seq
        before = resource.getrusage(resource.RUSAGE_THREAD)
        for start in range(first_id, first_id + claims, group):
            conn.execute("BEGIN IMMEDIATE")
            for task_id in range(start, start + group):
                txn = queries.Txn(conn, clock.now(), {}, next_seq)
                conn.execute("SAVEPOINT command")
                queries.claim_task(txn, P.ClaimParams(id=task_id, agent="probe"))
                conn.execute("RELEASE command")
                next_seq = txn.next_seq
            conn.execute("COMMIT")
        after = resource.getrusage(resource.RUSAGE_THREAD)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return used / claims * 1e6

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
        contended = run(1 + claims)
    finally:
        stop.set()
        thread.join()
        conn.close()
    return alone, contended
