"""How long the trio thread is away while the waiting machinery works (issue 29, items 6 and 14).

Two worst cases, each on a real daemon process with one client pinging it in
a loop the whole time, so the figure that matters is a ping's round trip:

- the reservation queue: `waiters` agents each wait (`wait_s`) for
  `patterns` exclusive patterns of their own, all behind one holder's `**`,
  so no waiter conflicts with another and the old pairwise check never
  short-circuits; then the holder releases and every waiter is granted;
- the event fan-out: a task with `dependents` dependents is completed while
  `waiters` `task.wait` calls are open on its project that no event matches
  (`title_contains`, which no index can narrow), so every event meets every
  waiter.

Run alone: `python -m bench.stalls [--quick]`; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import trio

from bench.diagnostics import thread_cpu_seconds
from bench.harness import Daemon
from coordd_client import Client, methods
from coordd_client.aio import AsyncClient
from coordd_wire.errors import CoordError

PROJECT = "/bench/stalls"


class Pinger:
    """A client pinging the daemon back to back in a thread; each round trip is kept."""

    def __init__(self, socket: Path) -> None:
        self._client = Client(socket, timeout_s=600).connect()
        self._stop = threading.Event()
        self.samples: list[tuple[float, float]] = []  # (started, seconds)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            self._client.ping()
            self.samples.append((started, time.perf_counter() - started))
            time.sleep(0.001)

    def window(self, since: float, until: float) -> dict[str, float]:
        """The pings that started in [since, until], plus any still in flight past it."""
        picked = [s for t, s in self.samples if since <= t <= until]
        return {
            "pings": len(picked),
            "p50_ms": statistics.median(picked) * 1e3 if picked else 0.0,
            "max_ms": max(picked) * 1e3 if picked else 0.0,
        }

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=600)
        self._client.close()


def _info(client: Client) -> dict[str, Any]:
    result: dict[str, Any] = client.send(methods.server_info().as_type(dict))
    return result


def _until(check: Any, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the daemon never got there")
        time.sleep(0.02)


def reservation_queue(workdir: Path, waiters: int, patterns: int) -> dict[str, float]:
    daemon = Daemon(workdir, "normal")
    try:
        with daemon.client() as admin:
            admin.reserve(["**"], agent="holder", project=PROJECT, ttl_s=3600)
        pinger = Pinger(daemon.socket)
        outcomes: list[str] = []

        def wait_for_mine(n: int) -> None:
            mine = [
                f"w{n}/src/mod{j}/**" if j % 2 else f"w{n}/src/mod{j}/file{j}.py"
                for j in range(patterns)
            ]
            with Client(daemon.socket, timeout_s=900) as client:
                try:
                    client.reserve(mine, agent=f"a{n}", project=PROJECT, wait_s=600, ttl_s=600)
                    outcomes.append("granted")
                except CoordError as exc:
                    outcomes.append(type(exc).__name__)

        cpu0, t0 = daemon.cpu_seconds(), time.perf_counter()
        threads = [threading.Thread(target=wait_for_mine, args=(n,)) for n in range(waiters)]
        for thread in threads:
            thread.start()
        with daemon.client() as admin:
            _until(lambda: _info(admin)["reservations"]["waiting"] == waiters)
            cpu1, t1 = daemon.cpu_seconds(), time.perf_counter()
            admin.unreserve(["**"], agent="holder", project=PROJECT)
        for thread in threads:
            thread.join()
        cpu2, t2 = daemon.cpu_seconds(), time.perf_counter()
        pinger.stop()
        assert outcomes.count("granted") == waiters, outcomes
        queued, released = pinger.window(t0, t1), pinger.window(t1, t2)
        return {
            "queue_wall_s": t1 - t0,
            "queue_cpu_s": cpu1 - cpu0,
            "queue_ping_max_ms": queued["max_ms"],
            "queue_ping_p50_ms": queued["p50_ms"],
            "release_wall_s": t2 - t1,
            "release_cpu_s": cpu2 - cpu1,
            "release_ping_max_ms": released["max_ms"],
            "release_ping_p50_ms": released["p50_ms"],
        }
    finally:
        daemon.stop()


def event_fanout(workdir: Path, dependents: int, waiters: int) -> dict[str, float]:
    daemon = Daemon(workdir, "normal")
    try:
        with daemon.client() as admin:
            root = admin.post("root", project=PROJECT, agent="b").task
            admin.claim(root.id, "b")

        async def post_dependents() -> None:
            async with AsyncClient.connect(daemon.socket) as client:

                async def one(n: int) -> None:
                    await client.post(f"dep {n}", project=PROJECT, agent="b", depends_on=[root.id])

                for start in range(0, dependents, 256):
                    async with trio.open_nursery() as nursery:
                        for n in range(start, min(dependents, start + 256)):
                            nursery.start_soon(one, n)

        trio.run(post_dependents)
        with daemon.client() as admin:
            after_seq = _info(admin)["last_seq"]  # edge-triggered: opening reads no backlog
        done = threading.Event()

        def hold_waiters() -> None:
            async def one(client: AsyncClient, n: int) -> None:
                await client.wait(
                    timeout_s=900, project=PROJECT, title_contains=f"never {n}", after_seq=after_seq
                )

            async def main() -> None:
                per = 250  # under the client's own in-flight cap (256)
                async with trio.open_nursery() as nursery:
                    for start in range(0, waiters, per):
                        client = await AsyncClient.open(nursery, daemon.socket)
                        for n in range(start, min(waiters, start + per)):
                            nursery.start_soon(one, client, n)
                    while not done.is_set():
                        await trio.sleep(0.05)
                    nursery.cancel_scope.cancel()

            trio.run(main)

        holder = threading.Thread(target=hold_waiters, daemon=True)
        holder.start()
        with daemon.client() as admin:
            _until(lambda: _info(admin)["waiters"] == waiters)
            pinger = Pinger(daemon.socket)
            time.sleep(0.3)
            cpu0, t0 = daemon.cpu_seconds(), time.perf_counter()
            threads0 = thread_cpu_seconds(daemon.proc.pid)
            admin.complete(root.id, "b")
            # The fan-out is over when the daemon has been idle for a while.
            last = daemon.cpu_seconds()
            while True:
                time.sleep(0.5)
                now = daemon.cpu_seconds()
                if now - last < 0.1:
                    break
                last = now
            cpu1, t1 = daemon.cpu_seconds(), time.perf_counter()
            threads1 = thread_cpu_seconds(daemon.proc.pid)
        pinger.stop()
        done.set()
        trio_cpu = threads1.get(daemon.proc.pid, 0.0) - threads0.get(daemon.proc.pid, 0.0)
        holder.join(timeout=60)
        window = pinger.window(t0, t1)
        return {
            "fanout_wall_s": t1 - t0,
            "fanout_cpu_s": cpu1 - cpu0,
            "fanout_trio_thread_cpu_s": trio_cpu,
            "fanout_ping_max_ms": window["max_ms"],
            "fanout_ping_p50_ms": window["p50_ms"],
        }
    finally:
        daemon.stop()


def measure_stalls(quick: bool = False) -> dict[str, dict[str, float]]:
    sizes = {"waiters": 20, "patterns": 64} if quick else {"waiters": 60, "patterns": 64}
    fan = {"dependents": 2_000, "waiters": 500}
    if not quick:
        fan = {"dependents": 10_000, "waiters": 2000}
    out: dict[str, dict[str, float]] = {}
    workdir = Path(tempfile.mkdtemp(prefix="coordd-stalls-"))
    try:
        (workdir / "q").mkdir()
        (workdir / "f").mkdir()
        out[f"reservation_queue {sizes}"] = reservation_queue(workdir / "q", **sizes)
        out[f"event_fanout {fan}"] = event_fanout(workdir / "f", **fan)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("queue", "fanout"))
    parser.add_argument("--waiters", type=int)
    parser.add_argument("--patterns", type=int, default=64)
    parser.add_argument("--dependents", type=int, default=10_000)
    args = parser.parse_args()
    if args.only is None:
        print(json.dumps(measure_stalls(args.quick), indent=2))
        return
    workdir = Path(tempfile.mkdtemp(prefix="coordd-stalls-"))
    try:
        if args.only == "queue":
            result = reservation_queue(workdir, args.waiters or 60, args.patterns)
        else:
            result = event_fanout(workdir, args.dependents, args.waiters or 2000)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
