"""Team mode in the bench: the same claim workload on SQLite, on one daemon on PostgreSQL,
and on two daemons sharing that PostgreSQL, in one run (issue: team mode)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench.harness import Daemon, ids_from, post_tasks, run_workers, worker_command
from bench.report import Result

CLIENTS = (1, 16)


def measure_team(workdir: Path, total: int) -> tuple[list[Result], list[str]]:
    """Rows `claim (team: ...)` at 1 and 16 clients; notes say what was skipped and why."""
    from servers import PeerUnavailable, PostgresPeer

    (workdir / "team").mkdir(exist_ok=True)
    workdir.chmod(0o755)  # the `postgres` account must reach its data directory below
    try:
        cluster = PostgresPeer(workdir / "team")
    except PeerUnavailable as exc:
        return [], [f"team mode not measured: {exc}"]
    rows: list[Result] = []
    try:
        import psycopg

        with psycopg.connect(cluster.address, autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench_team")
        store = cluster.url("bench_team")
        setups: dict[str, Callable[[], list[Daemon]]] = {
            "sqlite": lambda: [Daemon(workdir, name="team-sqlite")],
            "postgresql, 1 daemon": lambda: [Daemon(workdir, store=store, name="pg1")],
            "postgresql, 2 daemons": lambda: [
                Daemon(workdir, store=store, name="pg2a"),
                Daemon(workdir, store=store, name="pg2b"),
            ],
        }
        for label, start in setups.items():
            daemons = start()
            try:
                for clients in CLIENTS:
                    per = max(1, total // clients)
                    first = post_tasks(daemons[0], per * clients)
                    rows.append(
                        run_workers(
                            [worker_command(d) for d in daemons],
                            "claim",
                            clients,
                            per,
                            ids_from(first, per),
                            name=f"claim (team: {label})",
                        )
                    )
            finally:
                for daemon in daemons:
                    daemon.stop()
    finally:
        cluster.stop()
    return rows, [f"team mode: PostgreSQL {cluster.settings}, on this machine's disk"]
