"""The bench's in-process diagnostics still run against today's store (tiny counts).

`make bench` is not part of the suite (it takes minutes and its figures are
not asserted), so without this a refactor of the store can break it unseen.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from bench.baselines import sqlite_commit_per_claim
from bench.diagnostics import (
    coordd_claim_transaction_latencies,
    writer_claim_cost_with_and_without_gil_contention,
)

from coordd_client import Client


def test_the_bench_diagnostics_run(tmp_path: Path) -> None:
    latencies = coordd_claim_transaction_latencies(tmp_path / "own.db", 5)
    assert len(latencies) == 5 and all(t > 0 for t in latencies)
    alone, contended = writer_claim_cost_with_and_without_gil_contention(
        tmp_path / "gil.db", count=16
    )
    # CPU time this short may round to 0; what matters is that it ran to the end.
    assert math.isnan(alone) or (alone >= 0 and contended >= 0)
    assert len(sqlite_commit_per_claim(tmp_path / "base.db", 5)) == 5


def test_the_floor_answers_the_bench_workers_as_coordd_does(workdir: Path) -> None:
    """`bench/floor.py` speaks enough of the protocol for the same client processes."""
    socket, db = workdir / "floor.sock", workdir / "floor.db"
    floor = subprocess.Popen(
        [sys.executable, "-m", "bench.floor", str(socket), str(db), "3"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert floor.stdout is not None and floor.stdout.readline().strip() == "ready"
        with Client(socket) as client:
            assert client.ping().pong
            assert client.server_info().protocol == 1
            first = client.claim(2, "a")
            assert first.won and (first.task.claimed_by, first.task.fence) == ("a", 1)
            second = client.claim(2, "b")
            assert not second.won and second.task.claimed_by == "a"
    finally:
        floor.terminate()
        floor.communicate(timeout=10)
