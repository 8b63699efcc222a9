"""The claim gap to the floor, taken apart: what coordd's rows cost, what its daemon adds.

    python -m bench.floor_anatomy [ROUNDS] [PER_CLIENT]

`make bench` reads coordd's 16-client claims against the bare floor (`bench/floor.py`),
the leanest floor (`bench/floor_lean.py`) and the floor writing coordd's rows
(`bench/floor_rows.py`). This runs more servers side by side, each round all of them in
turn (the order rotates, so drift cancels), 16 clients claiming their own tasks on
each: the bare floor; the leanest floor (the bare UPDATE returning nothing, answering
only `won`); the floor writing coordd's rows, whole and with parts taken away (the
event, the two indexes a claim moves an entry in); and coordd. For each: claims/s over
the bare floor's, the leanest floor's and the floor writing coordd's rows in the same
round (median and range), and CPU per claim, the server's (`/proc/<pid>/stat`, all its
threads) and the 16 client processes' (`RUSAGE_CHILDREN`, their start and imports
included), since the clients and the server share the machine's cores. Then the
claim's statement alone, whole and cut down, in-process with no fsync
(`statement_costs`): what its SQL costs in CPU.
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
from typing import NamedTuple

from bench import floor
from bench.floor_rows import prepare_board
from bench.harness import (
    Daemon,
    floor_server,
    ids_from,
    post_tasks,
    process_cpu_seconds,
    run_workers,
    won_every_claim,
    worker_command,
)
from coordd.store.claims import CLAIM_PENDING
from coordd.store.transaction import ROW_COLUMNS

CLIENTS = 16
BARE, ROWS = "the bare floor", "the floor writing coordd's rows"
LEAN = "the leanest floor (the bare UPDATE returning nothing, answering only `won`)"
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

    def measure(
        self, pid: int, command: list[str], first: int, per: int, mode: str = "claim"
    ) -> None:
        claims = CLIENTS * per
        server, clients = process_cpu_seconds(pid), children_cpu_s()
        done = won_every_claim(run_workers(command, mode, CLIENTS, per, ids_from(first, per)))
        self.server_us.append((process_cpu_seconds(pid) - server) / claims * 1e6)
        self.client_us.append((children_cpu_s() - clients) / claims * 1e6)
        self.rates.append(done.rate)


def measure(rounds: int, per: int) -> dict[str, Row]:
    rows = {name: Row() for name in [BARE, LEAN, *ROWS_VARIANTS, "coordd"]}
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

        def lean(n: int) -> None:
            socket, db = workdir / f"lean{n}.sock", workdir / f"lean{n}.db"
            with floor_server("bench.floor_lean", socket, str(db), str(CLIENTS * per),
                              log=log) as server:  # fmt: skip
                command = [sys.executable, "-m", "bench.worker", str(socket)]
                rows[LEAN].measure(server.pid, command, 1, per, "claim-won")

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

        servers = [bare, lean, *(rows_floor(name) for name in ROWS_VARIANTS), coordd]
        try:
            for n in range(rounds):
                turn = n % len(servers)
                for serve in servers[turn:] + servers[:turn]:
                    serve(n)
        finally:
            daemon.stop()
    return rows


def spread(figures: list[float]) -> str:
    return f"{statistics.median(figures):.0f} us ({min(figures):.0f}-{max(figures):.0f})"


def table(rows: dict[str, Row]) -> str:
    def over(row: Row, base: str) -> str:
        ratios = [a / b for a, b in zip(row.rates, rows[base].rates, strict=True)]
        return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"

    lines = [
        "| server (16 clients claiming) | claims/s / the bare floor's (median, range)"
        " | / the leanest floor's | / the rows floor's | server CPU per claim (median, range)"
        " | client CPU per claim |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {over(row, BARE)} | {over(row, LEAN)} | {over(row, ROWS)}"
            f" | {spread(row.server_us)} | {statistics.median(row.client_us):.0f} us |"
        )
    return "\n".join(lines)


def _before(text: str, marker: str) -> str:
    """`text` up to `marker`, which must be in it: a statement changed so that a cut no
    longer applies fails here, not with a figure of something else."""
    return text[: text.index(marker)]


class Statement(NamedTuple):
    sql: str
    on_the_floors_table: bool = False
    #: With the claim's two index entries (`tasks_pending`, `tasks_lease`).
    indexed: bool = False


#: The bare floor's UPDATE and coordd's claim, whole and cut down, for `statement_costs`.
STATEMENTS: dict[str, Statement] = {
    "the bare floor's UPDATE, returning nothing": Statement(
        _before(floor.CLAIM, " RETURNING "), on_the_floors_table=True
    ),
    "... returning its task's JSON (the bare floor's claim)": Statement(
        floor.CLAIM, on_the_floors_table=True
    ),
    "coordd's claim, no index entry, returning nothing": Statement(
        _before(CLAIM_PENDING, " RETURNING ")
    ),
    "... returning the row's columns": Statement(
        _before(CLAIM_PENDING, " RETURNING ")
        + " RETURNING "
        + _before(ROW_COLUMNS, ", json_object(")
    ),
    "... returning the columns and the task's JSON": Statement(CLAIM_PENDING),
    "... and its two index entries (coordd's claim, no event)": Statement(
        CLAIM_PENDING, indexed=True
    ),
}


def statement_costs(rounds: int, per: int) -> dict[str, float]:
    """CPU per claim of each of `STATEMENTS` in-process, with its share of the group's
    BEGIN and COMMIT (`synchronous = OFF`: the WAL's writes and SQLite's automatic
    checkpoints, no fsync), so what the SQL costs the writer, not the disk: groups of 8
    claims of tasks far apart (the 16 clients' ranges, as in `measure`), best of
    `rounds`."""
    best: dict[str, float] = {}
    now = "2026-12-06T00:00:00.000000Z"
    with tempfile.TemporaryDirectory(prefix="statements", dir="/tmp") as tmp:
        workdir = Path(tmp)
        board, first = prepare_board(workdir, "board", CLIENTS * per)
        floor.prepare(str(workdir / "floor.db"), CLIENTS * per)
        for _ in range(rounds):
            for name, statement in STATEMENTS.items():
                bare = statement.on_the_floors_table
                copy = shutil.copy(workdir / "floor.db" if bare else board, workdir / "copy.db")
                conn = sqlite3.connect(copy, isolation_level=None)
                conn.execute("PRAGMA synchronous = OFF")
                if not bare and not statement.indexed:
                    conn.execute("DROP INDEX tasks_pending")
                    conn.execute("DROP INDEX tasks_lease")
                base = 1 if bare else first
                ids = [base + c * per + n for n in range(per) for c in range(CLIENTS)]
                start = time.thread_time()
                for group in range(0, len(ids), 8):
                    conn.execute("BEGIN IMMEDIATE")
                    for task_id in ids[group : group + 8]:
                        args: tuple[object, ...] | dict[str, object] = (
                            ("a", task_id) if bare
                            else {"agent": "a", "now": now, "until": now, "id": task_id, "key": "k"}
                        )  # fmt: skip
                        conn.execute(statement.sql, args).fetchall()
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
    print("| in-process: the statement, its share of an unsynced commit | CPU per claim (best) |")
    print("| --- | ---: |")
    for name, spent in statement_costs(rounds, per).items():
        print(f"| {name} | {spent:.1f} us |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
