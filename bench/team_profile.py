"""Where a team-mode claim's time goes: the writer's group on PostgreSQL, in-process.

    python -m bench.team_profile [--groups N]

Runs the daemon's own `claim_task` in groups of 1, 8 and 16 through
`PostgresWriteStore` and `run_transaction` (what the writer thread runs) on a
throwaway cluster, and for each group size reports, per group: the round trips
(statements sent to the server, counted at psycopg's `Connection.execute`), the
time the team's lock is held (from the lock statement's answer to COMMIT's:
the write lock is granted during the first round trip and released by COMMIT,
so this is the hold less part of one round trip), the part of it spent waiting
on the server, and the Python between. Each figure is a median over `--groups`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=200)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    import psycopg

    from coordd.store import claims, writes
    from coordd.store.group import run_each
    from coordd.store.postgres.writer import PostgresWriteStore
    from coordd_wire import params as P
    from servers import PostgresPeer

    waits: list[float] = []
    calls = [0]
    execute = psycopg.Connection.execute

    def counted(self: Any, *a: Any, **k: Any) -> Any:
        calls[0] += 1
        start = time.perf_counter()
        try:
            return execute(self, *a, **k)
        finally:
            waits.append(time.perf_counter() - start)

    with tempfile.TemporaryDirectory(prefix="coordd-team-profile-") as tmp:
        workdir = Path(tmp)
        workdir.chmod(0o755)
        cluster = PostgresPeer(workdir)
        try:
            with psycopg.connect(cluster.address, autocommit=True) as conn:
                conn.execute("CREATE DATABASE profile")
            store = PostgresWriteStore(cluster.url("profile"), "profile")
            store.open()
            sizes = (1, 8, 16)
            total = args.groups * sum(sizes)
            seen: dict[str, Any] = {}
            for start in range(0, total, 500):
                chunk = range(start, min(total, start + 500))
                posts = [P.PostParams(title=f"t{n}", body="x" * 200) for n in chunk]
                run_each(store, writes.post_task, posts, seen)
            psycopg.Connection.execute = counted  # type: ignore[method-assign]
            next_id = 1
            print(
                "| claims per group | round trips | lock held, us | of it on the server, us"
                " | Python, us | lock held per claim, us |"
            )
            print("| ---: | ---: | ---: | ---: | ---: | ---: |")
            for size in sizes:
                rows = []
                for _ in range(args.groups):
                    ids = range(next_id, next_id + size)
                    next_id += size
                    calls[0] = 0
                    waits.clear()
                    begin = time.perf_counter()
                    run_each(
                        store,
                        claims.claim_task,
                        [P.ClaimParams(id=i, agent=f"a{i % 16}") for i in ids],
                        seen,
                    )
                    held = time.perf_counter() - begin - waits[0]  # from the lock's answer
                    rows.append((calls[0], held, sum(waits[1:]), held - sum(waits[1:])))
                columns = zip(*rows, strict=True)
                trips, held, server, python = (statistics.median(c) for c in columns)
                print(
                    f"| {size} | {trips:.0f} | {held * 1e6:,.0f} | {server * 1e6:,.0f}"
                    f" | {python * 1e6:,.0f} | {held / size * 1e6:,.0f} |"
                )
            psycopg.Connection.execute = execute  # type: ignore[method-assign]
            store.close()
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
