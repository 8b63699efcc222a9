"""The bench's in-process diagnostics still run against today's store (tiny counts).

`make bench` is not part of the suite (it takes minutes and its figures are
not asserted), so without this a refactor of the store can break it unseen.
"""

from __future__ import annotations

import math
from pathlib import Path

from bench.baselines import sqlite_commit_per_claim
from bench.diagnostics import (
    coordd_claim_transaction_latencies,
    writer_claim_cost_with_and_without_gil_contention,
)


def test_the_bench_diagnostics_run(tmp_path: Path) -> None:
    latencies = coordd_claim_transaction_latencies(tmp_path / "own.db", 5)
    assert len(latencies) == 5 and all(t > 0 for t in latencies)
    alone, contended = writer_claim_cost_with_and_without_gil_contention(
        tmp_path / "gil.db", count=16
    )
    # CPU time this short may round to 0; what matters is that it ran to the end.
    assert math.isnan(alone) or (alone >= 0 and contended >= 0)
    assert len(sqlite_commit_per_claim(tmp_path / "base.db", 5)) == 5
