"""The bench's moving parts: a real daemon, worker processes behind a barrier, pre-posted tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from bench.report import Result
from coordd_client import Client, methods
from coordd_client.autostart import wait_until_ready

ROOT = Path(__file__).resolve().parents[1]


def process_cpu_seconds(pid: int) -> float:
    """The CPU a process has used so far, all its threads, user and system."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Daemon:
    def __init__(
        self,
        workdir: Path,
        durability: str = "full",
        *,
        store: str | None = None,
        name: str = "s",
    ) -> None:
        """`store`: a `postgresql://` DSN (team mode); `name` tells daemons in one dir apart."""
        self.workdir = workdir
        self.socket = workdir / f"{name}.sock"
        self.db = workdir / f"{'bench' if name == 's' else name}.db"
        where = ["--db", str(self.db)] if store is None else ["--store", store, "--node", name]
        log = open(workdir / f"daemon-{name}.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "coordd",
                "serve",
                *where,
                "--socket",
                str(self.socket),
                "--durability",
                durability,
                "--log-level",
                "warning",
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        wait_until_ready(self.socket)

    def client(self) -> Client:
        return Client(self.socket).connect()

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


@contextmanager
def floor_server(
    module: str, socket: Path, *args: str, log: Path
) -> Iterator[subprocess.Popen[str]]:
    """`python -m module SOCKET ARGS...` (`bench.floor`, `bench.floor_rows`) serving until
    the block ends; its stderr goes to `log`."""
    with open(log, "ab") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", module, str(socket), *args],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=ROOT,
        )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready", (
            f"{module} did not start: see {log}"
        )
        yield server
    finally:
        server.terminate()
        server.communicate(timeout=30)


def spawn_workers(command: list[str], worker_args: list[list[str]]) -> list[subprocess.Popen[str]]:
    """Start `command + args` once per arg list and wait until every one is connected."""
    procs = [
        subprocess.Popen(
            [*command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for args in worker_args
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return procs


def release(procs: list[subprocess.Popen[str]]) -> None:
    """The barrier: every worker starts its loop now."""
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()


def worker_command(daemon: Daemon) -> list[str]:
    return [sys.executable, "-m", "bench.worker", str(daemon.socket)]


def ids_from(first: int, per_client: int) -> Callable[[int], int]:
    """The `id_for` of clients claiming consecutive runs: client n starts at first + n * per."""
    return lambda n: first + n * per_client


def run_workers(
    command: list[str] | list[list[str]],
    mode: str,
    clients: int,
    per_client: int,
    id_for: Callable[[int], object],
    *,
    name: str | None = None,
) -> Result:
    """`clients` worker processes doing `per_client` round trips each, behind one barrier.

    `command` may be a list of commands (one per daemon): client n uses
    command n modulo their number, so the clients split evenly across daemons.
    """
    commands = command if command and isinstance(command[0], list) else [cast(list[str], command)]
    procs = [
        proc
        for n in range(clients)
        for proc in spawn_workers(
            commands[n % len(commands)], [[mode, f"w{n}", str(per_client), str(id_for(n))]]
        )
    ]
    start = time.perf_counter()
    release(procs)
    outputs = [json.loads(proc.communicate(timeout=600)[0]) for proc in procs]
    seconds = time.perf_counter() - start
    latencies = [x for out in outputs for x in out["latencies_us"]]
    busy = [sum(out["latencies_us"]) for out in outputs]
    return Result(
        name or mode,
        clients,
        clients * per_client,
        seconds,
        latencies,
        sum(o["won"] for o in outputs),
        spread=max(busy) / min(busy) if min(busy) > 0 else float("nan"),
    )


def won_every_claim(run: Result) -> Result:
    """A run of the floor rounds, checked: each client claimed tasks of its own, so every
    claim won (a server that lost some would be measured doing less than the others)."""
    assert run.won == run.ops, f"{run.name}: {run.ops - run.won} of {run.ops} claims lost"
    return run


def post_tasks(daemon: Daemon, count: int) -> int:
    """Pre-post `count` tasks through the daemon; return the first id."""
    import trio

    from coordd_client.aio import AsyncClient

    ids: list[int] = []

    async def fill() -> None:
        async with AsyncClient.connect(daemon.socket) as client:

            async def one(n: int) -> None:
                ids.append((await client.post(f"bench task {n}")).task.id)

            for start in range(0, count, 2000):
                async with trio.open_nursery() as nursery:
                    for n in range(start, min(count, start + 2000)):
                        nursery.start_soon(one, n)

    trio.run(fill)
    # Posts run concurrently, so ids are not in `n` order; they are contiguous from the lowest.
    return min(ids)


def writer_stats(daemon: Daemon) -> dict[str, int]:
    with daemon.client() as client:
        stats: dict[str, int] = client.send(methods.server_info().as_type(dict))["writer"]
        return stats
