"""In-process SQLite baselines, measured in the same run as the daemon.

The baseline for durable claims is what a careful single process would do
without a daemon: WAL, synchronous=FULL, the same conditional UPDATE, one
COMMIT (one fsync) per claim.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path


def sqlite_commit_per_claim(path: Path, claims: int, synchronous: str = "FULL") -> list[float]:
    """Latency in microseconds of each durable claim, run sequentially in this process."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, state TEXT NOT NULL, claimed_by TEXT,"
        " claimed_at TEXT, lease_expires_at TEXT, fence INTEGER NOT NULL DEFAULT 0)"
    )
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO tasks (id, state) VALUES (?, 'pending')", ((i,) for i in range(1, claims + 1))
    )
    conn.execute("COMMIT")
    latencies = []
    clock = time.perf_counter
    for task_id in range(1, claims + 1):
        start = clock()
        conn.execute("BEGIN IMMEDIATE")
        cursor = conn.execute(
            "UPDATE tasks SET state = 'claimed', claimed_by = ?, claimed_at = ?,"
            " lease_expires_at = ?, fence = fence + 1 WHERE id = ? AND state = 'pending'",
            ("bench", "2026-11-30T00:00:00.000000Z", "2026-11-30T00:10:00.000000Z", task_id),
        )
        assert cursor.rowcount == 1
        conn.execute("COMMIT")
        latencies.append((clock() - start) * 1e6)
    conn.close()
    return latencies
