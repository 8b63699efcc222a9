"""`make bench`: drive a real daemon with N client processes; compare to same-run baselines.

Results are ratios to baselines measured in the same run (the machines are
shared and noisy; absolute figures drift). Writes BENCHMARKS.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec

from bench.baselines import sqlite_commit_per_claim
from bench.diagnostics import (
    coordd_claim_transaction_latencies,
    cpu_per_op_by_role,
    thread_cpu_seconds,
    writer_claim_cost_with_and_without_gil_contention,
)
from coordd_client import Client
from coordd_client.autostart import wait_until_ready

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    name: str
    clients: int
    ops: int
    seconds: float
    latencies: list[float]
    won: int = 0
    #: Slowest worker's busy time / fastest worker's: 1.00 is perfectly fair service.
    spread: float = 1.0

    @property
    def rate(self) -> float:
        return self.ops / self.seconds

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Daemon:
    def __init__(self, workdir: Path, durability: str = "full") -> None:
        self.workdir = workdir
        self.socket = workdir / "s.sock"
        self.db = workdir / "bench.db"
        log = open(workdir / "daemon.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "coordd",
                "serve",
                "--db",
                str(self.db),
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
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


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


def run_workers(
    command: list[str], mode: str, clients: int, per_client: int, id_for, *, name: str | None = None
) -> Result:
    procs = spawn_workers(
        command, [[mode, f"w{n}", str(per_client), str(id_for(n))] for n in range(clients)]
    )
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
        return msgspec.json.decode(client.call_raw("server.info").result)["writer"]


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
            client.call_raw("events.subscribe", {})
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

            async def hold(task_status=trio.TASK_STATUS_IGNORED) -> None:
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


def measure_peers(workdir: Path, counts: list[int], total: int) -> tuple[list[Result], list[str]]:
    """Run the same client style against Redis and PostgreSQL; skip a peer that cannot start."""
    from bench import peer_worker
    from bench.peers import PEERS, PeerUnavailable

    rows: list[Result] = []
    notes: list[str] = []
    for peer_type in PEERS:
        try:
            peer = peer_type(workdir)
        except (PeerUnavailable, subprocess.CalledProcessError, OSError) as exc:
            notes.append(f"{peer_type.name}: skipped ({exc})")
            continue
        try:
            peer_worker.prepare(peer.name, peer.address, total * len(counts))
            command = [sys.executable, "-m", "bench.peer_worker", peer.name, peer.address]
            rows.append(
                run_workers(command, "ping", 1, total, lambda n: 0, name=f"{peer.name} ping")
            )
            next_id = 1
            for clients in counts:
                per = max(1, total // clients)
                result = run_workers(
                    command, "claim", clients, per, lambda n, s=next_id, p=per: s + n * p,
                    name=f"{peer.name} claim",
                )  # fmt: skip
                assert result.won == result.ops, f"{peer.name}: a claim on a fresh id lost"
                rows.append(result)
                next_id += per * clients
            notes.append(f"{peer.name}: {peer.settings}")
        finally:
            peer.stop()
    return rows, notes


def machine() -> str:
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}), Linux {platform.release()}, Python {platform.python_version()},"
        f" SQLite {sqlite3.sqlite_version}"
    )


def fmt_us(value: float) -> str:
    return f"{value:,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--clients", default="1,4,16,64", help="comma-separated client counts")
    parser.add_argument(
        "--claims", type=int, default=24000, help="claims per run (split across clients)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer operations (smoke run)")
    parser.add_argument(
        "--peers", action="store_true", help="also measure Redis and PostgreSQL (make bench-peers)"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    counts = [int(x) for x in args.clients.split(",")]
    total = 3000 if args.quick else args.claims
    workdir = Path(tempfile.mkdtemp(prefix="cb", dir="/tmp"))
    rows: list[Result] = []
    thread_cpu_per_claim: dict[str, float] = {}
    peer_notes: list[str] = []
    extra: dict[str, float] = {}
    try:
        # The baseline is measured three times (start, middle, end of the run) and
        # the median taken: one fsync-bound loop on a shared disk swings by 30%.
        baseline_runs: list[list[float]] = []

        def measure_baseline() -> None:
            path = workdir / f"baseline{len(baseline_runs)}.db"
            baseline_runs.append(sqlite_commit_per_claim(path, min(total, 3000)))

        measure_baseline()
        own_txn = coordd_claim_transaction_latencies(workdir / "own.db", min(total, 1000))
        gil_alone, gil_contended = writer_claim_cost_with_and_without_gil_contention(
            workdir / "gil.db"
        )
        daemon = Daemon(workdir)
        try:
            # Idle costs first, on a fresh daemon with no background work left over.
            extra.update(measure_idle_costs(daemon, 1000))
            extra.update(measure_waiters(daemon, 1000))
            first = post_tasks(daemon, total * (len(counts) + 1))
            next_id = first
            for clients in counts:
                per = max(1, total // clients)
                rows.append(run_workers(worker_command(daemon), "ping", clients, per, lambda n: 0))
                start_id = next_id
                cpu_before = thread_cpu_seconds(daemon.proc.pid)
                claims = run_workers(
                    worker_command(daemon),
                    "claim",
                    clients,
                    per,
                    lambda n, s=start_id, p=per: s + n * p,
                )
                rows.append(claims)
                if clients == 16:
                    thread_cpu_per_claim = cpu_per_op_by_role(
                        daemon.proc.pid,
                        cpu_before,
                        thread_cpu_seconds(daemon.proc.pid),
                        claims.ops,
                    )
                next_id += per * clients
            measure_baseline()
            stats_before = writer_stats(daemon)
            contended_start = next_id
            contended = run_workers(
                worker_command(daemon), "contended", 16, min(per, 500), lambda n: contended_start
            )
            stats_after = writer_stats(daemon)
            rows.append(contended)
            extra["contended_transactions_per_claim"] = (
                stats_after["transactions"] - stats_before["transactions"]
            ) / contended.ops
            # claim_next: every process drains the same queue (the pre-posted tasks left).
            for clients in (1, 16):
                rows.append(
                    run_workers(
                        worker_command(daemon),
                        "next",
                        clients,
                        max(1, total // 4 // clients),
                        lambda n: 0,
                    )
                )
            # Point reads of tasks that exist (the first pre-posted ones).
            for clients in (1, 16):
                rows.append(
                    run_workers(
                        worker_command(daemon),
                        "get",
                        clients,
                        max(1, total // 4 // clients),
                        lambda n: first,
                    )
                )
            for clients in (1, 16):
                rows.append(
                    run_workers(
                        worker_command(daemon),
                        "post",
                        clients,
                        max(1, total // 4 // clients),
                        lambda n: 0,
                    )
                )
                rows.append(
                    run_workers(
                        worker_command(daemon),
                        "list",
                        clients,
                        max(1, total // 8 // clients),
                        lambda n: 0,
                    )
                )
            wake = measure_wakeups(daemon, waiters=8, posts=50 if args.quick else 150)
            stats = writer_stats(daemon)
        finally:
            daemon.stop()
        if args.peers:
            peer_rows, peer_notes = measure_peers(workdir, counts, total)
            rows += peer_rows
        measure_baseline()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    rates = sorted(len(run) / (sum(run) / 1e6) for run in baseline_runs)
    base_rate = statistics.median(rates)
    base_p50 = statistics.median(statistics.median(run) for run in baseline_runs)
    own_p50 = statistics.median(own_txn)
    by = {(r.name, r.clients): r for r in rows}
    lines = [
        "# coordd benchmarks",
        "",
        f"Generated by `make bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        f"Machine: {machine()}.",
        "Clients are separate OS processes on the same machine, each doing sequential round trips",
        "with the blocking Python client; durability is the default (`synchronous=FULL`).",
        "",
        "**Baseline** (same run): one in-process Python loop doing the same conditional UPDATE",
        f"with one durable COMMIT per claim (WAL, synchronous=FULL): **{base_rate:,.0f} claims/s**,",
        f"p50 {fmt_us(base_p50)} us: the median of three runs (start, middle and end of this run:"
        f" {', '.join(f'{r:,.0f}' for r in rates)} claims/s).",
        f"The daemon's own claim transaction, in-process the same way (its schema: the row, three"
        f" index entries and the event row), has p50 {fmt_us(own_p50)} us.",
        "",
        "## Headline ratios",
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
    ]
    if ("claim", 16) in by:
        ratio = by[("claim", 16)].rate / base_rate
        lines.append(
            f"| 16 clients, durable claims/s / baseline claims/s | **{ratio:.2f}x** | >= 2.0x |"
        )
    if ("claim", 1) in by and ("ping", 1) in by:
        single = by[("claim", 1)].pct(0.5) / (by[("ping", 1)].pct(0.5) + base_p50)
        lines.append(
            f"| 1 client, claim p50 / (ping p50 + baseline p50) | **{single:.2f}x** | <= 1.2x |"
        )
        own = by[("claim", 1)].pct(0.5) / (by[("ping", 1)].pct(0.5) + own_p50)
        lines.append(
            f"| 1 client, claim p50 / (ping p50 + the daemon's own claim transaction p50) | {own:.2f}x | (what the daemon adds) |"
        )
    for peer in ("redis", "postgresql"):
        if ("claim", 16) in by and (f"{peer} claim", 16) in by:
            ratio = by[("claim", 16)].rate / by[(f"{peer} claim", 16)].rate
            lines.append(
                f"| 16 clients, coordd claims/s / {peer} claims/s | **{ratio:.2f}x** | >= 1.0x |"
            )
    lines.append(
        f"| writer transactions per contended claim (16 clients) | {extra['contended_transactions_per_claim']:.3f} | < 1 (group commit engages) |"
    )
    lines += [
        "",
        "## Throughput and latency",
        "",
        "| workload | clients | ops | ops/s | ratio to baseline claims/s | p50 us | p99 us | fairness (slowest/fastest client) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.clients} | {r.ops:,} | {r.rate:,.0f} | {r.rate / base_rate:.2f}x |"
            f" {fmt_us(r.pct(0.5))} | {fmt_us(r.pct(0.99))} | {r.spread:.2f} |"
        )
    lines += [
        "",
        f"Contended: 16 processes claimed the same {contended.ops // 16} ids; {contended.won} claims won"
        f" (exactly one per id: {contended.won == contended.ops // 16}).",
        f"Writer over the whole run: {stats['commands']:,} commands in {stats['transactions']:,} transactions"
        f" (largest group {stats['largest_group']}).",
        "",
        *(
            ["Peers (same client style, separate processes, sequential round trips):", ""]
            + [f"- {note}" for note in peer_notes]
            + [""]
            if peer_notes
            else [
                "Peers were not measured in this run (`make bench-peers` adds Redis and PostgreSQL).",
                "",
            ]
        ),
        "## Where the daemon's time goes",
        "",
        *(
            [
                "CPU per claim of each daemon thread while 16 clients claim (from /proc, same run):",
                "",
                "| thread | CPU us per claim |",
                "| --- | ---: |",
                *[f"| {name} | {value:,.0f} |" for name, value in thread_cpu_per_claim.items()],
                "",
            ]
            if thread_cpu_per_claim
            else ["(Per-thread CPU is measured in the 16-client claim run, on Linux.)", ""]
        ),
        "The writer's own claim code (the daemon's `claim_task`, 8 per transaction) measured"
        " in-process, with the interpreter to itself and beside a busy Python thread that"
        " alternates work and syscalls as the event loop does:",
        "",
        "| writer CPU per claim | us |",
        "| --- | ---: |",
        f"| alone | {gil_alone:,.0f} |",
        f"| beside a busy Python thread (GIL shared) | {gil_contended:,.0f} ({gil_contended / gil_alone:.1f}x) |",
        "",
        "See [docs/PERFORMANCE.md](docs/PERFORMANCE.md) for what these mean and what was tried.",
        "",
        "## Events, waiters, memory",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| wake-up latency, post -> 8 waiting processes, p50 | {fmt_us(wake.pct(0.5))} us |",
        f"| wake-up latency, p99 | {fmt_us(wake.pct(0.99))} us |",
        f"| memory per idle connection | {extra['bytes_per_idle_connection'] / 1024:,.1f} KiB |",
        f"| memory per subscription | {extra['bytes_per_subscription'] / 1024:,.1f} KiB |",
        f"| memory per idle task.wait | {extra['bytes_per_idle_waiter'] / 1024:,.1f} KiB |",
        f"| daemon CPU with 1,000 idle waiters | {extra['daemon_cpu_percent_with_idle_waiters']:.1f} % of a core |",
        f"| post latency with 1,000 non-matching waiters | {fmt_us(extra['post_us_with_idle_waiters'])} us |",
        "",
        "Absolute figures drift with the machine's load; compare ratios within one run.",
    ]
    text = "\n".join(lines) + "\n"
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
