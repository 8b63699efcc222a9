"""Where the CPU of a 16-client claim run goes, against the floor and against coordd.

    python -m bench.floor_cpu [ROUNDS] [PER_CLIENT]

The floor ratio (`make bench`, `measure_floor`) says how much slower coordd's claims
are than the bare design's; this says why, in CPU per claim of each process, since
the 16 client processes and the server share the machine's cores. Each round runs
a fresh floor and then coordd (one daemon for all rounds, fresh tasks each round),
16 clients claiming their own tasks: the server's CPU from `/proc/<pid>/stat`, the
clients' from `RUSAGE_CHILDREN` (their start and imports included), claims/s.
docs/PERFORMANCE.md has a run.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.harness import Daemon, ids_from, post_tasks, run_workers, worker_command

CLIENTS = 16


def process_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


Figures = dict[str, list[float]]


def note(figures: Figures, name: str, value: float) -> None:
    figures.setdefault(name, []).append(round(value, 1))


def floor_round(workdir: Path, n: int, per: int, figures: Figures) -> None:
    claims = CLIENTS * per
    socket, db = workdir / f"floor{n}.sock", workdir / f"floor{n}.db"
    floor = subprocess.Popen(
        [sys.executable, "-m", "bench.floor", str(socket), str(db), str(claims)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert floor.stdout is not None and floor.stdout.readline().strip() == "ready"
        server, clients = process_cpu_s(floor.pid), children_cpu_s()
        command = [sys.executable, "-m", "bench.worker", str(socket)]
        done = run_workers(command, "claim", CLIENTS, per, ids_from(1, per))
        note(figures, "floor server us/claim", (process_cpu_s(floor.pid) - server) / claims * 1e6)
        note(figures, "floor client us/claim", (children_cpu_s() - clients) / claims * 1e6)
        note(figures, "floor claims/s", done.rate)
    finally:
        floor.terminate()
        floor.communicate(timeout=30)


def coordd_round(daemon: Daemon, per: int, figures: Figures) -> None:
    claims = CLIENTS * per
    first = post_tasks(daemon, claims)
    server, clients = daemon.cpu_seconds(), children_cpu_s()
    done = run_workers(worker_command(daemon), "claim", CLIENTS, per, ids_from(first, per))
    note(figures, "coordd server us/claim", (daemon.cpu_seconds() - server) / claims * 1e6)
    note(figures, "coordd client us/claim", (children_cpu_s() - clients) / claims * 1e6)
    note(figures, "coordd claims/s", done.rate)


def measure(rounds: int, per: int) -> Figures:
    figures: Figures = {}
    with tempfile.TemporaryDirectory(prefix="cfc", dir="/tmp") as tmp:
        daemon = Daemon(Path(tmp))
        try:
            for n in range(rounds):
                floor_round(Path(tmp), n, per, figures)
                coordd_round(daemon, per, figures)
        finally:
            daemon.stop()
    return figures


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 3
    per = int(argv[1]) if len(argv) > 1 else 600
    print(json.dumps(measure(rounds, per), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
