"""Team mode in the bench: the same claim workload on one daemon on PostgreSQL, on two
daemons sharing that PostgreSQL, and through a bare psycopg loop on the same server.

The bare loop is the floor a team daemon is judged by: each client process holds its
own connection and runs the conditional `UPDATE ... WHERE id = %s AND state =
'pending'` in its own durable transaction (`bench/peer_worker.py`), so PostgreSQL's
own cost of a claim is all it pays. The three setups alternate round by round (the
machine is shared and noisy), and the headline is the median of the per-round ratios.
An SQLite daemon is measured once in the same window, for the table beside SQLite's.

Besides the rates, each run reads the CPU it cost: the PostgreSQL cluster's (the
postmaster with its live and finished backends) and the daemons', per claim. On a
machine with fewer cores than the setup has busy processes, CPU per claim says what
more cores would give where the rates cannot.

    python -m bench.team [--rounds N] [--claims N]    # this section alone, printed
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import (
    ROOT,
    Daemon,
    ids_from,
    post_tasks,
    run_workers,
    worker_command,
)
from bench.report import Result

CLIENTS = (1, 16)
ROUNDS = 3
FLOOR = "postgresql, bare psycopg loop"
ONE = "postgresql, 1 daemon"
TWO = "postgresql, 2 daemons"


def cluster_cpu_seconds(data_dir: Path) -> float:
    """The CPU the cluster has used: the postmaster, its finished backends (reaped into
    its children's times) and its live ones."""
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    with open(f"/proc/{postmaster}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    total = sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


class _Run:
    """One measured run: its result and the CPU per claim of the cluster and the daemons."""

    def __init__(self, result: Result, server_us: float, daemons_us: float) -> None:
        self.result = result
        self.server_us = server_us
        self.daemons_us = daemons_us


def _measured(data_dir: Path, daemons: list[Daemon], run: Callable[[], Result]) -> _Run:
    server, own = cluster_cpu_seconds(data_dir), sum(d.cpu_seconds() for d in daemons)
    result = run()
    server = cluster_cpu_seconds(data_dir) - server
    own = sum(d.cpu_seconds() for d in daemons) - own
    return _Run(result, server / result.ops * 1e6, own / result.ops * 1e6)


def _floor_runs(cluster: Any, data_dir: Path, total: int) -> dict[int, _Run]:
    from bench.peer_worker import prepare

    address = f"{cluster.address.rsplit('dbname=', 1)[0]}dbname=bench_floor"
    runs = {}
    for clients in CLIENTS:
        per = max(1, total // clients)
        prepare("postgresql", address, per * clients)
        command = [sys.executable, "-m", "bench.peer_worker", "postgresql", address]
        runs[clients] = _measured(
            data_dir,
            [],
            partial(
                run_workers, command, "claim", clients, per, ids_from(1, per),
                name=f"claim (team: {FLOOR})",
            ),
        )  # fmt: skip
    return runs


def _daemon_runs(
    workdir: Path, data_dir: Path, store: str, names: list[str], *, total: int, label: str
) -> dict[int, _Run]:
    daemons: list[Daemon] = []
    try:
        for name in names:
            daemons.append(Daemon(workdir, store=store, name=name))
        runs = {}
        for clients in CLIENTS:
            per = max(1, total // clients)
            first = post_tasks(daemons[0], per * clients)
            commands = [worker_command(d) for d in daemons]
            runs[clients] = _measured(
                data_dir,
                daemons,
                partial(
                    run_workers, commands, "claim", clients, per, ids_from(first, per),
                    name=label,
                ),
            )  # fmt: skip
        return runs
    finally:
        for daemon in daemons:
            daemon.stop()


def _median_run(runs: list[_Run]) -> _Run:
    return sorted(runs, key=lambda r: r.result.rate)[len(runs) // 2]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def measure_team(workdir: Path, total: int, rounds: int = ROUNDS) -> tuple[list[Result], list[str]]:
    """Rows `claim (team: ...)` at 1 and 16 clients (each setup's median round); notes
    give the per-round ratios and the CPU per claim, or say what was skipped and why."""
    sys.path.insert(0, str(ROOT / "tests"))
    from servers import PeerUnavailable, PostgresPeer

    (workdir / "team").mkdir(exist_ok=True)
    workdir.chmod(0o755)  # the `postgres` account must reach its data directory below
    try:
        cluster = PostgresPeer(workdir / "team")
    except PeerUnavailable as exc:
        return [], [f"team mode not measured: {exc}"]
    data_dir = cluster.directory / "data"
    runs: dict[tuple[str, int], list[_Run]] = {}
    load = os.getloadavg()[0]
    try:
        import psycopg

        with psycopg.connect(cluster.address, autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench_team")
            conn.execute("CREATE DATABASE bench_floor")
        store = cluster.url("bench_team")
        setups: dict[str, Callable[[int], dict[int, _Run]]] = {
            FLOOR: lambda n: _floor_runs(cluster, data_dir, total),
            ONE: lambda n: _daemon_runs(
                workdir, data_dir, store, [f"pg1r{n}"], total=total, label=f"claim (team: {ONE})"
            ),
            TWO: lambda n: _daemon_runs(
                workdir,
                data_dir,
                store,
                [f"pg2ar{n}", f"pg2br{n}"],
                total=total,
                label=f"claim (team: {TWO})",
            ),
        }
        order = list(setups)
        for n in range(rounds):
            for label in order[n % 3 :] + order[: n % 3]:  # each setup leads a round in turn
                for clients, run in setups[label](n).items():
                    runs.setdefault((label, clients), []).append(run)
        sqlite = Daemon(workdir, name="team-sqlite")
        try:
            for clients in CLIENTS:
                per = max(1, total // clients)
                first = post_tasks(sqlite, per * clients)
                result = run_workers(
                    worker_command(sqlite), "claim", clients, per, ids_from(first, per),
                    name="claim (team: sqlite)",
                )  # fmt: skip
                runs[("sqlite", clients)] = [_Run(result, float("nan"), float("nan"))]
        finally:
            sqlite.stop()
    finally:
        cluster.stop()
    load = max(load, os.getloadavg()[0])
    rows = [_median_run(r).result for r in runs.values()]
    notes = [f"team mode: PostgreSQL {cluster.settings}, on this machine's disk"]
    notes += _ratio_notes(runs, rounds, load)
    return rows, notes


def _median_cpu(runs: list[_Run], what: str) -> float:
    return float(statistics.median(getattr(run, what) for run in runs))


def _ratio_notes(runs: dict[tuple[str, int], list[_Run]], rounds: int, load: float) -> list[str]:
    notes = []
    for clients in CLIENTS:
        floor, one, two = (runs[(s, clients)] for s in (FLOOR, ONE, TWO))
        per_daemon = [o.result.rate / f.result.rate for o, f in zip(one, floor, strict=True)]
        scaling = [t.result.rate / o.result.rate for t, o in zip(two, one, strict=True)]
        cpu = ", ".join(
            f"{label} {_median_cpu(runs[(label, clients)], 'server_us'):.0f} us"
            + (f" + daemons {_median_cpu(runs[(label, clients)], 'daemons_us'):.0f} us")
            * (label != FLOOR)
            for label in (FLOOR, ONE, TWO)
        )
        notes.append(
            f"{clients} client(s), medians of {rounds} alternated rounds (range): 1 daemon /"
            f" bare psycopg loop {_spread(per_daemon)}; 2 daemons / 1 daemon {_spread(scaling)};"
            f" CPU per claim (PostgreSQL server, daemons): {cpu}"
        )
    notes.append(
        f"load average (1 min) during the team runs: up to {load:.1f} on {os.cpu_count()} cores"
    )
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--claims", type=int, default=4000, help="claims per run")
    args = parser.parse_args()
    from bench.report import team_lines

    with tempfile.TemporaryDirectory(prefix="coordd-bench-team-") as tmp:
        rows, notes = measure_team(Path(tmp), args.claims, args.rounds)
    by = {(r.name, r.clients): r for r in rows}
    print("\n".join(team_lines(by, notes)))


if __name__ == "__main__":
    main()
