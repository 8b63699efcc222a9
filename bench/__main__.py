"""`make bench`: drive a real daemon with N client processes; compare to same-run baselines.

Results are ratios to baselines measured in the same run (the machines are
shared and noisy; absolute figures drift). Writes BENCHMARKS.md and prints it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.as_installed import measure as measure_as_installed
from bench.as_installed import over_target as agent_over_target
from bench.baselines import sqlite_commit_per_claim
from bench.boards import measure_board_finding
from bench.context import measure_context
from bench.diagnostics import (
    coordd_claim_transaction_latencies,
    cpu_per_op_by_role,
    thread_cpu_seconds,
    writer_claim_cost_with_and_without_gil_contention,
)
from bench.floor_rows import prepare_board
from bench.harness import (
    ROOT,
    Daemon,
    floor_server,
    ids_from,
    post_tasks,
    run_workers,
    won_every_claim,
    worker_command,
    writer_stats,
)
from bench.hosts import measure_hosts
from bench.idle import measure_idle_costs, measure_waiters, measure_wakeups
from bench.mcp import measure_mcp
from bench.mcp_start import measure_mcp_start
from bench.report import Measured, Result, fmt_us, machine, render_report
from bench.reservations import measure_guard_worst, measure_reservations
from bench.scale_report import carry_over
from bench.tab_wake import measure_tab_wake
from bench.team import measure_team

#: Rounds of the floor comparison: floor and coordd alternate, so drift cancels.
FLOOR_ROUNDS = 3


def measure_floor(
    workdir: Path, total: int, daemon: Daemon, extra: dict[str, float]
) -> list[Result]:
    """16 clients pinging and claiming against `bench/floor.py`, the bare design, claiming
    against `bench/floor_lean.py`, its UPDATE returning nothing, and `bench/floor_rows.py`,
    the bare design writing coordd's rows, and pinging and claiming against coordd,
    alternating round by round (floor, lean, rows, coordd, floor, ...).

    Each floor is fresh each round (the rows floor serves a fresh copy of one board
    coordd posted), and so is the board coordd claims from; the medians of the
    per-round ratios go to the headline (`extra`), and each side's median round is
    shown in the table.
    """
    per = max(1, total // 16)
    rates: dict[str, list[Result]] = {}
    board, board_first = prepare_board(workdir, "rows-board", per * 16)
    log = workdir / "floor.log"
    for round_number in range(FLOOR_ROUNDS):
        socket = workdir / f"floor{round_number}.sock"
        database = str(workdir / f"floor{round_number}.db")
        with floor_server("bench.floor", socket, database, str(per * 16), log=log):
            command = [sys.executable, "-m", "bench.worker", str(socket)]
            rates.setdefault("ping (floor)", []).append(
                run_workers(command, "ping", 16, per, lambda n: 0, name="ping (floor)")
            )
            claims = run_workers(command, "claim", 16, per, ids_from(1, per), name="claim (floor)")
            rates.setdefault("claim (floor)", []).append(won_every_claim(claims))
        socket = workdir / f"lean{round_number}.sock"
        database = str(workdir / f"lean{round_number}.db")
        with floor_server("bench.floor_lean", socket, database, str(per * 16), log=log):
            command = [sys.executable, "-m", "bench.worker", str(socket)]
            lean = run_workers(
                command, "claim-won", 16, per, ids_from(1, per), name="claim (lean floor)"
            )
            rates.setdefault("claim (lean floor)", []).append(won_every_claim(lean))
        socket = workdir / f"rows{round_number}.sock"
        copy = shutil.copy(board, workdir / f"rows{round_number}.db")
        with floor_server("bench.floor_rows", socket, str(copy), log=log):
            command = [sys.executable, "-m", "bench.worker", str(socket)]
            rows_run = run_workers(
                command, "claim", 16, per, ids_from(board_first, per), name="claim (rows floor)"
            )
            rates.setdefault("claim (rows floor)", []).append(won_every_claim(rows_run))
        first = post_tasks(daemon, per * 16)
        rates.setdefault("ping (vs floor)", []).append(
            run_workers(
                worker_command(daemon), "ping", 16, per, lambda n: 0, name="ping (vs floor)"
            )
        )
        claims = run_workers(
            worker_command(daemon), "claim", 16, per, ids_from(first, per), name="claim (vs floor)"
        )
        rates.setdefault("claim (vs floor)", []).append(won_every_claim(claims))

    def ratios(name: str, mine: str, theirs: str) -> None:
        each = [a.rate / b.rate for a, b in zip(rates[mine], rates[theirs], strict=True)]
        extra[name] = statistics.median(each)
        extra[f"{name}_min"] = min(each)
        extra[f"{name}_max"] = max(each)

    ratios("floor_ping_ratio", "ping (vs floor)", "ping (floor)")
    ratios("floor_claim_ratio", "claim (vs floor)", "claim (floor)")
    ratios("floor_lean_claim_ratio", "claim (vs floor)", "claim (lean floor)")
    ratios("floor_rows_claim_ratio", "claim (vs floor)", "claim (rows floor)")
    ratios("floor_rows_cost_ratio", "claim (rows floor)", "claim (floor)")
    return [sorted(runs, key=lambda r: r.rate)[len(runs) // 2] for runs in rates.values()]


def node_worker_command(daemon: Daemon) -> list[str] | None:
    """`node clients/ts/build-test/bench/worker.js`, built if the package's deps are in."""
    ts = ROOT / "clients" / "ts"
    node = shutil.which("node")
    if node is None or not (ts / "node_modules").exists():
        return None
    subprocess.run(["npm", "run", "--silent", "build:test"], cwd=ts, check=True)
    return [node, str(ts / "build-test" / "bench" / "worker.js"), str(daemon.socket)]


def measure_peers(workdir: Path, counts: list[int], total: int) -> tuple[list[Result], list[str]]:
    """Run the same client style against Redis and PostgreSQL; skip a peer that cannot start."""
    from bench import peer_worker
    from bench.peers import PEERS
    from servers import PeerUnavailable

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
                    command, "claim", clients, per, ids_from(next_id, per),
                    name=f"{peer.name} claim",
                )  # fmt: skip
                assert result.won == result.ops, f"{peer.name}: a claim on a fresh id lost"
                rows.append(result)
                next_id += per * clients
            notes.append(f"{peer.name}: {peer.settings}")
        finally:
            peer.stop()
    return rows, notes


def peers_only(output: Path, quick: bool) -> int:
    """`python -m bench --peers-only`: the peers' sections alone, from one run: the agent
    tools beside coordd (bench/agent_peers.py), the CLI peer (bench/cli_peers.py) and
    the floor rows (Redis, PostgreSQL: 16 clients claiming tasks of their own)."""
    from bench.agent_peers import measure as measure_agent_peers
    from bench.agent_peers import render
    from bench.cli_peers import measure as measure_cli_peers
    from bench.report import cli_peer_lines

    started = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="cb", dir="/tmp"))
    try:
        runs = measure_agent_peers(workdir)
        extra = measure_cli_peers(rounds=2 if quick else 3)
        floor_rows, floor_notes = measure_peers(workdir, [16], 3000 if quick else 8000)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    lines = [
        "# coordd and its peers",
        "",
        f"Generated by `python -m bench --peers-only` on"
        f" {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} in"
        f" {(time.time() - started) / 60:.0f} min. Machine: {machine()}.",
        "",
        *render(runs, extra),
        *cli_peer_lines(extra),
        "## Floor rows (16 clients, each claiming tasks of its own)",
        "",
        "| server | claims/s | p50 us | p99 us |",
        "| --- | ---: | ---: | ---: |",
        *[
            f"| {r.name} | {r.rate:,.0f} | {fmt_us(r.pct(0.5))} | {fmt_us(r.pct(0.99))} |"
            for r in floor_rows
            if r.clients == 16
        ],
        "",
        *[f"- {note}" for note in floor_notes],
        "",
    ]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines))
    # The figures themselves, to render again without a run (the tables round them).
    raw = {"agent_peers": [dataclasses.asdict(run) for run in runs], "cli_peers": extra}
    output.with_suffix(".json").write_text(json.dumps(raw, indent=1))
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--clients", default="1,4,16,64", help="comma-separated client counts")
    parser.add_argument(
        "--claims", type=int, default=24000, help="claims per run (split across clients)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer operations (smoke run)")
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also measure the peers: the agent tools from PyPI, Redis and PostgreSQL"
        " (make bench-peers)",
    )
    parser.add_argument(
        "--peers-only",
        action="store_true",
        help="measure only the peers, beside coordd, and write only their sections"
        " (default output: bench/results/peers.md)",
    )
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.peers_only:
        return peers_only(args.output or ROOT / "bench" / "results" / "peers.md", args.quick)
    args.output = args.output or ROOT / "BENCHMARKS.md"
    counts = [int(x) for x in args.clients.split(",")]
    total = 3000 if args.quick else args.claims
    workdir = Path(tempfile.mkdtemp(prefix="cb", dir="/tmp"))
    rows: list[Result] = []
    thread_cpu_per_claim: dict[str, float] = {}
    peer_notes: list[str] = []
    team_notes: list[str] = []
    extra: dict[str, float] = {}
    agent_peers: list[Any] = []
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
                    ids_from(start_id, per),
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
            # The floor, in the same window as coordd's 16-client runs just above.
            rows += measure_floor(workdir, total, daemon, extra)
            node_worker = node_worker_command(daemon)
            if node_worker is not None:  # the TypeScript client, next to the Python one
                node_per = max(1, total // 16)
                node_first = post_tasks(daemon, node_per * 16)
                rows.append(
                    run_workers(
                        node_worker,
                        "claim",
                        16,
                        node_per,
                        ids_from(node_first, node_per),
                        name="claim (TS client)",
                    )
                )
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
            sizes = (10, 2_000) if args.quick else (10, 100_000)
            extra.update(measure_reservations(daemon.socket, sizes))
            extra.update(measure_guard_worst(daemon.socket, 2_000 if args.quick else 10_000))
            extra.update(measure_mcp(daemon.socket, claims=100 if args.quick else 300))
            extra.update(measure_mcp_start(rounds=3 if args.quick else 9))
            # Hooks and everyday commands as installed (a wheel in a fresh venv, through the
            # command lines setup registers), on boards of their own: 1,000 and 10,000 tasks.
            agent = measure_as_installed(runs=9 if args.quick else 21)
            extra.update(agent)
            extra["hook_ratios_over_target"] = float(len(agent_over_target(agent)))
            extra.update(measure_board_finding(daemon.socket, runs=9 if args.quick else 21))
            extra.update(measure_tab_wake(daemon.socket, rounds=4 if args.quick else 10))
            extra.update(measure_hosts(runs=3 if args.quick else 7))
            stats = writer_stats(daemon)
        finally:
            daemon.stop()
        extra.update(measure_context(workdir, (10, 1_000) if args.quick else (10, 1_000, 100_000)))
        team_rows, team_notes = measure_team(workdir, min(total, 4000))
        rows += team_rows
        if args.peers:
            peer_rows, peer_notes = measure_peers(workdir, counts, total)
            from bench.agent_peers import measure as measure_agent_peers
            from bench.cli_peers import measure as measure_cli_peers

            agent_peers = measure_agent_peers(workdir)
            extra.update(measure_cli_peers(rounds=3 if args.quick else 5))
            rows += peer_rows
        measure_baseline()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    text = render_report(
        Measured(
            rows=rows,
            baseline_runs=baseline_runs,
            own_txn=own_txn,
            extra=extra,
            contended=contended,
            stats=stats,
            peer_notes=peer_notes,
            thread_cpu_per_claim=thread_cpu_per_claim,
            gil_alone=gil_alone,
            gil_contended=gil_contended,
            wake=wake,
            team_notes=team_notes,
            agent_peers=agent_peers,
        )
    )
    # `make bench-scale`'s section of the file is its own: carried over, not dropped.
    text = carry_over(args.output, text)
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
