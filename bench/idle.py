"""What waiting costs the daemon: idle connections, subscriptions, blocked waiters, wakeups.

Agents mostly wait, so the bench measures the price of a connection or a
waiter that does nothing (memory, CPU while idle, the cost it adds to
unrelated writes) and how fast a post wakes the waiters it concerns.
"""

from __future__ import annotations

import json
import time

from bench.harness import Daemon, release, spawn_workers, worker_command
from bench.report import Result
from coordd_client import methods


def measure_idle_costs(daemon: Daemon, count: int) -> dict[str, float]:
    """RSS growth per idle connection and per subscription, on a fresh daemon.

    Subscriptions first: freed memory is reused by what comes next, so the
    smaller measurement goes first and the 1,000 connections after it grow
    the heap past anything the subscriptions released.
    """
    import socket as socketlib

    # Subscriptions: 50 per connection over 20 connections that are already open,
    # so the figure holds the subscriptions alone.
    subs = [daemon.client() for _ in range(20)]
    for client in subs:
        client.ping()
    time.sleep(0.5)
    base = daemon.rss_kib()
    for client in subs:
        for _ in range(count // 20):
            client.send(methods.subscribe())
    time.sleep(0.5)
    per_sub = (daemon.rss_kib() - base) * 1024 / count
    for client in subs:
        client.close()
    time.sleep(0.5)
    base = daemon.rss_kib()
    conns = []
    for _ in range(count):
        sock = socketlib.socket(socketlib.AF_UNIX)
        sock.connect(str(daemon.socket))
        conns.append(sock)
    with daemon.client() as client:
        client.ping()
    time.sleep(0.5)
    per_conn = (daemon.rss_kib() - base) * 1024 / count
    for sock in conns:
        sock.close()
    return {"bytes_per_idle_connection": per_conn, "bytes_per_subscription": per_sub}


def measure_waiters(daemon: Daemon, count: int) -> dict[str, float]:
    import trio

    from coordd_client.aio import AsyncClient

    out: dict[str, float] = {}

    async def main() -> None:
        base_rss = daemon.rss_kib()
        async with trio.open_nursery() as nursery:
            clients = []

            async def hold(
                task_status: trio.TaskStatus[AsyncClient] = trio.TASK_STATUS_IGNORED,
            ) -> None:
                async with AsyncClient.connect(daemon.socket) as client:
                    task_status.started(client)
                    await trio.sleep_forever()

            for _ in range(count // 200):
                clients.append(await nursery.start(hold))
            for index in range(count):
                nursery.start_soon(
                    lambda c: c.wait(timeout_s=600, kind="never"), clients[index % len(clients)]
                )
            await trio.sleep(1.0)
            out["bytes_per_idle_waiter"] = (daemon.rss_kib() - base_rss) * 1024 / count
            cpu_before = daemon.cpu_seconds()
            await trio.sleep(5.0)
            out["daemon_cpu_percent_with_idle_waiters"] = (
                (daemon.cpu_seconds() - cpu_before) / 5.0 * 100
            )
            # Unrelated writes: they must not wake (or cost much for) the sleeping waiters.
            started = time.perf_counter()
            for n in range(200):
                await clients[0].post(f"unrelated {n}", kind="other")
            out["post_us_with_idle_waiters"] = (time.perf_counter() - started) / 200 * 1e6
            nursery.cancel_scope.cancel()

    trio.run(main)
    return out


def measure_wakeups(daemon: Daemon, waiters: int, posts: int) -> Result:
    procs = spawn_workers(
        worker_command(daemon), [["wake", f"waiter{n}", str(posts)] for n in range(waiters)]
    )
    release(procs)
    time.sleep(0.3)
    start = time.perf_counter()
    with daemon.client() as client:
        for _ in range(posts):
            client.post(f"{time.time():.6f}", kind="wake")
            time.sleep(0.02)
    outputs = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    latencies = [x for out in outputs for x in out["latencies_us"]]
    return Result("wake", waiters, len(latencies), time.perf_counter() - start, latencies)
