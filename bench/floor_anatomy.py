"""The claim gap to the floor, taken apart: what coordd's rows cost, what its daemon adds.

    python -m bench.floor_anatomy [ROUNDS] [PER_CLIENT]

`make bench` reads coordd's 16-client claims against the bare floor (`bench/floor.py`)
and against the floor writing coordd's rows (`bench/floor_rows.py`). This runs more
servers side by side, each round all of them in turn (the order rotates, so drift
cancels), 16 clients claiming their own tasks on each: the bare floor; the floor
writing coordd's rows, whole and with parts taken away (the event, the two indexes a
claim moves an entry in); and coordd. For each: claims/s over the bare floor's and
over the floor writing coordd's rows in the same round (median and range), and CPU
per claim, the server's (`/proc/<pid>/stat`, all its threads) and the 16 client
processes' (`RUSAGE_CHILDREN`, their start and imports included), since the clients
and the server share the machine's cores. Then the claim's statement alone, whole and
cut down, in-process with no fsync (`statement_costs`): what its SQL costs in CPU.
docs/PERFORMANCE.md has a run.
"""

from __future__ import annotations

import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import floor
from bench.floor_rows import prepare_board
from bench.harness import (
    Daemon,
    floor_server,
    ids_from,
    post_tasks,
    process_cpu_seconds,
    run_workers,
    worker_command,
)
from coordd.store.claims import CLAIM_PENDING
from coordd.store.transaction import ROW_COLUMNS

CLIENTS = 16
BARE, ROWS = "the bare floor", "the floor writing coordd's rows"
#: The floor writing coordd's rows, whole and with parts left out: `bench.floor_rows` flags.
ROWS_VARIANTS: dict[str, list[str]] = {
    ROWS: [],
    "... without the event": ["--without-events"],
    "... without the event or the claim's two index entries": [
        "--without-events", "--without-index", "tasks_pending", "--without-index", "tasks_lease",
    ],
}  # fmt: skip


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Row:
    """One server's figures over the rounds."""

    def __init__(self) -> None:
        self.rates: list[float] = []
        self.server_us: list[float] = []
        self.client_us: list[float] = []

    def measure(self, pid: int, command: list[str], first: int, per: int) -> None:
        claims = CLIENTS * per
        server, clients = process_cpu_seconds(pid), children_cpu_s()
        done = run_workers(command, "claim", CLIENTS, per, ids_from(first, per))
        assert done.won == claims, f"{claims - done.won} of {claims} claims lost"
        self.server_us.append((process_cpu_seconds(pid) - server) / claims * 1e6)
        self.client_us.append((children_cpu_s() - clients) / claims * 1e6)
        self.rates.append(done.rate)


def measure(rounds: int, per: int) -> dict[str, Row]:
    rows = {name: Row() for name in [BARE, *ROWS_VARIANTS, "coordd"]}
    with tempfile.TemporaryDirectory(prefix="anatomy", dir="/tmp") as tmp:
        workdir = Path(tmp)
        board, board_first = prepare_board(workdir, "board", CLIENTS * per)
        daemon = Daemon(workdir)
        log = workdir / "floors.log"

        def bare(n: int) -> None:
            socket, db = workdir / f"floor{n}.sock", workdir / f"floor{n}.db"
            with floor_server("bench.floor", socket, str(db), str(CLIENTS * per), log=log) as s:
                command = [sys.executable, "-m", "bench.worker", str(socket)]
                rows[BARE].measure(s.pid, command, 1, per)

        def rows_floor(name: str) -> Callable[[int], None]:
            def run(n: int) -> None:
                socket, copy = workdir / f"rows{n}.sock", workdir / f"rows{n}.db"
                shutil.copy(board, copy)
                with floor_server("bench.floor_rows", socket, str(copy), *ROWS_VARIANTS[name],
                                  log=log) as server:  # fmt: skip
                    command = [sys.executable, "-m", "bench.worker", str(socket)]
                    rows[name].measure(server.pid, command, board_first, per)
                for path in workdir.glob(f"rows{n}.*"):  # the board copy, its WAL, the socket
                    path.unlink()

            return run

        def coordd(n: int) -> None:
            first = post_tasks(daemon, CLIENTS * per)
            rows["coordd"].measure(daemon.proc.pid, worker_command(daemon), first, per)

        servers = [bare, *(rows_floor(name) for name in ROWS_VARIANTS), coordd]
        try:
            for n in range(rounds):
                turn = n % len(servers)
                for serve in servers[turn:] + servers[:turn]:
                    serve(n)
        finally:
            daemon.stop()
    return rows


def table(rows: dict[str, Row]) -> str:
    def over(row: Row, base: str) -> str:
        ratios = [a / b for a, b in zip(row.rates, rows[base].rates, strict=True)]
        return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"

    lines = [
        "| server (16 clients claiming) | claims/s / the bare floor's (median, range)"
        " | / the rows floor's | server CPU per claim | client CPU per claim |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {over(row, BARE)} | {over(row, ROWS)}"
            f" | {statistics.median(row.server_us):.0f} us"
            f" | {statistics.median(row.client_us):.0f} us |"
        )
    return "\n".join(lines)


#: The claim's statement, whole and cut down, for `statement_costs`.
_CLAIM_SET = CLAIM_PENDING.split(" RETURNING ")[0]
_COLUMNS = ROW_COLUMNS.split(", json_object(")[0]
STATEMENTS: dict[str, tuple[str, bool]] = {  # name: (SQL, with the claim's index entries)
    "coordd's claim, no index entry, returning nothing": (_CLAIM_SET, False),
    "... returning the row's columns": (f"{_CLAIM_SET} RETURNING {_COLUMNS}", False),
    "... returning the columns and the task's JSON": (CLAIM_PENDING, False),
    "... and its two index entries (the whole claim, no event)": (CLAIM_PENDING, True),
}


def statement_costs(rounds: int, per: int) -> dict[str, float]:
    """CPU per claim of the claim's statement alone, in-process, `synchronous = OFF` (no
    fsync, so the statement's CPU, not the disk's): groups of 8 claims of tasks far
    apart (the 16 clients' ranges, as in `measure`), best of `rounds`; the bare floor's
    UPDATE on its own table first."""
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="statements", dir="/tmp") as tmp:
        workdir = Path(tmp)
        board, first = prepare_board(workdir, "board", CLIENTS * per)
        floor.prepare(str(workdir / "floor.db"), CLIENTS * per)
        cases = {"the bare floor's UPDATE": (floor.CLAIM, False), **STATEMENTS}
        for _ in range(rounds):
            for name, (sql, indexed) in cases.items():
                bare = sql is floor.CLAIM
                copy = shutil.copy(workdir / "floor.db" if bare else board, workdir / "copy.db")
                conn = sqlite3.connect(copy, isolation_level=None)
                conn.execute("PRAGMA synchronous = OFF")
                if not bare and not indexed:
                    conn.execute("DROP INDEX tasks_pending")
                    conn.execute("DROP INDEX tasks_lease")
                base = 1 if bare else first
                ids = [base + c * per + n for n in range(per) for c in range(CLIENTS)]
                now = "2026-12-06T00:00:00.000000Z"
                start = time.thread_time()
                for group in range(0, len(ids), 8):
                    conn.execute("BEGIN IMMEDIATE")
                    for task_id in ids[group : group + 8]:
                        args: tuple[object, ...] | dict[str, object] = (
                            ("a", task_id) if bare
                            else {"agent": "a", "now": now, "until": now, "id": task_id, "key": "k"}
                        )  # fmt: skip
                        conn.execute(sql, args).fetchall()
                    conn.execute("COMMIT")
                spent = (time.thread_time() - start) / len(ids) * 1e6
                best[name] = min(best.get(name, spent), spent)
                conn.close()
                for path in workdir.glob("copy.db*"):
                    path.unlink()
    return best


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 5
    per = int(argv[1]) if len(argv) > 1 else 600
    print(table(measure(rounds, per)))
    print()
    print("| the statement alone, in-process, no fsync | CPU per claim (best of rounds) |")
    print("| --- | ---: |")
    for name, spent in statement_costs(rounds, per).items():
        print(f"| {name} | {spent:.1f} us |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
